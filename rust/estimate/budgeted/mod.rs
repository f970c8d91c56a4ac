//! Estimation within a memory budget: corpus in, ARPA file out, with the n-gram counts on disk.
//!
//! [`crate::estimate`] keeps every order's counts in memory, which is fastest but needs about
//! 60 bytes per n-gram. This module computes the same model (bit for bit: the same formulas in
//! the same float operations, see `estimate::interpolation_terms`) as lmplz does, by
//! streaming sorted files ([`crate::util::spill`]) whose in-memory part never exceeds the budget:
//!
//! 1. **Count** the highest-order n-grams (the longest n-gram ending at each predicted token:
//!    shorter ones at sentence starts, left-padded), in sorted runs merged in suffix order, equal
//!    n-grams combined.
//! 2. **Adjust**: in suffix order the n-grams sharing a suffix are contiguous, so one pass gives
//!    every lower-order n-gram with its raw count and its number of distinct left extensions
//!    (Kneser-Ney's adjusted count; n-grams starting with `<s>` keep their raw count), and the
//!    count-of-counts that the discounts come from.
//! 3. **Per order m**, lowest first: sort the order's n-grams in prefix order, where the
//!    continuations of a context are contiguous, and compute each context's statistics, each
//!    n-gram's `(a, b, c)` terms and each context's weight gamma; sort the terms back into suffix
//!    order and join them with the interpolated probabilities of order m-1 (also in suffix order):
//!    p(w|h) = (a + b p(w|h')) / c.
//! 4. **Write** each order's section in prefix order, joining every n-gram with its weight as a
//!    context (from step 3 of order m+1).
//!
//! Pruning ([`Pruning`]) marks n-grams in step 2 (the high bit of the effective count): step 3
//! counts them in their context's statistics, then drops them.
//!
//! Unigram arrays (one entry per word type) stay in memory. The corpus is read from memory as it
//! is for in-memory estimation (4 bytes per token).

use std::path::{Path, PathBuf};

use crate::corpus::vocab::{Vocab, BOS, EOS};
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::estimate::{
    check_pruning, context_weight, interpolation_terms, order_discounts, ContextStats, Pruning,
    Smoothing,
};
use crate::formats::arpa::{check_arpa_tokens, ArpaFile};
use crate::util::job::Job;
use crate::util::spill::{
    KeyOrder, Layout, RecordReader, RecordStream, RecordWriter, Sorter, WorkDir, PAD,
};

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

fn f64_words(x: f64) -> [u32; 2] {
    let b = x.to_bits();
    [b as u32, (b >> 32) as u32]
}

fn words_f64(w: &[u32]) -> f64 {
    f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32))
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
    train_arpa_unchecked(corpus, order, smoothing, pruning, budget, path, job)
}

