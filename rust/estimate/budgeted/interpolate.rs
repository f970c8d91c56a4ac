//! Steps 3 and 4 of budgeted estimation: per order, context statistics, interpolation joined
//! with the order below, and the ARPA sections written in prefix order.

use std::path::Path;

use super::adjust::Adjusted;
use super::{f64_words, words_f64, PRUNED};
use crate::corpus::vocab::{Vocab, BOS};
use crate::error::{Error, Result};
use crate::estimate::{
    context_weight, interpolation_terms, order_discounts, ContextStats, Smoothing,
};
use crate::formats::arpa::{check_arpa_tokens, ArpaFile};
use crate::util::job::Job;
use crate::util::spill::{
    KeyOrder, Layout, RecordReader, RecordStream, RecordWriter, Sorter, WorkDir, PAD,
};

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
                || {
                    |row: &[u32], text: &mut Vec<u8>| {
                        for (i, &w) in row[..m].iter().enumerate() {
                            if i > 0 {
                                text.push(b' ');
                            }
                            text.extend_from_slice(vocab.word(w).as_bytes());
                        }
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
