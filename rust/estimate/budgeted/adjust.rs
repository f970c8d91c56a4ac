//! Step 2 of estimation on disk: the lower orders and their effective (Kneser-Ney adjusted or
//! raw) counts. What it hands on and the effective counts themselves ([`Tally`]) serve both of
//! its forms; the form here is one pass over the highest-order counts in suffix order, each
//! order then sorted (distributed estimation: its partitions hold the n-grams of a range of
//! last words, whose suffixes are theirs alone). Budgeted estimation counts in context order
//! and derives the lower orders with no sort (`lower_orders.rs`).

use super::PRUNED;
use crate::corpus::vocab::BOS;
use crate::error::{Error, Result};
use crate::estimate::{Pruning, Smoothing};
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout, RecordStream, Sorter, WorkDir, PAD};
use crate::util::words::extend_words;

/// What step 2 hands on: the unigrams' effective counts and each higher order's n-grams as
/// `S`, a stream of records.
pub(crate) struct Adjusted<S = RecordStream> {
    /// Effective (adjusted or raw) count of each unigram, by word id.
    pub(crate) unigrams: Vec<u32>,
    /// Orders 2..=N (at index m-2): n-grams with their effective count (with [`PRUNED`] set for
    /// the pruned ones), in an order where the continuations of a context are contiguous (the
    /// key order [`adjust`] is asked for; context order from `lower_orders.rs`).
    pub(crate) higher: Vec<S>,
    /// Count-of-counts n[1..=4] of each order's effective counts (index m-1).
    pub(crate) count_of_counts: Vec<[u64; 5]>,
    /// N-grams kept per order, as the ARPA header states them (every vocabulary word for
    /// unigrams).
    pub(crate) ngram_counts: Vec<u64>,
}

/// The effective counts of step 2, whichever order its n-grams come in: each n-gram's (Kneser-
/// Ney's adjusted count or its raw count, with [`PRUNED`] set when pruning drops it), and what
/// they add up to (the unigrams' counts, the count-of-counts, the n-grams kept per order).
pub(crate) struct Tally<'a> {
    /// The order N.
    n: usize,
    /// Whether Kneser-Ney's adjusted counts replace the raw counts below the highest order.
    adjusted: bool,
    pruning: &'a Pruning,
    unigrams: Vec<u32>,
    count_of_counts: Vec<[u64; 5]>,
    ngram_counts: Vec<u64>,
}

impl<'a> Tally<'a> {
    pub(crate) fn new(
        n: usize,
        vocab_len: usize,
        smoothing: &Smoothing,
        pruning: &'a Pruning,
    ) -> Self {
        let mut ngram_counts = vec![0u64; n];
        ngram_counts[0] = vocab_len as u64;
        Tally {
            n,
            adjusted: smoothing.uses_adjusted_counts(),
            pruning,
            unigrams: vec![0u32; vocab_len],
            count_of_counts: vec![[0u64; 5]; n],
            ngram_counts,
        }
    }

    /// The effective count of `gram` (an n-gram of order m = its length), seen `raw` times and
    /// with `extensions` distinct words before it (in the n-grams of order m+1): for m >= 2,
    /// the count, [`PRUNED`] set if pruning drops it; a unigram's is kept here (`None`).
    pub(crate) fn effective(
        &mut self,
        gram: &[u32],
        raw: u64,
        extensions: u32,
    ) -> Result<Option<u32>> {
        let m = gram.len();
        let pruned = self.pruning.prunes(m, raw);
        let raw = u32::try_from(raw)
            .ok()
            .filter(|&r| r < PRUNED)
            .ok_or_else(|| {
                Error::Overflow("an n-gram count exceeds 2^31 - 1 occurrences".to_string())
            })?;
        // n-grams that start with <s> keep their raw count
        let effective = if self.adjusted && m < self.n && gram[0] != BOS {
            extensions
        } else {
            raw
        };
        if m == 1 {
            self.unigrams[gram[0] as usize] = effective;
            return Ok(None);
        }
        if (1..=4).contains(&effective) {
            self.count_of_counts[m - 1][effective as usize] += 1;
        }
        if !pruned {
            self.ngram_counts[m - 1] += 1;
        }
        Ok(Some(if pruned {
            effective | PRUNED
        } else {
            effective
        }))
    }

    /// What step 2 hands on, with `higher` (orders 2..=N).
    pub(crate) fn into_adjusted<S>(self, higher: Vec<S>) -> Adjusted<S> {
        Adjusted {
            unigrams: self.unigrams,
            higher,
            count_of_counts: self.count_of_counts,
            ngram_counts: self.ngram_counts,
        }
    }
}