/// What stays in memory besides the sort buffers, so that the budget covers it (as lmplz's `-S`
/// covers its vocabulary): the corpus's token ids and offsets, its vocabulary (words, hash map)
/// and the per-word arrays of the estimation (an effective count, p and gamma).
fn resident_bytes(corpus: &Corpus) -> usize {
    let vocab = corpus.vocab();
    let words: usize = (0..vocab.len() as u32).map(|id| vocab.word(id).len()).sum();
    // per word: two boxed copies (list and hash map, >= 32 bytes of heap each), the map's
    // slot (24 bytes at 7/8 load); then the estimation's 20 bytes
    let per_word = 2 * (16 + 32) + 28 + 20;
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
    let adjusted = adjust(
        counts,
        order,
        vocab.len(),
        (&smoothing, pruning),
        budget.memory,
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

/// Steps 3 and 4: writes the model of the `adjusted` counts as ARPA to `path` (atomically: on
/// failure the file there is left as it was); returns the n-grams per order, as the header states
/// them.
pub(crate) fn write_adjusted(
    adjusted: Adjusted,
    order: usize,
    smoothing: &Smoothing,
    vocab: &Vocab,
    (memory, dir, job): (usize, &WorkDir, &Job),
    path: &Path,
) -> Result<Vec<u64>> {
    check_arpa_tokens(vocab.words())?;
    let counts = adjusted.ngram_counts.clone();
    let mut out = ArpaFile::create(path, &counts)?;
    // each n-gram above the unigrams goes through three passes: context, join, write
    let passes = counts[0] + 3 * counts[1..].iter().sum::<u64>();
    job.stage("interpolating and writing ARPA", passes)?;
    interpolate_and_write(
        adjusted,
        order,
        smoothing,
        vocab,
        (memory, dir, job),
        &mut out,
    )?;
    // the file is replaced atomically by `close`: on error the old model stays as it was
    out.close()?;
    Ok(counts)
}

/// Step 1: every predicted token's longest n-gram (up to `order`), counted, in suffix order.
fn count_highest(
    corpus: &Corpus,
    order: usize,
    memory: usize,
    dir: &WorkDir,
    job: &Job,
) -> Result<RecordStream> {
    let mut sorter = Sorter::new(
        Layout::new(order, 1, KeyOrder::Suffix),
        true,
        memory,
        dir,
        "counts",
    );
    highest_ngrams(corpus, order, None, job, |record| sorter.push(record))?;
    sorter.finish()
}

/// Hands `push` a record `[n-gram, 1]` for every predicted token's longest n-gram (up to
/// `order`; shorter ones at sentence starts are left-padded with [`PAD`]), with token ids
/// translated through `ids` if given (to another vocabulary's ids).
pub(crate) fn highest_ngrams(
    corpus: &Corpus,
    order: usize,
    ids: Option<&[u32]>,
    job: &Job,
    mut push: impl FnMut(&[u32]) -> Result<()>,
) -> Result<()> {
    job.stage("counting n-grams", corpus.num_sentences() as u64)?;
    let mut done = 0;
    let mut record = vec![PAD; order + 1];
    record[order] = 1;
    let mut sentence: Vec<u32> = Vec::new();
    for s in 0..corpus.num_sentences() {
        // <s> ... </s>, padded here rather than in a copy of the whole corpus
        sentence.clear();
        sentence.push(BOS);
        match ids {
            None => sentence.extend_from_slice(corpus.sentence(s)),
            Some(ids) => sentence.extend(corpus.sentence(s).iter().map(|&w| ids[w as usize])),
        }
        sentence.push(EOS);
        for end in 1..sentence.len() {
            let start = (end + 1).saturating_sub(order);
            let len = end + 1 - start;
            record[..order - len].fill(PAD);
            record[order - len..order].copy_from_slice(&sentence[start..=end]);
            push(&record)?;
        }
        job.tick(&mut done)?;
    }
    Ok(())
}

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

/// The unigram section's numbers: p(w) and gamma(w) by word id (linear).
struct Unigrams {
    prob: Vec<f64>,
    weight: Vec<f64>,
}

/// Steps 3 and 4.
fn interpolate_and_write(
    adjusted: Adjusted,
    order: usize,
    smoothing: &Smoothing,
    vocab: &Vocab,
    (memory, dir, job): (usize, &WorkDir, &Job),
    out: &mut ArpaFile,
) -> Result<()> {
    let Adjusted {
        unigrams,
        higher,
        mut count_of_counts,
        ..
    } = adjusted;
    // |V|: every type but <s>
    let vocab_size = (vocab.len() - 1) as f64;
    let predictable = |w: usize| w != BOS as usize;

    // unigrams, in memory
    let mut stats = ContextStats::default();
    for (w, &c) in unigrams.iter().enumerate() {
        if predictable(w) {
            stats.add(c, false);
            if (1..=4).contains(&c) {
                count_of_counts[0][c as usize] += 1;
            }
        }
    }
    let discounts: Vec<[f64; 3]> = (1..=order)
        .map(|m| order_discounts(smoothing, m, || count_of_counts[m - 1]))
        .collect::<Result<_>>()?;
    let prob: Vec<f64> = unigrams
        .iter()
        .enumerate()
        .map(|(w, &count)| {
            if !predictable(w) {
                return 0.0;
            }
            let (a, b, c) = interpolation_terms(smoothing, count, &stats, &discounts[0]);
            (a + b * (1.0 / vocab_size)) / c
        })
        .collect();
    let mut unigrams = Unigrams {
        prob,
        weight: vec![1.0; vocab.len()],
    };

    // order m-1's probabilities in suffix order (for the join) and in prefix order (to write)
    let mut lower: Option<(RecordReader, RecordStream)> = None;
    for (i, ngrams) in higher.into_iter().enumerate() {
        let m = i + 2;
        let context = ContextPass {
            m,
            smoothing,
            discounts: &discounts[m - 1],
            vocab_size,
        };
        let (terms, weights) = context.run(ngrams, (memory, dir, job), &mut unigrams.weight)?;
        let lower_probs = match lower.take() {
            None => {
                write_unigrams(out, vocab, &unigrams)?;
                job.step(vocab.len() as u64)?;
                None
            }
            Some((suffix_sorted, prefix_sorted)) => {
                write_section(out, m - 1, prefix_sorted, weights, vocab, job)?;
                Some(suffix_sorted)
            }
        };
        lower = Some(join_lower(
            terms,
            m,
            lower_probs,
            &unigrams.prob,
            (memory, dir, job),
        )?);
    }
    let (_, last) = lower.expect("order >= 2");
    write_section(out, order, last, None, vocab, job)
}

/// Step 3a for one order m: context statistics in prefix order.
struct ContextPass<'a> {
    m: usize,
    smoothing: &'a Smoothing,
    discounts: &'a [f64; 3],
    vocab_size: f64,
}

impl ContextPass<'_> {
    /// Reads order m's n-grams (prefix order, `[gram, count]`) and returns their terms `[gram,
    /// a, b, c]` in suffix order, and the weights `[context, gamma]` of the contexts (order m-1,
    /// prefix order; for unigram contexts they go into `unigram_weight` instead).
    fn run(
        &self,
        mut ngrams: RecordStream,
        (memory, dir, job): (usize, &WorkDir, &Job),
        unigram_weight: &mut [f64],
    ) -> Result<(RecordStream, Option<RecordReader>)> {
        let mut done = 0;
        let m = self.m;
        let mut terms = Sorter::new(
            Layout::new(m, 6, KeyOrder::Suffix),
            false,
            memory,
            dir,
            "terms",
        );
        let mut weights = if m > 2 {
            Some(RecordWriter::create(
                dir,
                "weights",
                Layout::new(m - 1, 2, KeyOrder::Prefix),
            )?)
        } else {
            None
        };
        let mut group: Vec<u32> = Vec::new();
        let mut row: Vec<u32> = Vec::with_capacity(m + 6);
        let mut flush = |group: &mut Vec<u32>| -> Result<()> {
            let mut stats = ContextStats::default();
            for r in group.chunks_exact(m + 1) {
                stats.add(r[m] & !PRUNED, r[m] & PRUNED != 0);
            }
            let gamma = context_weight(self.smoothing, &stats, self.discounts, self.vocab_size);
            let context = &group[..m - 1];
            match weights.as_mut() {
                None => unigram_weight[context[0] as usize] = gamma,
                Some(w) => {
                    row.clear();
                    row.extend_from_slice(context);
                    row.extend_from_slice(&f64_words(gamma));
                    w.push(&row)?;
                }
            }
            for r in group.chunks_exact(m + 1).filter(|r| r[m] & PRUNED == 0) {
                let (a, b, c) = interpolation_terms(self.smoothing, r[m], &stats, self.discounts);
                row.clear();
                row.extend_from_slice(&r[..m]);
                for x in [a, b, c] {
                    row.extend_from_slice(&f64_words(x));
                }
                terms.push(&row)?;
            }
            group.clear();
            Ok(())
        };
        while let Some(r) = ngrams.next_record()? {
            job.tick(&mut done)?;
            if !group.is_empty() && group[..m - 1] != r[..m - 1] {
                flush(&mut group)?;
            }
            group.extend_from_slice(r);
        }
        if !group.is_empty() {
            flush(&mut group)?;
        }
        let weights = weights.map(RecordWriter::into_reader).transpose()?;
        Ok((terms.finish()?, weights))
    }
}

