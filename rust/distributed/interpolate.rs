//! Step 4 of distributed estimation, partitioned: interpolation and the ARPA file.
//!
//! The n-grams of each order are cut two ways (see steps 4a–4d in the [parent](super)):
//! - in **ranges of their first word** (contiguous ids, [`word_ranges`]): in prefix order a
//!   range holds every continuation of its contexts, and a context is an n-gram of the same
//!   range one order down, so the context statistics, the weights gamma and the ARPA lines of a
//!   range need nothing from the others, and the sections' pieces are contiguous in the file;
//! - in **hash partitions of their last word** ([`super::partition_of`], those of step 3): an
//!   n-gram's suffix ends with the same word, so the join with the order below (in suffix order)
//!   needs nothing from other partitions, and one task joins every order of its partition,
//!   lowest first.
//!
//! Every number is computed by the functions of [`crate::estimate::budgeted`] (the context
//! statistics and terms of its context pass, p(w|h) by [`interpolated`]), each context's
//! continuations in the same order, so the file is the single-machine one byte for byte. The
//! single machine computes the terms and the join in one pass in context order
//! ([`crate::util::spill::KeyOrder::Context`]); here the terms are computed per range of first
//! words (in prefix order) and sent to the partitions, which join them in suffix order
//! ([`join_lower`]).

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{adjusted_path, first_words_path, io_error, merge_each, read_vocab, unigrams_path};
use super::{partition_of, PartitionSummary};
use super::{write_atomically, write_stream};
use crate::corpus::vocab::Vocab;
use crate::error::{Error, Result};
use crate::estimate::budgeted::{
    arpa_word, f64_words, interpolated, missing_suffix, words_f64, write_section, write_unigrams,
    Globals,
};
use crate::estimate::Smoothing;
use crate::formats::arpa::{check_arpa_tokens, ArpaFile, ArpaWriter};
use crate::util::job::Job;
use crate::util::spill::{
    first_word_span, KeyOrder, Layout, RecordReader, RecordStream, RecordWriter, Sorter, WorkDir,
    PAD,
};

/// Step 4a's weights gamma of the contexts of order `m` (n-grams of order m, first word in
/// `range`; prefix order, see [`weights_layout`]).
fn weights_path(job: &Path, m: usize, range: usize) -> PathBuf {
    job.join("weights")
        .join(format!("o{m}"))
        .join(format!("r{range:05}.bin"))
}

/// The records of [`weights_path`]: `[gram, gamma]` for the unigrams (their section is written
/// from the linear values, see [`write_unigrams`]), `[gram, log10 gamma]` above (see
/// [`arpa_word`]).
fn weights_layout(m: usize) -> Layout {
    Layout::new(m, if m == 1 { 2 } else { 1 }, KeyOrder::Prefix)
}

/// Step 4a's terms of order `m` for the join of `partition` (`[gram, a, b, c]`, suffix order).
fn terms_path(job: &Path, m: usize, partition: usize, range: usize) -> PathBuf {
    job.join("terms")
        .join(format!("o{m}"))
        .join(format!("p{partition:05}"))
        .join(format!("r{range:05}.bin"))
}

/// Step 4b's probabilities of order `m` for the writer of `range` (`[gram, log10 p]` as
/// [`arpa_word`], prefix order).
fn probs_path(job: &Path, m: usize, range: usize, partition: usize) -> PathBuf {
    job.join("probs")
        .join(format!("o{m}"))
        .join(format!("r{range:05}"))
        .join(format!("p{partition:05}.bin"))
}

/// Step 4c's lines of section `m` for the words of `range`.
fn piece_path(job: &Path, m: usize, range: usize) -> PathBuf {
    job.join("pieces")
        .join(format!("o{m}"))
        .join(format!("r{range:05}.txt"))
}

