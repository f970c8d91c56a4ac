//! Scoring a batch of sentences with a [`Model`] one order at a time: the same numbers as
//! [`Model::score_full`] token after token, with the lookups of each order independent of one
//! another.
//!
//! Token after token, the keys of a token's lookups are the entries its previous token found, so
//! each lookup waits for a miss of the one before (interleaving sentences overlaps a few of them:
//! [`crate::model::interleaved`]). But the n-gram of order m ending at position p is keyed by the
//! (m-1)-gram ending at p-1, whatever the orders above: once every position's entries of order
//! m-1 are known, the lookups of order m for all positions of the batch are independent. A pass
//! takes them in position order and starts loading the slots of the lookup `AHEAD` further
//! (both cache lines its probe usually reads:
//! [`ProbingTable::prefetch_slot`](crate::ngram::probing::ProbingTable::prefetch_slot)), so that
//! many misses are in flight at once. On lmplz's Gutenberg 5-gram this scores 2.3x
//! `query` per core on an Intel Xeon host (`benches/MEASUREMENTS.md`, "What bounds 5-gram
//! scoring"). The lookups used to be sorted by home slot first, to read each table front to
//! back: with one cache line prefetched, on an AMD EPYC host, the sort gained up to 18 %
//! (5.15-5.78 M tokens/s against 4.90-5.12); with two lines, on the Intel host, it cost 19 %
//! (its own work and its scattered writes to the position arrays outweigh the order).
//!
//! The pass of order m looks up position p only where [`Model::score_full`] would: when p's
//! longest match so far has order m-1 (the token-by-token loop stops at the first miss) and its
//! context reaches that far. The final sum adds the same terms in the same order, so every
//! score is bit-identical to the token-by-token one.

use crate::corpus::vocab::{BOS, EOS};
use crate::model::{Fallback, Model};
use crate::ngram::keys::{pack, NONE};

/// Lookups prefetched ahead of the one being done.
const AHEAD: usize = 16;

/// Most tokens (`</s>` included) a batch holds: the per-position arrays of all orders of one
/// batch (about 10 bytes per order and position) then stay in the core's cache.
pub const MAX_TOKENS: usize = 1 << 15;

/// One lookup of a pass: a key, its home slot, and the position it is for.
#[derive(Clone, Copy)]
struct Lookup {
    home: u32,
    p: u32,
    key: u64,
}

/// The positions of a batch and what the passes found for them.
struct Positions<'a> {
    model: &'a Model,
    /// Number of positions (tokens and `</s>`).
    len: usize,
    /// The word at each position.
    word: Vec<u32>,
    /// Whether the position starts its sentence (its context is `<s>` or nothing).
    first: Vec<bool>,
    /// Context tokens available at each position (at most N-1).
    context: Vec<u8>,
    /// Order of the longest stored n-gram found ending at each position.
    found: Vec<u8>,
    /// ln p of that n-gram.
    logp: Vec<f64>,
    /// Entry of the n-gram of order m ending at each position, for orders 2..=N-1, at
    /// `(m - 2) * len + p` ([`NONE`] above `found`).
    entry: Vec<u32>,
    /// Its ln weight as a context, at the same index.
    weight: Vec<f64>,
}

impl<'a> Positions<'a> {
    /// The positions of the sentences `ids[ends[i-1]..ends[i]]`, with `</s>` after each when
    /// the model has markers; unigrams found.
    fn new(model: &'a Model, ids: &[u32], ends: &[usize]) -> Self {
        let keep = model.order - 1;
        let per_sentence = usize::from(model.bos_eos);
        let start_context = usize::from(model.bos_eos && keep > 0);
        let len = ids.len() + per_sentence * ends.len();
        let mut word = Vec::with_capacity(len);
        let mut first = Vec::with_capacity(len);
        let mut context = Vec::with_capacity(len);
        let eos = model.bos_eos.then_some(EOS);
        let mut start = 0;
        for &end in ends {
            for (k, w) in ids[start..end].iter().copied().chain(eos).enumerate() {
                word.push(w);
                first.push(k == 0);
                // (orders are at most MAX_ORDER = 64)
                context.push((k + start_context).min(keep) as u8);
            }
            start = end;
        }
        let logp = word
            .iter()
            .map(|&w| model.unigram_logp[w as usize])
            .collect();
        let stored = keep.saturating_sub(1) * len;
        Positions {
            model,
            len,
            found: vec![1; len],
            logp,
            entry: vec![NONE; stored],
            weight: vec![0.0; stored],
            word,
            first,
            context,
        }
    }

    /// The entry of the n-gram of order `m` ending just before position `p`: the context of
    /// order `m` of `p` (only asked for `m` up to `p`'s context length).
    #[inline]
    fn context_entry(&self, m: usize, p: usize) -> u32 {
        if self.first[p] {
            BOS // (a sentence's first position has `<s>` as its only context)
        } else if m == 1 {
            self.word[p - 1]
        } else {
            self.entry[(m - 2) * self.len + p - 1]
        }
    }

