//! Step 2 of budgeted estimation: the lower orders and their effective (Kneser-Ney adjusted or
//! raw) counts, in one pass over the suffix-sorted highest-order counts.

use super::PRUNED;
use crate::corpus::vocab::BOS;
use crate::error::{Error, Result};
use crate::estimate::{Pruning, Smoothing};
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout, RecordStream, Sorter, WorkDir, PAD};
use crate::util::words::extend_words;

/// What step 2 hands on.
pub(crate) struct Adjusted {
    /// Effective (adjusted or raw) count of each unigram, by word id.
    pub(crate) unigrams: Vec<u32>,
    /// Orders 2..=N (at index m-2): n-grams with their effective count (with [`PRUNED`] set for
    /// the pruned ones), sorted in the key order asked for.
    pub(crate) higher: Vec<RecordStream>,
    /// Count-of-counts n[1..=4] of each order's effective counts (index m-1).
    pub(crate) count_of_counts: Vec<[u64; 5]>,
    /// N-grams kept per order, as the ARPA header states them (every vocabulary word for
    /// unigrams).
    pub(crate) ngram_counts: Vec<u64>,
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
    /// Whether Kneser-Ney's adjusted counts replace the raw counts below the highest order.
    adjusted: bool,
    pruning: &'a Pruning,
    /// Orders 2..=N (at index m-2): the finished n-grams, to be sorted in prefix order.
    sorters: Vec<Sorter<'a>>,
    unigrams: Vec<u32>,
    count_of_counts: Vec<[u64; 5]>,
    ngram_counts: Vec<u64>,
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
        let mut ngram_counts = vec![0u64; n];
        ngram_counts[0] = vocab_len as u64;
        AdjustPass {
            n,
            adjusted: smoothing.uses_adjusted_counts(),
            pruning,
            sorters,
            unigrams: vec![0u32; vocab_len],
            count_of_counts: vec![[0u64; 5]; n],
            ngram_counts,
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
        let n = self.n;
        let gram = &r[n - m..n];
        let pruned = self.pruning.prunes(m, self.raw[m]);
        let raw = u32::try_from(self.raw[m])
            .ok()
            .filter(|&r| r < PRUNED)
            .ok_or_else(|| {
                Error::Overflow("an n-gram count exceeds 2^31 - 1 occurrences".to_string())
            })?;
        let effective = if self.adjusted && m < n && gram[0] != BOS {
            self.extensions[m]
        } else {
            raw
        };
        if m == 1 {
            self.unigrams[gram[0] as usize] = effective;
            return Ok(());
        }
        if (1..=4).contains(&effective) {
            self.count_of_counts[m - 1][effective as usize] += 1;
        }
        if !pruned {
            self.ngram_counts[m - 1] += 1;
        }
        self.row.clear();
        extend_words(&mut self.row, gram);
        self.row.push(if pruned {
            effective | PRUNED
        } else {
            effective
        });
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
        Ok(Adjusted {
            unigrams: self.unigrams,
            higher,
            count_of_counts: self.count_of_counts,
            ngram_counts: self.ngram_counts,
        })
    }
}