/// Cuts the word ids `0..weights.len()` into `ranges` contiguous ranges of about equal total
/// weight (the last ones may be empty).
pub fn word_ranges(weights: &[u64], ranges: usize) -> Vec<Range<u32>> {
    let total: u64 = weights.iter().sum();
    let mut bounds = vec![0u32];
    let mut sum = 0u64;
    for (id, &w) in weights.iter().enumerate() {
        // close range k once its share total * k / ranges is reached
        while bounds.len() < ranges
            && u128::from(sum) * ranges as u128 >= u128::from(total) * bounds.len() as u128
            && sum > 0
        {
            bounds.push(id as u32);
        }
        sum += w;
    }
    while bounds.len() < ranges + 1 {
        bounds.push(weights.len() as u32);
    }
    bounds.windows(2).map(|b| b[0]..b[1]).collect()
}

/// The range (index) of `word`.
fn range_of(ranges: &[Range<u32>], word: u32) -> usize {
    ranges.partition_point(|r| r.end <= word)
}

/// One sorter per partition or range, `memory` bytes among them.
fn sorters<'d>(
    n: usize,
    layout: Layout,
    memory: usize,
    dir: &'d WorkDir,
    name: &str,
) -> Vec<Sorter<'d>> {
    (0..n)
        .map(|_| Sorter::new(layout, false, memory / n, dir, name))
        .collect()
}

/// Writes the records of sorter `i` to `path(i)`.
fn write_sorted(sorters: Vec<Sorter<'_>>, path: impl Fn(usize) -> PathBuf) -> Result<()> {
    for (i, sorter) in sorters.into_iter().enumerate() {
        write_stream(&path(i), sorter.finish()?, |_| {})?;
    }
    Ok(())
}

/// What every task of step 4 derives alike from the job directory and the summed figures.
struct Setup {
    vocab: Vocab,
    globals: Globals,
    ranges: Vec<Range<u32>>,
}

impl Setup {
    fn new(step: Step<'_>, totals: &PartitionSummary) -> Result<Setup> {
        let Step {
            job,
            partitions,
            order,
            smoothing,
            ..
        } = step;
        if partitions == 0 {
            return Err(Error::invalid("partitions must be at least 1".to_string()));
        }
        let vocab = read_vocab(job)?;
        check_arpa_tokens(vocab.words())?;
        let counts = unigram_counts(job, partitions, vocab.len())?;
        let globals = Globals::new(&counts, totals.count_of_counts.clone(), order, smoothing)?;
        // a range's work: its words' unigram lines and the n-grams starting with them
        let mut weights: Vec<u64> =
            sum_partition_files(partitions, vocab.len(), |p| first_words_path(job, p))?;
        for w in &mut weights {
            *w += 1;
        }
        let ranges = word_ranges(&weights, partitions);
        Ok(Setup {
            vocab,
            globals,
            ranges,
        })
    }
}

/// The effective unigram counts, summed over the partitions' files of step 3 (each word's
/// count is in its own partition's file, zeros elsewhere).
pub(super) fn unigram_counts(job: &Path, partitions: usize, vocab_len: usize) -> Result<Vec<u32>> {
    sum_partition_files(partitions, vocab_len, |p| unigrams_path(job, p))
}

/// The element-wise sum of the per-word arrays (`len` numbers each) in the files `path(0..n)`.
pub(super) fn sum_partition_files<T: bytemuck::Pod + std::ops::AddAssign>(
    partitions: usize,
    len: usize,
    path: impl Fn(usize) -> PathBuf,
) -> Result<Vec<T>> {
    let mut sums = vec![T::zeroed(); len];
    let size = size_of::<T>();
    for partition in 0..partitions {
        let file = path(partition);
        let bytes = std::fs::read(&file).map_err(io_error(&file))?;
        if bytes.len() != len * size {
            return Err(io_error(&file)(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "per-word numbers of the wrong size (a different vocabulary?)",
            )));
        }
        for (sum, chunk) in sums.iter_mut().zip(bytes.chunks_exact(size)) {
            *sum += bytemuck::pod_read_unaligned::<T>(chunk);
        }
    }
    Ok(sums)
}

/// The arguments every task of step 4 shares.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The job directory.
    pub job: &'a Path,
    /// Partitions of step 3 (and ranges of step 4).
    pub partitions: usize,
    /// The model's order.
    pub order: usize,
    /// The estimator.
    pub smoothing: &'a Smoothing,
    /// Bytes of sort buffers.
    pub memory: usize,
}

