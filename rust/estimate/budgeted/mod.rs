//! Estimation within a memory budget: corpus in, ARPA file out, with the n-gram counts on disk.
//!
//! [`crate::estimate`] keeps every order's counts in memory, which is fastest but needs about
//! 60 bytes per n-gram. This module computes the same model (bit for bit: the same formulas in
//! the same float operations, see `estimate::interpolation_terms`) as lmplz does, by
//! streaming sorted files ([`crate::util::spill`]) whose in-memory part never exceeds the budget:
//!
//! 1. **Count** the highest-order n-grams (the longest n-gram ending at each predicted token:
//!    shorter ones at sentence starts, left-padded), in sorted runs merged in context order
//!    (w(m-1), ..., w1, then wm), equal n-grams combined.
//! 2. **Adjust** (`lower_orders.rs`): in context order the n-grams whose suffixes share a
//!    context are contiguous, so one pass gives every lower-order n-gram with its raw count and
//!    its number of distinct left extensions (Kneser-Ney's adjusted count; n-grams starting with
//!    `<s>` keep their raw count), and the count-of-counts that the discounts come from; each
//!    order comes out in context order itself, one context at a time, with no sort. (lmplz
//!    counts in suffix order and sorts every order into context order after adjusting; so did
//!    this module until December 6: 118 M n-grams sorted for the Gutenberg 5-gram.)
//! 3. **Per order m**, lowest first, in one pass over its n-grams in context order: the
//!    continuations of a context are contiguous, which gives each context's statistics, each
//!    n-gram's `(a, b, c)` terms and each context's weight gamma; and the n-grams whose suffix
//!    h' shares its context (w2 ... w(m-1)) are contiguous too, their contexts coming in the order
//!    in which order m-1's file (also in context order) holds the continuations of those
//!    contexts: one block of it at a time gives p(w|h') for p(w|h) = (a + b p(w|h')) / c.
//!    Order m's probabilities go to a file in context order (for order m+1) and to a sort in
//!    prefix order (for its section), each n-gram carrying its context's weight: in prefix order
//!    the continuations of a context are side by side, so the sorted runs give the weights of
//!    the contexts in prefix order too, for section m-1, with no sort of their own.
//! 4. **Write** each order's section in prefix order, joining every n-gram with its weight as a
//!    context (from step 3 of order m+1).
//!
//! Pruning ([`Pruning`]) marks n-grams in step 2 (the high bit of the effective count): step 3
//! counts them in their context's statistics, then drops them.
//!
//! One file a step: `count.rs` (1), `lower_orders.rs` (2), `interpolate.rs` (3 and 4); this file
//! holds the budget, the checks and the driver, [`train_arpa`]. `adjust.rs` holds what step 2
//! hands on and the effective counts (`Tally`), and step 2 in suffix order,
//! for distributed estimation, whose partitions are cut by last word.
//!
//! Unigram arrays (one entry per word type) stay in memory. The corpus is read from memory as it
//! is for in-memory estimation (4 bytes per token).

mod adjust;
mod count;
mod interpolate;
mod lower_orders;

use std::path::{Path, PathBuf};

use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::estimate::{check_pruning, Pruning, Smoothing};
use crate::formats::arpa::check_arpa_tokens;
use crate::util::compressed::Output;
use crate::util::float_format::log10_f32;
use crate::util::job::Job;
use crate::util::spill::{ReadAhead, WorkDir};

/// Marks the effective count of a pruned n-gram (counts stay below 2^31).
const PRUNED: u32 = 1 << 31;

/// Smallest budget accepted, in bytes.
pub const MIN_MEMORY: usize = 16 << 20;

/// Where and how much.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Bytes of memory for the estimation, like lmplz's `-S`: the corpus and vocabulary held in
    /// memory, and the sort buffers in what remains.
    pub memory: usize,
    /// Directory for the sorted runs (a fresh subdirectory is made and removed), like `-T`.
    pub temp_dir: PathBuf,
}

pub(crate) fn f64_words(x: f64) -> [u32; 2] {
    let b = x.to_bits();
    [b as u32, (b >> 32) as u32]
}

pub(crate) fn words_f64(w: &[u32]) -> f64 {
    f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32))
}

/// A linear probability or weight `x` as an ARPA section stores it until written: the bits of its
/// float32 log10, the number the line prints (computed from the same f64 as printing it would:
/// the file is the same). Sections and weights are sorted in prefix order with this one word
/// instead of the two of an f64.
pub(crate) fn arpa_word(x: f64) -> u32 {
    log10_f32(x.ln()).to_bits()
}

/// What an estimation wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// N-grams per order, as the ARPA header states them (unigrams include `<s>`).
    pub ngram_counts: Vec<u64>,
    /// Sorted runs written to disk.
    pub runs: usize,
    /// Bytes written to the work directory (runs and intermediate files).
    pub bytes_spilled: u64,
}

