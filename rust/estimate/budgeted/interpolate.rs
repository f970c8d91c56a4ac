//! Steps 3 and 4 of budgeted estimation: per order, context statistics, interpolation joined
//! with the order below, and the ARPA sections written in prefix order.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use super::adjust::Adjusted;
use super::{f64_words, words_f64, PRUNED};
use crate::corpus::vocab::{self, Vocab};
use crate::error::{Error, Result};
use crate::estimate::{
    context_weight, interpolation_terms, order_discounts, ContextStats, Smoothing,
};
use crate::formats::arpa::{check_arpa_tokens, ArpaFile, ArpaWriter};
use crate::util::float_format::log10_f32;
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
pub(crate) struct Unigrams {
    pub(crate) prob: Vec<f64>,
    pub(crate) weight: Vec<f64>,
}

/// What every order's interpolation needs from the unigrams and the summed count-of-counts:
/// the discounts of each order (index m-1), the unigram probabilities (weights left at 1) and
/// |V| (every type but `<s>`).
pub(crate) struct Globals {
    pub(crate) discounts: Vec<[f64; 3]>,
    pub(crate) unigrams: Unigrams,
    pub(crate) vocab_size: f64,
}

impl Globals {
    /// Adds the unigrams' count-of-counts to `count_of_counts` (index 0) and derives the
    /// discounts and unigram probabilities from the effective unigram counts.
    pub(crate) fn new(
        unigram_counts: &[u32],
        mut count_of_counts: Vec<[u64; 5]>,
        order: usize,
        smoothing: &Smoothing,
    ) -> Result<Globals> {
        let vocab_size = (unigram_counts.len() - 1) as f64;
        // (the budgeted path always scores with sentence markers)
        let predictable = |w: usize| vocab::predictable(w as u32, true);
        let mut stats = ContextStats::default();
        for (w, &c) in unigram_counts.iter().enumerate() {
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
        let prob = unigram_counts
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
        Ok(Globals {
            discounts,
            unigrams: Unigrams {
                prob,
                weight: vec![1.0; unigram_counts.len()],
            },
            vocab_size,
        })
    }

    /// The context pass of order m.
    pub(crate) fn context_pass<'a>(
        &'a self,
        m: usize,
        smoothing: &'a Smoothing,
    ) -> ContextPass<'a> {
        ContextPass {
            m,
            smoothing,
            discounts: &self.discounts[m - 1],
            vocab_size: self.vocab_size,
        }
    }
}

/// Steps 3 and 4, in a pipeline of three threads: while order m is joined with order m-1 (this
/// thread), section m-1 is written (it needs the weights of order m's contexts) and the context
/// pass of order m+1 runs (it needs only the adjusted counts). Each step waits for all three.
/// Two sorters fill at once (the join's and the context pass's), so each gets half the memory.
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
        count_of_counts,
        ..
    } = adjusted;
    let mut globals = Globals::new(&unigrams, count_of_counts, order, smoothing)?;
    let name = out.path().to_string();
    let memory = memory / 2;
    let mut higher = higher.into_iter();
    // the context pass of the bigrams gives the unigrams' weights, which every step reads
    let bigrams = higher.next().expect("order >= 2");
    let mut unigram_weight = std::mem::take(&mut globals.unigrams.weight);
    let terms = sorted_terms(
        globals.context_pass(2, smoothing),
        bigrams,
        |context, gamma| {
            unigram_weight[context[0] as usize] = gamma;
            Ok(())
        },
        (memory, dir, job),
    )?;
    globals.unigrams.weight = unigram_weight;
    let globals = &globals;
    // order m's terms, and the weights of its contexts (none for m = 2: the unigrams' are in
    // `globals`)
    let mut context: Option<(RecordStream, Option<RecordReader>)> = Some((terms, None));
    // order m-1's probabilities in suffix order (for the join) and in prefix order (to write)
    let mut lower: Option<(RecordReader, RecordStream)> = None;
    for m in 2..=order {
        let (terms, section_weights) = context
            .take()
            .expect("each step below the highest order makes the next one's context");
        let next_ngrams = higher.next();
        let (lower_suffix, lower_prefix) = lower.take().unzip();
        let out = &mut *out;
        let name = name.as_str();
        let (next, written, joined) = std::thread::scope(|s| {
            let next = next_ngrams.map(|ngrams| {
                s.spawn(move || context_step(globals, m + 1, smoothing, ngrams, (memory, dir, job)))
            });
            let written = s.spawn(move || match lower_prefix {
                None => write_unigrams(out, vocab, &globals.unigrams, 0..vocab.len(), name)
                    .and_then(|()| job.step(vocab.len() as u64)),
                Some(prefix_sorted) => {
                    write_section(out, m - 1, prefix_sorted, section_weights, vocab, job, name)
                }
            });
            let joined = join_step(terms, m, lower_suffix, globals, (memory, dir, job));
            (next.map(join_thread), join_thread(written), joined)
        });
        written?;
        lower = Some(joined?);
        context = next
            .transpose()?
            .map(|(terms, weights)| (terms, Some(weights)));
    }
    let (_, last) = lower.expect("order >= 2");
    write_section(out, order, last, None, vocab, job, &name)
}

