//! Step 2 of budgeted estimation: the lower orders and their effective (Kneser-Ney adjusted or
//! raw) counts, in one pass over the suffix-sorted highest-order counts.

use super::PRUNED;
use crate::corpus::vocab::BOS;
use crate::error::{Error, Result};
use crate::estimate::{Pruning, Smoothing};
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout, RecordStream, Sorter, WorkDir, PAD};

/// What step 2 hands on.
pub(crate) struct Adjusted {
    /// Effective (adjusted or raw) count of each unigram, by word id.
    pub(crate) unigrams: Vec<u32>,
    /// Orders 2..=N (at index m-2): n-grams with their effective count (with [`PRUNED`] set for
    /// the pruned ones), sorted in prefix order.
    pub(crate) higher: Vec<RecordStream>,
    /// Count-of-counts n[1..=4] of each order's effective counts (index m-1).
    pub(crate) count_of_counts: Vec<[u64; 5]>,
    /// N-grams kept per order, as the ARPA header states them (every vocabulary word for
    /// unigrams).
    pub(crate) ngram_counts: Vec<u64>,
}

/// Step 2: lower-order n-grams and their effective counts from the suffix-sorted n-grams.
pub(crate) fn adjust(
    mut counts: RecordStream,
    order: usize,
    vocab_len: usize,
    (smoothing, pruning): (&Smoothing, &Pruning),
    memory: usize,
    dir: &WorkDir,
    job: &Job,
) -> Result<Adjusted> {
    job.stage("adjusting counts", 0)?;
    let mut done = 0;
    let n = order;
    let share = memory / n;
    let mut sorters: Vec<Sorter> = (2..=n)
        .map(|m| {
            Sorter::new(
                Layout::new(m, 1, KeyOrder::Prefix),
                false,
                share,
                dir,
                "adjusted",
            )
        })
        .collect();
    let mut unigrams = vec![0u32; vocab_len];
    let mut count_of_counts = vec![[0u64; 5]; n];
    let mut ngram_counts = vec![0u64; n];
    ngram_counts[0] = vocab_len as u64;
    let adjusted = smoothing.uses_adjusted_counts();
    // per order m (index m): raw count and distinct left extensions of the current n-gram
    let mut raw = vec![0u64; n + 1];
    let mut extensions = vec![0u32; n + 1];
    let mut previous: Vec<u32> = Vec::new();
    let mut row: Vec<u32> = Vec::with_capacity(n + 1);
    // has at least m words: the m-gram ending the record is a real n-gram
    let real = |r: &[u32], m: usize| r[n - m] != PAD;

    let mut finish = |r: &[u32], m: usize, raw: u64, extensions: u32| -> Result<()> {
        let gram = &r[n - m..n];
        let pruned = pruning.prunes(m, raw);
        let raw = u32::try_from(raw)
            .ok()
            .filter(|&r| r < PRUNED)
            .ok_or_else(|| {
                Error::Overflow("an n-gram count exceeds 2^31 - 1 occurrences".to_string())
            })?;
        let effective = if adjusted && m < n && gram[0] != BOS {
            extensions
        } else {
            raw
        };
        if m == 1 {
            unigrams[gram[0] as usize] = effective;
            return Ok(());
        }
        if (1..=4).contains(&effective) {
            count_of_counts[m - 1][effective as usize] += 1;
        }
        if !pruned {
            ngram_counts[m - 1] += 1;
        }
        row.clear();
        row.extend_from_slice(gram);
        row.push(if pruned {
            effective | PRUNED
        } else {
            effective
        });
        sorters[m - 2].push(&row)
    };

    while let Some(r) = counts.next_record()? {
        job.tick(&mut done)?;
        // orders whose n-gram continues from the previous record
        let shared = if previous.is_empty() {
            0
        } else {
            (0..n)
                .take_while(|&i| previous[n - 1 - i] == r[n - 1 - i])
                .count()
        };
        if !previous.is_empty() {
            for m in shared + 1..=n {
                if real(&previous, m) {
                    finish(&previous, m, raw[m], extensions[m])?;
                }
            }
        }
        for m in shared + 1..=n {
            raw[m] = 0;
            extensions[m] = 0;
        }
        let count = u64::from(r[n]);
        for m in 1..=n {
            if !real(r, m) {
                break;
            }
            raw[m] += count;
            // a new (m+1)-gram ending here is a new left extension of this m-gram
            if m < n && m >= shared && real(r, m + 1) {
                extensions[m] += 1;
            }
        }
        previous.clear();
        previous.extend_from_slice(r);
    }
    if !previous.is_empty() {
        for m in 1..=n {
            if real(&previous, m) {
                finish(&previous, m, raw[m], extensions[m])?;
            }
        }
    }
    let higher = sorters
        .into_iter()
        .map(Sorter::finish)
        .collect::<Result<Vec<_>>>()?;
    Ok(Adjusted {
        unigrams,
        higher,
        count_of_counts,
        ngram_counts,
    })
}