/// Checks what every ARPA-writing estimation path needs (the budgeted one here and the
/// distributed one): valid parameters and pruning, an interpolated estimator (ARPA holds backoff
/// form, exact only for those) and an order in `2..=MAX_ORDER`; `what` names the path in errors.
pub fn check_estimator(
    order: usize,
    smoothing: &Smoothing,
    pruning: &Pruning,
    what: &str,
) -> Result<()> {
    smoothing.validate()?;
    check_pruning(smoothing, pruning)?;
    if !smoothing.is_interpolated() {
        return Err(Error::invalid(format!(
            "{what} writes ARPA, which needs an interpolated estimator (modified_kneser_ney, \
             kneser_ney, witten_bell, absolute_discounting); got {}",
            smoothing.name()
        )));
    }
    if !(2..=crate::ngram::keys::MAX_ORDER).contains(&order) {
        return Err(Error::invalid(format!(
            "order must be in 2..={} for {what}, got {order}",
            crate::ngram::keys::MAX_ORDER
        )));
    }
    Ok(())
}

/// Estimates a model of `order` on `corpus` with `smoothing` (an interpolated estimator) within
/// `budget` and writes it as ARPA to `path` (compressed by its extension).
pub fn train_arpa(
    corpus: &Corpus,
    order: usize,
    smoothing: Smoothing,
    pruning: &Pruning,
    budget: &Budget,
    path: &Path,
    job: &Job,
) -> Result<Summary> {
    check_estimator(
        order,
        &smoothing,
        pruning,
        "estimation within a memory budget",
    )?;
    check_arpa_tokens(corpus.vocab().words())?;
    if budget.memory < MIN_MEMORY {
        return Err(Error::invalid(format!(
            "the memory budget must be at least {} MiB, got {} bytes",
            MIN_MEMORY >> 20,
            budget.memory
        )));
    }
    let held = resident_bytes(corpus);
    if budget.memory < held + MIN_MEMORY / 2 {
        return Err(Error::invalid(format!(
            "a memory budget of {} MiB is too small for this corpus: its token ids, vocabulary \
             and per-word arrays alone take {} MiB, and the sorts need at least {} MiB more",
            budget.memory >> 20,
            held >> 20,
            MIN_MEMORY >> 21
        )));
    }
    let budget = Budget {
        memory: budget.memory - held,
        temp_dir: budget.temp_dir.clone(),
    };
    let budget = &budget;
    if corpus.num_tokens() == 0 && corpus.num_sentences() == 0 {
        return Err(Error::EmptyCorpus(
            "cannot fit a model on a corpus with no token".into(),
        ));
    }
    // the output's error now, not once the counts are estimated
    Output::check(path)?;
    train_arpa_unchecked(corpus, order, smoothing, pruning, budget, path, job)
}

/// What stays in memory besides the sort buffers, so that the budget covers it (as lmplz's `-S`
/// covers its vocabulary): the corpus's token ids and offsets, its vocabulary (words, hash map)
/// and the per-word arrays of the estimation, at most 20 bytes a word: during step 2 an
/// effective count (4 bytes) and the raw count and left extensions being summed (8 and 4,
/// freed when step 2 ends), then the effective count, p and gamma (4, 8 and 8).
fn resident_bytes(corpus: &Corpus) -> usize {
    let vocab = corpus.vocab();
    let words: usize = (0..vocab.len() as u32).map(|id| vocab.word(id).len()).sum();
    // the vocabulary is an `Interner`, whose arrays grew by doubling (up to twice what they
    // hold): per word its end (8 bytes, so 16) and its index slot (a 24-byte entry and a control
    // byte, at a load of 7/16 just after the index grew, the lowest); then the estimation's 20
    // bytes; and the spellings, one after the other (twice their bytes)
    let per_word = 2 * 8 + (25 * 16usize).div_ceil(7) + 20;
    corpus.num_tokens() * 4 + corpus.num_sentences() * 8 + vocab.len() * per_word + 2 * words
}

/// [`train_arpa`] without the argument checks (tests use tiny budgets to force many runs).
fn train_arpa_unchecked(
    corpus: &Corpus,
    order: usize,
    smoothing: Smoothing,
    pruning: &Pruning,
    budget: &Budget,
    path: &Path,
    job: &Job,
) -> Result<Summary> {
    let dir = WorkDir::new(&budget.temp_dir)?;
    let vocab = corpus.vocab();
    let counts = count_highest(corpus, order, budget.memory, &dir, job)?;
    // nothing else runs while the lower orders are derived: the counts' runs are merged on the
    // other core
    let adjusted = lower_orders(
        ReadAhead::new(counts, order + 1),
        order,
        vocab.len(),
        (&smoothing, pruning),
        &dir,
        job,
    )?;
    let counts = write_adjusted(
        adjusted,
        order,
        &smoothing,
        vocab,
        (budget.memory, &dir, job),
        path,
    )?;
    Ok(Summary {
        ngram_counts: counts,
        runs: dir.runs(),
        bytes_spilled: dir.bytes_written(),
    })
}

