//! Filling a [`Model`] n-gram by n-gram, for the readers of model files (ARPA, KenLM's binary
//! files): insertion into the order tables, growth past a size hint, and KenLM's "blank" entries
//! for missing suffixes.

use crate::ngram::keys::{key_prefix, key_word, pack, NONE};
use crate::ngram::probing::{Entry, ProbingTable};

use super::Model;

impl Model {
    /// Inserts the n-gram `(prefix, w)` of order `m >= 2` (`prefix` the entry of its first m-1
    /// words) with ln p `logp` and ln weight `weight` (ignored on the highest order); false if it
    /// was already there. The table grows when full, renumbering the entries of order `m` and
    /// the keys of the orders above (look entries up again after an insertion).
    pub fn insert_ngram(&mut self, m: usize, prefix: u32, w: u32, logp: f64, weight: f64) -> bool {
        let key = pack(prefix, w);
        if self.higher[m - 2].table.find(key).is_some() {
            return false;
        }
        if !self.higher[m - 2].table.has_room() {
            self.grow_order(m);
        }
        let weight = if m < self.order { weight } else { 0.0 };
        self.higher[m - 2].table.insert(key, Entry { logp, weight });
        true
    }

    /// Gives order `m` twice the room (entries went beyond the size hint): its entries move to
    /// new slots, so the keys of every higher order are renumbered too (those with a table yet:
    /// a reader adds the tables order by order).
    fn grow_order(&mut self, m: usize) {
        let mut renumber: Option<Vec<u32>> = None;
        for k in m..=self.higher.len() + 1 {
            let old = &self.higher[k - 2].table;
            let entries = if k == m { old.len() * 2 + 1 } else { old.len() };
            let mut table = ProbingTable::with_entries(entries);
            let mut slots = vec![NONE; old.capacity()];
            for (slot, key, entry) in old.iter() {
                let prefix = match &renumber {
                    None => key_prefix(key),
                    Some(r) => r[key_prefix(key) as usize],
                };
                slots[slot as usize] = table.insert(pack(prefix, key_word(key)), *entry);
            }
            self.higher[k - 2].table = table;
            renumber = Some(slots);
        }
    }

    /// The entry of the n-gram `ids` (every id a unigram), inserting a "blank" entry for it and
    /// its missing prefixes and suffixes as KenLM does for suffixes (`lm/search_hashed.cc`
    /// FindLower/AdjustLower): probability by backing off, backoff 0. Readers call it on the
    /// suffix of each n-gram read (a prefix of a suffix is a suffix of the prefix, which is
    /// already stored, or itself a missing suffix).
    ///
    /// A blank whose probability by backing off is above 1 (a file whose backoff weights are
    /// positive enough for that: not a probability model) is refused: `Err` gives its ln
    /// probability, and nothing is inserted.
    pub fn ensure_ngram(&mut self, ids: &[u32]) -> Result<u32, f64> {
        let m = ids.len();
        if m == 1 {
            return Ok(ids[0]);
        }
        if let Some(e) = self.find(ids) {
            return Ok(e);
        }
        self.ensure_ngram(&ids[..m - 1])?;
        if m >= 3 {
            self.ensure_ngram(&ids[1..])?;
        }
        // inserting the suffix may have moved the prefix: look it up again
        let prefix = self.find(&ids[..m - 1]).unwrap_or(NONE);
        let mut state = self.state_after(&ids[..m - 1]);
        let logp = self.score(&mut state, ids[m - 1]);
        if logp > 0.0 {
            return Err(logp);
        }
        self.insert_ngram(m, prefix, ids[m - 1], logp, 0.0);
        Ok(self.find(ids).unwrap_or(NONE))
    }
}