/// Step 4a, per range of first words: each order's context statistics, the weights gamma of
/// the range's contexts, and the terms of its n-grams, sorted for the join in each partition.
pub fn context_range(
    step: Step<'_>,
    totals: &PartitionSummary,
    range: usize,
    task: &Job,
) -> Result<()> {
    let Step {
        job,
        partitions,
        order,
        smoothing,
        memory,
    } = step;
    let setup = Setup::new(step, totals)?;
    let words = setup.ranges[range].clone();
    let dir = WorkDir::new(job)?;
    task.stage("context statistics", 0)?;
    for m in 2..=order {
        let layout = Layout::new(m, 1, KeyOrder::Prefix);
        let spans = (0..partitions)
            .map(|p| {
                let path = adjusted_path(job, m, p);
                let span = first_word_span(&path, layout, words.clone())?;
                Ok((path, span))
            })
            .collect::<Result<Vec<_>>>()?;
        let ngrams = RecordStream::merge_spans(&spans, layout, false, memory / 2)?;
        let suffix_terms = Layout::new(m, 6, KeyOrder::Suffix);
        let mut terms = sorters(partitions, suffix_terms, memory / 2, &dir, "terms");
        let weights = weights_path(job, m - 1, range);
        write_atomically(&weights, |out| {
            let mut row: Vec<u32> = Vec::with_capacity(m + 1);
            let mut term: Vec<u32> = Vec::with_capacity(m + 6);
            setup.globals.context_pass(m, smoothing).run(
                ngrams,
                task,
                |gram, (a, b, c)| {
                    term.clear();
                    term.extend_from_slice(gram);
                    for x in [a, b, c] {
                        term.extend_from_slice(&f64_words(x));
                    }
                    terms[partition_of(gram[m - 1], partitions)].push(&term)
                },
                |context, gamma| {
                    row.clear();
                    row.extend_from_slice(context);
                    if m == 2 {
                        row.extend_from_slice(&f64_words(gamma));
                    } else {
                        row.push(arpa_word(gamma));
                    }
                    out.write_all(bytemuck::cast_slice(&row))
                        .map_err(io_error(&weights))
                },
            )
        })?;
        write_sorted(terms, |p| terms_path(job, m, p, range))?;
    }
    Ok(())
}

/// Step 4b, per partition of last words: p(w|h) = (a + b p(w|h')) / c for every order of the
/// partition, lowest first (h' ends with w: its probability is the partition's too), written
/// in prefix order for each range's writer.
pub fn join_partition(
    step: Step<'_>,
    totals: &PartitionSummary,
    partition: usize,
    task: &Job,
) -> Result<()> {
    let Step {
        job,
        partitions,
        order,
        memory,
        ..
    } = step;
    let setup = Setup::new(step, totals)?;
    let dir = WorkDir::new(job)?;
    task.stage("interpolating", 0)?;
    let mut lower: Option<RecordReader> = None;
    for m in 2..=order {
        let terms = merge_each(
            partitions,
            |r| terms_path(job, m, partition, r),
            Layout::new(m, 6, KeyOrder::Suffix),
            false,
            memory / 2,
        )?;
        let prefix_probs = Layout::new(m, 1, KeyOrder::Prefix);
        let mut probs = sorters(partitions, prefix_probs, memory / 2, &dir, "probs");
        let mut arpa_row: Vec<u32> = Vec::with_capacity(m + 1);
        lower = Some(join_lower(
            terms,
            m,
            lower,
            &setup.globals.unigrams.prob,
            (&dir, task),
            |row| {
                arpa_row.clear();
                arpa_row.extend_from_slice(&row[..m]);
                arpa_row.push(arpa_word(words_f64(&row[m..])));
                probs[range_of(&setup.ranges, row[0])].push(&arpa_row)
            },
        )?);
        write_sorted(probs, |r| probs_path(job, m, r, partition))?;
    }
    Ok(())
}