/// The result of a scoped thread (a panic there resumes here).
fn join_thread<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Step 3a for order m >= 3: the context pass over the order's n-grams (in prefix order), giving
/// the interpolation terms in suffix order (for the join) and the weights of the contexts in a
/// prefix-ordered file (for writing section m-1).
fn context_step(
    globals: &Globals,
    m: usize,
    smoothing: &Smoothing,
    ngrams: RecordStream,
    (memory, dir, job): (usize, &WorkDir, &Job),
) -> Result<(RecordStream, RecordReader)> {
    let mut weights =
        RecordWriter::create(dir, "weights", Layout::new(m - 1, 2, KeyOrder::Prefix))?;
    let mut row: Vec<u32> = Vec::with_capacity(m + 1);
    let terms = sorted_terms(
        globals.context_pass(m, smoothing),
        ngrams,
        |context, gamma| {
            row.clear();
            row.extend_from_slice(context);
            row.extend_from_slice(&f64_words(gamma));
            weights.push(&row)
        },
        (memory, dir, job),
    )?;
    Ok((terms, weights.into_reader()?))
}

/// The context pass `pass` over its order's n-grams, handing each context's weight to `weight`;
/// returns the interpolation terms `[gram, a, b, c]` sorted in suffix order.
fn sorted_terms(
    pass: ContextPass<'_>,
    ngrams: RecordStream,
    weight: impl FnMut(&[u32], f64) -> Result<()>,
    (memory, dir, job): (usize, &WorkDir, &Job),
) -> Result<RecordStream> {
    let mut terms = Sorter::new(
        Layout::new(pass.m, 6, KeyOrder::Suffix),
        false,
        memory,
        dir,
        "terms",
    );
    pass.run(ngrams, job, |t| terms.push(t), weight)?;
    terms.finish()
}

/// Step 3b for order m: joins its `terms` with order m-1's probabilities (`lower`, in suffix
/// order; none for m = 2) and returns order m's probabilities in suffix order and in prefix order.
fn join_step(
    terms: RecordStream,
    m: usize,
    lower: Option<RecordReader>,
    globals: &Globals,
    (memory, dir, job): (usize, &WorkDir, &Job),
) -> Result<(RecordReader, RecordStream)> {
    let mut prefix_sorted = Sorter::new(
        Layout::new(m, 2, KeyOrder::Prefix),
        false,
        memory,
        dir,
        "section",
    );
    let suffix_sorted = join_lower(terms, m, lower, &globals.unigrams.prob, (dir, job), |row| {
        prefix_sorted.push(row)
    })?;
    Ok((suffix_sorted, prefix_sorted.finish()?))
}

/// Step 3a for one order m: context statistics in prefix order.
pub(crate) struct ContextPass<'a> {
    m: usize,
    smoothing: &'a Smoothing,
    discounts: &'a [f64; 3],
    vocab_size: f64,
}

