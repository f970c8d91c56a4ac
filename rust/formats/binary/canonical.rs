//! The canonical layout of a model's tables: the n-grams of each order inserted in ascending
//! order of their word ids into a table of [`ProbingTable::with_entries`] their number.
//!
//! A fitted model's tables keep the slots of its counting tables, which all threads fill at
//! once, so where two colliding n-grams land (and with it every key above them) depends on
//! which thread came first: two fits of one corpus can save different bytes for the same
//! model. The canonical layout depends on the n-grams and their values alone. Distributed
//! estimation builds its tables this way ([`SortedOrder`]); [`canonical`] lays out any model
//! the same way, so that two models are equal exactly when their canonical files have the same
//! bytes.

use crate::error::{Error, Result};
use crate::model::{Model, OrderTable};
use crate::ngram::keys::{key_prefix, key_word, pack};
use crate::ngram::probing::{Entry, ProbingTable};

/// The table of one order m >= 2, filled with its n-grams in ascending order of word ids.
#[derive(Debug)]
pub struct SortedOrder {
    m: usize,
    /// N-grams announced; [`SortedOrder::finish`] checks that as many came.
    expected: usize,
    table: ProbingTable,
    /// Raw counts by slot; empty for a model without counts.
    counts: Vec<u32>,
    /// The last n-gram pushed, to check the order.
    previous: Vec<u32>,
}

impl SortedOrder {
    /// An empty table of order `m` for `len` n-grams, with a count per n-gram if `counted`.
    pub fn new(m: usize, len: usize, counted: bool) -> Self {
        let table = ProbingTable::with_entries(len);
        let counts = if counted {
            vec![0; table.capacity()]
        } else {
            Vec::new()
        };
        SortedOrder {
            m,
            expected: len,
            table,
            counts,
            previous: Vec::new(),
        }
    }

    /// Adds the n-gram `ids` (m word ids) with its `entry` and raw `count`; `model` holds the
    /// orders below m, in which its prefix must be. N-grams come in ascending order of `ids`.
    pub fn push(&mut self, model: &Model, ids: &[u32], entry: Entry, count: u32) -> Result<()> {
        let m = self.m;
        if ids.len() != m || ids[..] <= self.previous[..] {
            return Err(Error::invalid(format!(
                "order {m}: n-gram {ids:?} after {:?} (ascending {m}-grams expected)",
                self.previous
            )));
        }
        if self.table.len() == self.expected {
            return Err(Error::invalid(format!(
                "order {m}: more than the {} n-grams announced",
                self.expected
            )));
        }
        if model.higher.len() + 2 < m {
            return Err(Error::invalid(format!(
                "order {m}: the model holds orders up to {} only",
                model.higher.len() + 1
            )));
        }
        let prefix = model.find(&ids[..m - 1]).ok_or_else(|| {
            Error::invalid(format!(
                "order {m}: the prefix of {ids:?} is not an n-gram of order {}",
                m - 1
            ))
        })?;
        let slot = self.table.insert(pack(prefix, ids[m - 1]), entry);
        if let Some(c) = self.counts.get_mut(slot as usize) {
            *c = count;
        }
        self.previous.clear();
        self.previous.extend_from_slice(ids);
        Ok(())
    }

    /// The finished table; fails unless every n-gram announced came.
    pub fn finish(self) -> Result<OrderTable> {
        if self.table.len() != self.expected {
            return Err(Error::invalid(format!(
                "order {}: {} n-grams announced, {} given",
                self.m,
                self.expected,
                self.table.len()
            )));
        }
        Ok(OrderTable {
            table: self.table,
            counts: self.counts,
        })
    }
}