/// Step 3b for one order m: p(w|h) = (a + b p(w|h')) / c, with p(w|h') read from order m-1's
/// probabilities in suffix order (`lower`; unigrams from `unigram_prob`). Returns order m's
/// probabilities `[gram, p]` in suffix order (a file) and in prefix order (a sorted stream).
fn join_lower(
    mut terms: RecordStream,
    m: usize,
    mut lower: Option<RecordReader>,
    unigram_prob: &[f64],
    (memory, dir, job): (usize, &WorkDir, &Job),
) -> Result<(RecordReader, RecordStream)> {
    let mut done = 0;
    let suffix_layout = Layout::new(m, 2, KeyOrder::Suffix);
    let mut suffix_sorted = RecordWriter::create(dir, "probs", suffix_layout)?;
    let mut prefix_sorted = Sorter::new(
        Layout::new(m, 2, KeyOrder::Prefix),
        false,
        memory,
        dir,
        "section",
    );
    let lower_layout = Layout::new(m - 1, 2, KeyOrder::Suffix);
    let mut current: Vec<u32> = vec![PAD; m + 1];
    let mut have_current = false;
    let mut row: Vec<u32> = Vec::with_capacity(m + 2);
    while let Some(r) = terms.next_record()? {
        job.tick(&mut done)?;
        let (a, b, c) = (
            words_f64(&r[m..]),
            words_f64(&r[m + 2..]),
            words_f64(&r[m + 4..]),
        );
        let suffix = &r[1..m];
        let lower_p = match lower.as_mut() {
            None => unigram_prob[suffix[0] as usize],
            Some(reader) => {
                // both streams are in suffix order: advance to the record of this suffix
                while !have_current
                    || lower_layout.compare(&current, suffix) == std::cmp::Ordering::Less
                {
                    match reader.next_record()? {
                        Some(l) => {
                            current.copy_from_slice(l);
                            have_current = true;
                        }
                        None => return Err(missing_suffix(suffix)),
                    }
                }
                if current[..m - 1] != *suffix {
                    return Err(missing_suffix(suffix));
                }
                words_f64(&current[m - 1..])
            }
        };
        row.clear();
        row.extend_from_slice(&r[..m]);
        row.extend_from_slice(&f64_words((a + b * lower_p) / c));
        suffix_sorted.push(&row)?;
        prefix_sorted.push(&row)?;
    }
    Ok((suffix_sorted.into_reader()?, prefix_sorted.finish()?))
}