impl ContextPass<'_> {
    /// Reads order m's n-grams (prefix order, `[gram, count]`), hands each kept n-gram's terms
    /// `[gram, a, b, c]` to `term` (in prefix order) and each context's weight gamma to
    /// `weight(context, gamma)` (contexts of order m-1, in prefix order).
    pub(crate) fn run(
        &self,
        mut ngrams: RecordStream,
        job: &Job,
        mut term: impl FnMut(&[u32]) -> Result<()>,
        mut weight: impl FnMut(&[u32], f64) -> Result<()>,
    ) -> Result<()> {
        let mut done = 0;
        let m = self.m;
        let mut group: Vec<u32> = Vec::new();
        let mut row: Vec<u32> = Vec::with_capacity(m + 6);
        let mut flush = |group: &mut Vec<u32>| -> Result<()> {
            let mut stats = ContextStats::default();
            for r in group.chunks_exact(m + 1) {
                stats.add(r[m] & !PRUNED, r[m] & PRUNED != 0);
            }
            let gamma = context_weight(self.smoothing, &stats, self.discounts, self.vocab_size);
            weight(&group[..m - 1], gamma)?;
            for r in group.chunks_exact(m + 1).filter(|r| r[m] & PRUNED == 0) {
                let (a, b, c) = interpolation_terms(self.smoothing, r[m], &stats, self.discounts);
                row.clear();
                row.extend_from_slice(&r[..m]);
                for x in [a, b, c] {
                    row.extend_from_slice(&f64_words(x));
                }
                term(&row)?;
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
        Ok(())
    }
}

/// Step 3b for one order m: p(w|h) = (a + b p(w|h')) / c, with p(w|h') read from order m-1's
/// probabilities in suffix order (`lower`; unigrams from `unigram_prob`). Hands order m's
/// probabilities `[gram, p]` to `emit` (in suffix order) and returns them as a file in suffix
/// order (the next order's `lower`).
pub(crate) fn join_lower(
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
        row.extend_from_slice(&f64_words((a + b * lower_p) / c));
        suffix_sorted.push(&row)?;
        emit(&row)?;
    }
    suffix_sorted.into_reader()
}

fn missing_suffix(suffix: &[u32]) -> Error {
    // every suffix of a counted n-gram is counted: reaching this is a bug, not bad input
    Error::invalid(format!(
        "internal error: no lower-order n-gram for the suffix {suffix:?} (please report)"
    ))
}

/// Writes the unigram lines of the words `ids`: each word's probability and backoff weight
/// (linear values); the section line is written first (not by a piece writer, see [`ArpaWriter::piece`]).
pub(crate) fn write_unigrams<W: Write>(
    out: &mut ArpaWriter<W>,
    vocab: &Vocab,
    unigrams: &Unigrams,
    ids: Range<usize>,
    name: &str,
) -> Result<()> {
    out.section(1)
        .and_then(|()| {
            ids.into_iter().try_for_each(|id| {
                let (p, weight) = (unigrams.prob[id], unigrams.weight[id]);
                out.unigram(id as u32, vocab.word(id as u32), p.ln(), weight.ln())
            })
        })
        .map_err(Error::io(name))
}

/// Writes order m's section from its probabilities `[gram, p]` in prefix order, with the
/// weights `[gram, gamma]` (prefix order; only n-grams that are contexts have one) unless m is the
/// highest order; the section line is written first (not by a piece writer, see [`ArpaWriter::piece`]).
pub(crate) fn write_section<W: Write + Send>(
    out: &mut ArpaWriter<W>,
    m: usize,
    mut probs: RecordStream,
    mut weights: Option<RecordReader>,
    vocab: &Vocab,
    job: &Job,
    name: &str,
) -> Result<()> {
    /// Lines formatted together (on all cores), then written in order.
    const BATCH: usize = 1 << 16;
    out.section(m).map_err(Error::io(name))?;
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
                |row| {
                    (
                        log10_f32(words_f64(&row[m..]).ln()),
                        log10_f32(words_f64(&row[m + 2..]).ln()),
                    )
                },
                |_| {
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
            .map_err(Error::io(name))?;
            job.step((batch.len() / width) as u64)?;
            batch.clear();
        }
        if record.is_none() {
            return Ok(());
        }
    }
}