/// Step 4b for one order m: p(w|h) = (a + b p(w|h')) / c, with p(w|h') read from order m-1's
/// probabilities in suffix order (`lower`; unigrams from `unigram_prob`). Hands order m's
/// probabilities `[gram, p]` to `emit` (in suffix order) and returns them as a file in suffix
/// order (the next order's `lower`).
fn join_lower(
    mut terms: RecordStream,
    m: usize,
    mut lower: Option<RecordReader>,
    unigram_prob: &[f64],
    (dir, job): (&WorkDir, &Job),
    mut emit: impl FnMut(&[u32]) -> Result<()>,
) -> Result<RecordReader> {
    let mut done = 0;
    let suffix_layout = Layout::new(m, 2, KeyOrder::Suffix);
    let mut suffix_sorted = RecordWriter::create(dir, "probs", suffix_layout)?;
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
        row.extend_from_slice(&f64_words(interpolated(a, b, c, lower_p)));
        suffix_sorted.push(&row)?;
        emit(&row)?;
    }
    suffix_sorted.into_reader()
}

/// Step 4c, per range of first words: the range's lines of every section.
pub fn write_range(
    step: Step<'_>,
    totals: &PartitionSummary,
    range: usize,
    task: &Job,
) -> Result<()> {
    let Step {
        job,
        partitions,
        order,
        memory,
        ..
    } = step;
    let Setup {
        vocab,
        mut globals,
        ranges,
    } = Setup::new(step, totals)?;
    task.stage("writing ARPA", 0)?;
    let words = ranges[range].clone();
    let weights =
        |m: usize| RecordReader::open_kept(weights_path(job, m, range), weights_layout(m));
    let mut unigram_weights = weights(1)?;
    while let Some(r) = unigram_weights.next_record()? {
        globals.unigrams.weight[r[0] as usize] = words_f64(&r[1..]);
    }
    for m in 1..=order {
        let path = piece_path(job, m, range);
        let name = path.display().to_string();
        write_atomically(&path, |out| {
            let mut piece = ArpaWriter::piece(out, order, m);
            if m == 1 {
                let ids = words.start as usize..words.end as usize;
                write_unigrams(&mut piece, &vocab, &globals.unigrams, ids, &name)
            } else {
                let probs = merge_each(
                    partitions,
                    |p| probs_path(job, m, range, p),
                    Layout::new(m, 1, KeyOrder::Prefix),
                    false,
                    memory,
                )?;
                let gammas = if m < order { Some(weights(m)?) } else { None };
                write_section(&mut piece, m, probs, gammas, &vocab, task, &name)
            }
        })?;
    }
    Ok(())
}

/// Step 4d, once: the ARPA file at `path` (compressed by its extension; removed on failure),
/// the header with `ngram_counts` (orders 2..=N; the unigrams are the vocabulary) and each
/// section's pieces in range order; returns the n-grams per order, as the header states them.
pub fn assemble_arpa(
    job: &Path,
    partitions: usize,
    mut ngram_counts: Vec<u64>,
    path: &Path,
) -> Result<Vec<u64>> {
    ngram_counts[0] = read_vocab(job)?.len() as u64;
    let mut out = ArpaFile::create(path, &ngram_counts)?;
    for m in 1..=ngram_counts.len() {
        out.section(m).map_err(Error::io(path))?;
        for range in 0..partitions {
            let piece = piece_path(job, m, range);
            let mut file = std::fs::File::open(&piece).map_err(io_error(&piece))?;
            out.append(&mut file).map_err(Error::io(path))?;
        }
    }
    out.close()?;
    Ok(ngram_counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_ranges_cover_the_ids_in_shares_of_the_weight() {
        let weights = [5u64, 1, 1, 1, 1, 1, 0, 0, 5, 5];
        for n in 1..=12 {
            let ranges = word_ranges(&weights, n);
            assert_eq!(ranges.len(), n);
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges[n - 1].end, weights.len() as u32);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            for word in 0..weights.len() as u32 {
                assert!(ranges[range_of(&ranges, word)].contains(&word));
            }
        }
        let halves = word_ranges(&weights, 2);
        assert_eq!(halves, vec![0..6, 6..10]);
        assert_eq!(word_ranges(&[0, 0], 3), vec![0..2, 2..2, 2..2]);
    }
}