/// `model` with its tables in the canonical layout (everything else as it is).
pub fn canonical(model: &Model) -> Result<Model> {
    let mut out = Model {
        order: model.order,
        bos_eos: model.bos_eos,
        vocab: model.vocab.clone(),
        unigram_logp: model.unigram_logp.clone(),
        unigram_weight: model.unigram_weight.clone(),
        unigram_counts: model.unigram_counts.clone(),
        higher: Vec::with_capacity(model.higher.len()),
        fallback: model.fallback,
        missing_weight: model.missing_weight,
        normalized: model.normalized,
        smoothing: model.smoothing.clone(),
        discounts: model.discounts.clone(),
    };
    // the word ids of each slot of the order below, m-1 per slot (order 1: the word itself)
    let mut lower: Vec<u32> = (0..model.vocab.len() as u32).collect();
    for (i, source) in model.higher.iter().enumerate() {
        let m = i + 2;
        let mut words = vec![0u32; source.table.capacity() * m];
        let mut slots = Vec::with_capacity(source.table.len());
        for (slot, key, _) in source.table.iter() {
            let prefix = key_prefix(key) as usize * (m - 1);
            let at = slot as usize * m;
            let gram = lower.get(prefix..prefix + m - 1).ok_or_else(|| {
                Error::invalid(format!("order {m}: slot {slot} has no prefix entry"))
            })?;
            words[at..at + m - 1].copy_from_slice(gram);
            words[at + m - 1] = key_word(key);
            slots.push(slot as usize);
        }
        let ids = |slot: usize| &words[slot * m..(slot + 1) * m];
        slots.sort_unstable_by(|&a, &b| ids(a).cmp(ids(b)));
        let mut order = SortedOrder::new(m, slots.len(), !source.counts.is_empty());
        for &slot in &slots {
            let count = source.counts.get(slot).copied().unwrap_or(0);
            order.push(&out, ids(slot), *source.table.entry(slot as u32), count)?;
        }
        out.higher.push(order.finish()?);
        lower = words;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Corpus, SentenceMode};
    use crate::estimate::{fit, Pruning, Smoothing};
    use crate::model::scorer::Scorer;
    use crate::util::job::Job;

    fn fitted(text: &str, smoothing: Smoothing, pruning: &[u64]) -> Model {
        let mut c = Corpus::new();
        c.push_whitespace_text(text, SentenceMode::Lines).unwrap();
        c.finish();
        let pruning = Pruning::new(pruning, 4).unwrap();
        fit(&c, 4, true, smoothing, &pruning, &Job::none()).unwrap()
    }

    /// Every stored n-gram (as word ids) with its entry's bits and count, sorted.
    fn ngrams(model: &Model) -> Vec<(Vec<u32>, u64, u64, u32)> {
        let mut out = Vec::new();
        let mut lower: Vec<Vec<u32>> = (0..model.vocab.len() as u32).map(|w| vec![w]).collect();
        for t in &model.higher {
            let mut here = vec![Vec::new(); t.table.capacity()];
            for (slot, key, e) in t.table.iter() {
                let mut ids = lower[key_prefix(key) as usize].clone();
                ids.push(key_word(key));
                let count = t.counts.get(slot as usize).copied().unwrap_or(0);
                out.push((ids.clone(), e.logp.to_bits(), e.weight.to_bits(), count));
                here[slot as usize] = ids;
            }
            lower = here;
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn the_canonical_model_holds_the_same_ngrams_and_scores() {
        let text = "a b c a b\nb c d a\na a b c d e\nc d e f\nb c a d\n".repeat(3);
        for (smoothing, pruning) in [
            (Smoothing::StupidBackoff { alpha: 0.4 }, &[][..]),
            (Smoothing::WittenBell, &[0, 0, 1]),
        ] {
            let model = fitted(&text, smoothing, pruning);
            let canon = canonical(&model).unwrap();
            assert_eq!(ngrams(&model), ngrams(&canon));
            let ids: Vec<u32> = "a b c d e f a c".split(' ').map(|w| model.id(w)).collect();
            let score = |m: &Model| -> Vec<u64> {
                m.score_sentence_full(&ids, true, true)
                    .iter()
                    .map(|(x, _)| x.to_bits())
                    .collect()
            };
            assert_eq!(score(&model), score(&canon));
            // the layout depends on the n-grams only: canonical twice is the same bytes
            let again = canonical(&canon).unwrap();
            for (a, b) in canon.higher.iter().zip(&again.higher) {
                assert_eq!(a.table.slot_bytes(), b.table.slot_bytes());
                assert_eq!(a.counts, b.counts);
            }
        }
    }

    #[test]
    fn n_grams_out_of_order_or_without_prefix_are_refused() {
        let model = fitted("a b c\n", Smoothing::StupidBackoff { alpha: 0.4 }, &[]);
        let base = Model {
            higher: Vec::new(),
            ..model.clone()
        };
        let (a, b, c) = (model.id("a"), model.id("b"), model.id("c"));
        let mut order = SortedOrder::new(2, 2, true);
        order.push(&base, &[a, b], Entry::default(), 1).unwrap();
        let err = order.push(&base, &[a, b], Entry::default(), 1).unwrap_err();
        assert!(err.to_string().contains("ascending"), "{err}");
        order.push(&base, &[b, c], Entry::default(), 1).unwrap();
        let err = order.push(&base, &[c, a], Entry::default(), 1).unwrap_err();
        assert!(err.to_string().contains("more than the 2"), "{err}");
        let short = SortedOrder::new(2, 3, true);
        assert!(short
            .finish()
            .unwrap_err()
            .to_string()
            .contains("3 n-grams announced"));
        let mut third = SortedOrder::new(3, 1, false);
        let err = third
            .push(&base, &[a, b, c], Entry::default(), 1)
            .unwrap_err();
        assert!(err.to_string().contains("orders up to 1"), "{err}");
        let with_bigrams = Model {
            higher: model.higher[..1].to_vec(),
            ..base
        };
        let err = third
            .push(&with_bigrams, &[c, b, a], Entry::default(), 1)
            .unwrap_err();
        assert!(err.to_string().contains("prefix"), "{err}");
    }
}