fn missing_suffix(suffix: &[u32]) -> Error {
    // every suffix of a counted n-gram is counted: reaching this is a bug, not bad input
    Error::invalid(format!(
        "internal error: no lower-order n-gram for the suffix {suffix:?} (please report)"
    ))
}

/// Writes the unigram section: each word's probability and backoff weight (linear values).
fn write_unigrams(out: &mut ArpaFile, vocab: &Vocab, unigrams: &Unigrams) -> Result<()> {
    out.section(1)
        .and_then(|()| {
            (0..vocab.len()).try_for_each(|id| {
                let (p, weight) = (unigrams.prob[id], unigrams.weight[id]);
                out.unigram(id as u32, vocab.word(id as u32), p.ln(), weight.ln())
            })
        })
        .map_err(Error::io(out.path()))
}

/// Writes order m's section from its probabilities `[gram, p]` in prefix order, with the
/// weights `[gram, gamma]` (prefix order; only n-grams that are contexts have one) unless m is the
/// highest order.
fn write_section(
    out: &mut ArpaFile,
    m: usize,
    mut probs: RecordStream,
    mut weights: Option<RecordReader>,
    vocab: &Vocab,
    job: &Job,
) -> Result<()> {
    /// Lines formatted together (on all cores), then written in order.
    const BATCH: usize = 1 << 16;
    out.section(m).map_err(Error::io(out.path()))?;
    // [gram, p, gamma] rows
    let width = m + 4;
    let mut batch: Vec<u32> = Vec::with_capacity(BATCH * width);
    let mut weight: Vec<u32> = vec![PAD; m + 2];
    let mut have_weight = false;
    loop {
        let record = probs.next_record()?;
        if let Some(r) = record {
            let gamma = match weights.as_mut() {
                None => 1.0,
                Some(reader) => {
                    // both in prefix order: the next weight is this n-gram's, a later one's, or
                    // a pruned context's (skipped)
                    while !have_weight || weight[..m] < r[..m] {
                        have_weight = reader.read_into(&mut weight)?;
                        if !have_weight {
                            break;
                        }
                    }
                    if have_weight && weight[..m] == r[..m] {
                        have_weight = false;
                        words_f64(&weight[m..])
                    } else {
                        1.0
                    }
                }
            };
            batch.extend_from_slice(r);
            batch.extend_from_slice(&f64_words(gamma));
        }
        if batch.len() == BATCH * width || (record.is_none() && !batch.is_empty()) {
            out.ngrams(
                &batch,
                width,
                |row| (words_f64(&row[m..]).ln(), words_f64(&row[m + 2..]).ln()),
                |row, text| {
                    for (i, &w) in row[..m].iter().enumerate() {
                        if i > 0 {
                            text.push(b' ');
                        }
                        text.extend_from_slice(vocab.word(w).as_bytes());
                    }
                },
            )
            .map_err(Error::io(out.path()))?;
            job.step((batch.len() / width) as u64)?;
            batch.clear();
        }
        if record.is_none() {
            return Ok(());
        }
    }
}

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
                assert!(summary.runs > 2 * order, "{summary:?}");
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