/// Step 2: lower-order n-grams and their effective counts from the suffix-sorted n-grams,
/// sorted in `key_order` (one where the continuations of a context are contiguous).
pub(crate) fn adjust(
    mut counts: RecordStream,
    (order, key_order): (usize, KeyOrder),
    vocab_len: usize,
    (smoothing, pruning): (&Smoothing, &Pruning),
    memory: usize,
    dir: &WorkDir,
    job: &Job,
) -> Result<Adjusted> {
    job.stage("adjusting counts", 0)?;
    let mut done = 0;
    let sorted = (key_order, memory, dir);
    let mut pass = AdjustPass::new(order, vocab_len, smoothing, pruning, sorted);
    while let Some(r) = counts.next_record()? {
        job.tick(&mut done)?;
        pass.record(r)?;
    }
    pass.finish()
}

/// The state of step 2's single pass: the n-grams ending the previous record, with their raw
/// counts and distinct left extensions so far, and what the pass has produced.
struct AdjustPass<'a> {
    /// The order N.
    n: usize,
    tally: Tally<'a>,
    /// Orders 2..=N (at index m-2): the finished n-grams, to be sorted.
    sorters: Vec<Sorter<'a>>,
    /// Per order m (index m): raw count and distinct left extensions of the current m-gram.
    raw: Vec<u64>,
    extensions: Vec<u32>,
    /// The previous record (empty before the first).
    previous: Vec<u32>,
    /// Scratch for one sorter row.
    row: Vec<u32>,
}

impl<'a> AdjustPass<'a> {
    fn new(
        n: usize,
        vocab_len: usize,
        smoothing: &Smoothing,
        pruning: &'a Pruning,
        (key_order, memory, dir): (KeyOrder, usize, &'a WorkDir),
    ) -> Self {
        let share = memory / n;
        let sorters = (2..=n)
            .map(|m| Sorter::new(Layout::new(m, 1, key_order), false, share, dir, "adjusted"))
            .collect();
        AdjustPass {
            n,
            tally: Tally::new(n, vocab_len, smoothing, pruning),
            sorters,
            raw: vec![0u64; n + 1],
            extensions: vec![0u32; n + 1],
            previous: Vec::new(),
            row: Vec::with_capacity(n + 1),
        }
    }

    /// Whether record `r` has at least m words: the m-gram ending it is a real n-gram.
    fn real(&self, r: &[u32], m: usize) -> bool {
        r[self.n - m] != PAD
    }

    /// Adds the next record (words, then count) in suffix order.
    fn record(&mut self, r: &[u32]) -> Result<()> {
        let n = self.n;
        // orders whose n-gram continues from the previous record
        let shared = if self.previous.is_empty() {
            0
        } else {
            (0..n)
                .take_while(|&i| self.previous[n - 1 - i] == r[n - 1 - i])
                .count()
        };
        self.finish_previous(shared + 1)?;
        for m in shared + 1..=n {
            self.raw[m] = 0;
            self.extensions[m] = 0;
        }
        let count = u64::from(r[n]);
        for m in 1..=n {
            if !self.real(r, m) {
                break;
            }
            self.raw[m] += count;
            // a new (m+1)-gram ending here is a new left extension of this m-gram
            if m < n && m >= shared && self.real(r, m + 1) {
                self.extensions[m] += 1;
            }
        }
        self.previous.clear();
        extend_words(&mut self.previous, r);
        Ok(())
    }

    /// Emits the n-grams of orders `from..=N` ending the previous record, if there is one.
    fn finish_previous(&mut self, from: usize) -> Result<()> {
        let previous = std::mem::take(&mut self.previous);
        if !previous.is_empty() {
            for m in from..=self.n {
                if self.real(&previous, m) {
                    self.emit(&previous, m)?;
                }
            }
        }
        self.previous = previous;
        Ok(())
    }

    /// Emits the m-gram ending record `r`, its raw count and extensions being complete.
    fn emit(&mut self, r: &[u32], m: usize) -> Result<()> {
        let gram = &r[self.n - m..self.n];
        let Some(effective) = self
            .tally
            .effective(gram, self.raw[m], self.extensions[m])?
        else {
            return Ok(());
        };
        self.row.clear();
        extend_words(&mut self.row, gram);
        self.row.push(effective);
        self.sorters[m - 2].push(&self.row)
    }

    /// Emits the last record's n-grams and hands the sorted orders on.
    fn finish(mut self) -> Result<Adjusted> {
        self.finish_previous(1)?;
        let higher = self
            .sorters
            .into_iter()
            .map(Sorter::finish)
            .collect::<Result<Vec<_>>>()?;
        Ok(self.tally.into_adjusted(higher))
    }
}