    /// ln weight of the context of order `m` of position `p` (as [`Model::weight`]).
    #[inline]
    fn context_weight(&self, m: usize, p: usize) -> f64 {
        let e = self.context_entry(m, p);
        if e == NONE {
            self.model.missing_weight
        } else if m == 1 {
            self.model.unigram_weight[e as usize]
        } else {
            self.weight[(m - 2) * self.len + p - 1]
        }
    }

    /// Looks up order `m` >= 2 at every position whose longest match so far has order m-1
    /// and whose context reaches it; `lookups` is scratch.
    fn pass(&mut self, m: usize, lookups: &mut Vec<Lookup>) {
        let table = &self.model.higher[m - 2].table;
        lookups.clear();
        for p in 0..self.len {
            if usize::from(self.found[p]) == m - 1 && usize::from(self.context[p]) >= m - 1 {
                let c = self.context_entry(m - 1, p);
                if c != NONE {
                    let key = pack(c, self.word[p]);
                    let home = table.home_slot(key) as u32;
                    lookups.push(Lookup {
                        home,
                        p: p as u32,
                        key,
                    });
                }
            }
        }
        let stores_entries = m < self.model.order;
        for (i, l) in lookups.iter().enumerate() {
            if let Some(ahead) = lookups.get(i + AHEAD) {
                table.prefetch_slot(ahead.home as usize);
            }
            if let Some(e) = table.find_from(l.home as usize, l.key) {
                let (p, found) = (l.p as usize, table.entry(e));
                self.found[p] = m as u8;
                self.logp[p] = found.logp;
                if stores_entries {
                    let at = (m - 2) * self.len + p;
                    (self.entry[at], self.weight[at]) = (e, found.weight);
                }
            }
        }
    }

    /// The score of position `p`, summed as [`Model::score_full`] sums it.
    #[inline]
    fn score(&self, p: usize) -> f64 {
        let (found, l) = (usize::from(self.found[p]), usize::from(self.context[p]));
        match self.model.fallback {
            Fallback::Chain => {
                let mut lp = self.logp[p];
                for c_len in found..=l {
                    lp += self.context_weight(c_len, p);
                }
                lp
            }
            Fallback::Flat if found == l + 1 => self.logp[p],
            Fallback::Flat => self.context_weight(l, p),
        }
    }
}

/// Appends to `out` the ln p of every predicted token of the sentences `ids[ends[i-1]..ends[i]]`
/// (model ids), sentence after sentence, with `</s>` after each when the model has markers.
/// Memory is proportional to the batch: callers keep it to about [`MAX_TOKENS`] positions.
pub fn score_batch(model: &Model, ids: &[u32], ends: &[usize], out: &mut Vec<f64>) {
    let mut positions = Positions::new(model, ids, ends);
    let mut lookups = Vec::with_capacity(positions.len);
    for m in 2..=model.order {
        positions.pass(m, &mut lookups);
    }
    out.extend((0..positions.len).map(|p| positions.score(p)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::arpa::read_arpa_from;
    use crate::model::scorer::Scorer;

    /// Every score equals, bit for bit, the token-by-token one, with and without sentence
    /// markers, for backoff (chain) and flat models, across sentence boundaries and `<unk>`.
    #[test]
    fn scores_equal_the_token_by_token_ones() {
        let arpa = "\\data\\\nngram 1=6\nngram 2=5\nngram 3=2\n\n\\1-grams:\n-1\t<unk>\t0\n\
            0\t<s>\t-0.5\n-0.7\t</s>\t0\n-0.6\ta\t-0.3\n-0.8\tb\t-0.2\n-0.9\tc\t-0.1\n\n\
            \\2-grams:\n-0.2\t<s> a\t-0.05\n-0.3\ta b\t-0.1\n-0.4\tb c\t0\n-0.5\tb </s>\t0\n\
            -0.25\tc a\t-0.4\n\n\\3-grams:\n-0.1\ta b c\n-0.15\t<s> a b\n\n\\end\\\n";
        let mut model = read_arpa_from(arpa.as_bytes(), "t.arpa").unwrap();
        let [a, b, c] = ["a", "b", "c"].map(|w| model.id(w));
        let sentences: [&[u32]; 5] = [&[a, b, c], &[], &[c, a, b, b, 0, c], &[b], &[a, b, c, a, b]];
        let ids: Vec<u32> = sentences.concat();
        let ends: Vec<usize> = sentences
            .iter()
            .scan(0, |end, s| {
                *end += s.len();
                Some(*end)
            })
            .collect();
        for (bos_eos, fallback) in [
            (true, Fallback::Chain),
            (false, Fallback::Chain),
            (true, Fallback::Flat),
            (false, Fallback::Flat),
        ] {
            (model.bos_eos, model.fallback, model.missing_weight) = (bos_eos, fallback, -0.7);
            let mut out = Vec::new();
            score_batch(&model, &ids, &ends, &mut out);
            let expected: Vec<f64> = sentences
                .iter()
                .flat_map(|s| model.score_sentence_full(s, true, true))
                .map(|(lp, _)| lp)
                .collect();
            assert_eq!(out.len(), expected.len());
            for (got, want) in out.iter().zip(&expected) {
                assert_eq!(got.to_bits(), want.to_bits(), "{bos_eos} {fallback:?}");
            }
        }
    }
}