pub(crate) use adjust::adjust;
use count::count_highest;
pub(crate) use count::highest_ngrams;
pub(crate) use interpolate::{
    interpolated, missing_suffix, write_adjusted, write_section, write_unigrams, Globals,
};
use lower_orders::lower_orders;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::SentenceMode;

    const TEXT: &str = "the cat sat on the mat\nthe dog sat on the log\na cat and a dog\n\
                        the cat saw the dog on the mat\non the log sat a cat\nthe mat\n\
                        a dog saw a cat and the cat ran\nthe log and the mat\n";

    fn corpus(repeats: usize) -> Corpus {
        let mut c = Corpus::new();
        for i in 0..repeats {
            // vary the text so that higher orders are not all singletons
            let text = TEXT.replace("cat", if i % 3 == 0 { "cat" } else { "rat" });
            c.push_whitespace_text(&text, SentenceMode::Lines).unwrap();
        }
        // once only: under pruning, contexts whose continuations are all pruned (weight 1)
        c.push_whitespace_text("the zebra saw a quagga and an okapi\n", SentenceMode::Lines)
            .unwrap();
        c.finish();
        c
    }

    fn in_memory_arpa(
        c: &Corpus,
        order: usize,
        smoothing: Smoothing,
        pruning: &Pruning,
    ) -> Vec<u8> {
        let model = crate::estimate::fit(c, order, true, smoothing, pruning, &Job::none()).unwrap();
        let mut out = Vec::new();
        crate::formats::arpa::write_arpa_to(&model, &mut out).unwrap();
        out
    }

    #[test]
    fn writes_the_same_bytes_as_in_memory_estimation() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let c = corpus(300);
        for smoothing in [
            Smoothing::ModifiedKneserNey {
                discount_fallback: true,
            },
            Smoothing::KneserNey { discount: 0.7 },
            Smoothing::WittenBell,
            Smoothing::AbsoluteDiscounting { discount: 0.5 },
        ] {
            for (order, prune) in [
                (2, &[][..]),
                (3, &[]),
                (5, &[]),
                (3, &[0, 1]),
                (5, &[0, 0, 1, 2]),
            ] {
                let pruning = Pruning::new(prune, order).unwrap();
                let path = dir.file("model.arpa");
                // the smallest runs (4096 records): every sort spills and merges several
                let budget = Budget {
                    memory: 0,
                    temp_dir: std::env::temp_dir(),
                };
                let summary = train_arpa_unchecked(
                    &c,
                    order,
                    smoothing,
                    &pruning,
                    &budget,
                    &path,
                    &Job::none(),
                )
                .unwrap();
                let written = std::fs::read(&path).unwrap();
                let expected = in_memory_arpa(&c, order, smoothing, &pruning);
                assert_eq!(
                    String::from_utf8_lossy(&written),
                    String::from_utf8_lossy(&expected),
                    "{smoothing:?} order {order} prune {prune:?}"
                );
                assert_eq!(summary.ngram_counts.len(), order);
                // the counts' sort and each section's spill several runs
                assert!(summary.runs > order, "{summary:?}");
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_do() {
        let c = corpus(1);
        let budget = Budget {
            memory: MIN_MEMORY,
            temp_dir: std::env::temp_dir(),
        };
        let out = std::env::temp_dir().join("fastppl-refused.arpa");
        for (order, smoothing, small) in [
            (1, Smoothing::WittenBell, false),
            (3, Smoothing::Mle, false),
            (3, Smoothing::WittenBell, true),
        ] {
            let b = Budget {
                memory: if small { 1 << 20 } else { budget.memory },
                ..budget.clone()
            };
            let err = train_arpa(
                &c,
                order,
                smoothing,
                &Pruning::none(),
                &b,
                &out,
                &Job::none(),
            )
            .unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        }
        assert!(!out.exists());
        // the budget covers the corpus: 3 M tokens (12 MiB of ids) leave too little of 16 MiB
        let mut big = Corpus::new();
        big.push_whitespace_text(&"a b c d e f\n".repeat(500_000), SentenceMode::Lines)
            .unwrap();
        big.finish();
        let err = train_arpa(
            &big,
            3,
            Smoothing::WittenBell,
            &Pruning::none(),
            &budget,
            &out,
            &Job::none(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("too small for this corpus"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
