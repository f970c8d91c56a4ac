//! Steps 3 and 4 of budgeted estimation: per order, context statistics, interpolation joined
//! with the order below, and the ARPA sections written in prefix order.

use std::cell::Cell;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use super::adjust::Adjusted;
use super::{arpa_word, f64_words, words_f64, PRUNED};
use crate::corpus::vocab::{self, Vocab};
use crate::error::{Error, Result};
use crate::estimate::{
    context_weight, interpolation_terms, order_discounts, ContextStats, Smoothing,
};
use crate::formats::arpa::{check_arpa_tokens, ArpaFile, ArpaWriter, WordsOfRows};
use crate::util::growing_file::GrowingFile;
use crate::util::job::Job;
use crate::util::spill::{
    KeyOrder, Layout, ReadAhead, RecordReader, RecordStream, RecordWriter, Records, Sorter,
    WorkDir, PAD,
};
use crate::util::words::{copy_words, equal_words, extend_words};

/// The highest order whose context pass reads its n-grams through a [`ReadAhead`]: orders 2 and
/// 3 run with nothing but the unigrams written beside them, so reading their n-grams can take
/// the other core (Gutenberg 5-gram, -S 2G, Intel host, December 6: the two passes 0.6-0.7 s and
/// 2.9-3.2 s against 0.9 s and 3.5-3.6 s, when each order was a merge of sorted runs; since it
/// is one file from step 2, 0.58-0.67 s and 2.40-2.98 s against 0.68-0.79 s and 2.65-3.15 s,
/// three alternated pairs). From order 4 a section is written beside the pass and both cores
/// are busy: reading ahead there gained nothing.
const READ_AHEAD_UP_TO: usize = 3;

/// Steps 3 and 4: writes the model of the `adjusted` counts as ARPA to `path` (atomically: on
/// failure the file there is left as it was); returns the n-grams per order, as the header states
/// them.
pub(crate) fn write_adjusted(
    adjusted: Adjusted<RecordReader>,
    order: usize,
    smoothing: &Smoothing,
    vocab: &Vocab,
    (memory, dir, job): (usize, &WorkDir, &Job),
    path: &Path,
) -> Result<Vec<u64>> {
    check_arpa_tokens(vocab.words())?;
    let counts = adjusted.ngram_counts.clone();
    let mut out = ArpaFile::create(path, &counts)?;
    // each n-gram above the unigrams goes through two passes: interpolation, write
    let passes = counts[0] + 2 * counts[1..].iter().sum::<u64>();
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

/// Order m's results of step 3.
struct Interpolated {
    /// Its probabilities `[gram, p]` in context order, for the join of order m+1 (none for the
    /// highest order).
    context_sorted: Option<RecordReader>,
    /// The same in prefix order, for its section.
    prefix_sorted: RecordStream,
    /// The weights `[context, gamma]` of its contexts in prefix order, for section m-1 (none for
    /// the bigrams, whose contexts' weights are the unigrams'): a context may come more than
    /// once, its copies side by side (see [`Sorter::with_prefix_values`]).
    context_weights: Option<RecordStream>,
}

/// A section of the ARPA file, ready to write.
enum Section {
    /// The unigrams, from [`Globals`].
    Unigrams,
    /// Order m's probabilities `[gram, p]` and the weights `[gram, gamma]` of those that are
    /// contexts (none for the highest order), both in prefix order.
    Ngrams {
        m: usize,
        probs: Box<RecordStream>,
        weights: Option<Box<RecordStream>>,
    },
}

impl Section {
    fn write(
        self,
        out: &mut ArpaFile,
        globals: &Globals,
        vocab: &Vocab,
        job: &Job,
        name: &str,
    ) -> Result<()> {
        match self {
            Section::Unigrams => {
                write_unigrams(out, vocab, &globals.unigrams, 0..vocab.len(), name)
                    .and_then(|()| job.step(vocab.len() as u64))
            }
            Section::Ngrams { m, probs, weights } => {
                write_section(out, m, *probs, weights.map(|w| *w), vocab, job, name)
            }
        }
    }
}

/// Steps 3 and 4, in a pipeline of two threads: while order m is interpolated (this thread),
/// section m-2 is written (section m-1 needs the weights of order m's contexts, which order m's
/// section sort gives beside it).
fn interpolate_and_write(
    adjusted: Adjusted<RecordReader>,
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
    // One sort fills at a time (order m's section), with half the memory: the whole of it was no
    // faster (Gutenberg 5-gram, -S 2G, Intel host, December 6: 35.3-35.8 s against 34.0-36.1 s)
    // and took the peak from 1.77-1.90 GB to 2.05 GB, lmplz's own.
    let memory = memory / 2;
    let mut higher = higher.into_iter();
    // the contexts of the bigrams are the unigrams, whose weights stay in memory
    let mut unigram_weight = std::mem::take(&mut globals.unigrams.weight);
    let bigrams = interpolate_order(
        &globals,
        (2, order),
        smoothing,
        higher.next().expect("order >= 2"),
        None,
        ContextWeights::Unigrams(&mut unigram_weight),
        (memory, dir, job),
    )?;
    globals.unigrams.weight = unigram_weight;
    let mut to_write = Section::Unigrams;
    let mut lower = bigrams;
    for m in 3..=order {
        let ngrams = higher
            .next()
            .expect("the adjusted counts hold every order above 1");
        (to_write, lower) = interpolate_while_writing(
            to_write,
            (m, order, ngrams, lower),
            (&globals, smoothing, vocab),
            (memory, dir, job),
            out,
        )?;
    }
    // no sort is left to run: the arrays kept for them are let go
    dir.free_sort_memory();
    write_last_sections(
        to_write,
        lower.prefix_sorted,
        (order, &globals, vocab),
        (dir, job),
        out,
    )
}

/// One step of [`interpolate_and_write`]'s pipeline: `to_write` (section m-2) is written on a
/// thread of its own while order m (`ngrams`) is interpolated on this one, joined with `lower`
/// (order m-1's results), its contexts' weights sorted for section m-1. Returns section m-1,
/// now ready to write, and order m's results.
fn interpolate_while_writing(
    to_write: Section,
    (m, order, ngrams, lower): (usize, usize, RecordReader, Interpolated),
    (globals, smoothing, vocab): (&Globals, &Smoothing, &Vocab),
    (memory, dir, job): (usize, &WorkDir, &Job),
    out: &mut ArpaFile,
) -> Result<(Section, Interpolated)> {
    let name = out.path().to_string();
    let Interpolated {
        context_sorted,
        prefix_sorted,
        ..
    } = lower;
    let (written, interpolated) = std::thread::scope(|s| {
        let written = s.spawn(|| to_write.write(out, globals, vocab, job, &name));
        let interpolated = interpolate_order(
            globals,
            (m, order),
            smoothing,
            ngrams,
            context_sorted,
            ContextWeights::InSection,
            (memory, dir, job),
        );
        (join_thread(written), interpolated)
    });
    written?;
    let mut interpolated = interpolated?;
    let section = Section::Ngrams {
        m: m - 1,
        probs: Box::new(prefix_sorted),
        weights: interpolated.context_weights.take().map(Box::new),
    };
    Ok((section, interpolated))
}

/// Writes the last two sections, ready at once: the highest order's lines (from its
/// probabilities in prefix order) go to a piece in the work directory while section N-1
/// (`before_last`) is written; then the piece is copied after it as it grows (most of it is
/// written by then, and the rest is copied while it is).
fn write_last_sections(
    before_last: Section,
    last: RecordStream,
    (order, globals, vocab): (usize, &Globals, &Vocab),
    (dir, job): (&WorkDir, &Job),
    out: &mut ArpaFile,
) -> Result<()> {
    let name = out.path().to_string();
    let piece = dir.file("last-section");
    let piece_name = piece.display().to_string();
    let file = std::fs::File::create(&piece).map_err(Error::io(&piece_name))?;
    let reader = std::fs::File::open(&piece).map_err(Error::io(&piece_name))?;
    let growing = GrowingFile::new();
    let (written, piece_written) = std::thread::scope(|s| {
        let piece_written = s.spawn(|| {
            let mut lines = ArpaWriter::piece(
                BufWriter::with_capacity(1 << 20, growing.writer(file)),
                order,
                order,
            );
            write_section(
                &mut lines,
                order,
                last,
                None::<RecordStream>,
                vocab,
                job,
                &piece_name,
            )?;
            lines
                .finish()
                .and_then(|mut file| file.flush())
                .map_err(Error::io(&piece_name))
        });
        let written = before_last
            .write(out, globals, vocab, job, &name)
            .and_then(|()| {
                out.section(order)
                    .and_then(|()| growing.follow(reader, |lines| out.append(lines)))
                    .map_err(Error::io(&name))
            });
        (written, join_thread(piece_written))
    });
    // a failed piece ends the copy early: its error is the one to report
    piece_written?;
    let bytes = written?;
    dir.wrote(usize::try_from(bytes).unwrap_or(usize::MAX));
    std::fs::remove_file(&piece).map_err(Error::io(&piece_name))
}

/// The result of a scoped thread (a panic there resumes here).
fn join_thread<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Step 3 for order m of a model of order `n`: the context pass over the order's n-grams (in
/// context order, `[gram, count]`), each context's weight gamma going to `weights`, joined with
/// order m-1's probabilities in context order (`lower`; none for m = 2: the unigrams' are in
/// `globals`): p(w|h) = (a + b p(w|h')) / c, kept in context order for the order above
/// (`[gram, p]`) and sorted in prefix order for the section (`[gram, log10 p]`, see
/// [`arpa_word`]; above the bigrams with the weight of the n-gram's context, kept apart by the
/// sort, see [`ContextWeights::InSection`]). In context order the n-grams that share h' minus
/// its last word come together, and the order below holds the continuations of that context
/// together, in the same order: one block of it at a time answers them. Up to [`READ_AHEAD_UP_TO`] the n-grams are merged ahead on
/// a thread of their own.
fn interpolate_order(
    globals: &Globals,
    (m, n): (usize, usize),
    smoothing: &Smoothing,
    ngrams: RecordReader,
    lower: Option<RecordReader>,
    mut weights: ContextWeights<'_>,
    (memory, dir, job): (usize, &WorkDir, &Job),
) -> Result<Interpolated> {
    let layout = Layout::new(m, 1, KeyOrder::Prefix);
    let mut prefix_sorted = match weights {
        ContextWeights::Unigrams(_) => Sorter::new(layout, false, memory, dir, "section"),
        ContextWeights::InSection => {
            Sorter::with_prefix_values(layout, m - 1, memory, dir, "section")
        }
    };
    // the weight of the context whose n-grams come (set before them by the pass)
    let context_weight = Cell::new(None::<u32>);
    let mut context_sorted = if m < n {
        Some(RecordWriter::create(
            dir,
            "probs",
            Layout::new(m, 2, KeyOrder::Context),
        )?)
    } else {
        None
    };
    let mut lower = lower.map(|reader| LowerBlocks::new(reader, m - 1));
    let unigram_prob = &globals.unigrams.prob;
    let mut row: Vec<u32> = Vec::with_capacity(m + 2);
    let mut term = |gram: &[u32], (a, b, c): (f64, f64, f64)| {
        let suffix = &gram[1..];
        let lower_p = match lower.as_mut() {
            None => unigram_prob[suffix[0] as usize],
            Some(blocks) => blocks.prob(suffix)?,
        };
        let p = interpolated(a, b, c, lower_p);
        row.clear();
        extend_words(&mut row, gram);
        if let Some(file) = context_sorted.as_mut() {
            row.extend_from_slice(&f64_words(p));
            file.push(&row)?;
            row.truncate(m);
        }
        row.push(arpa_word(p));
        row.extend(context_weight.get());
        prefix_sorted.push(&row)
    };
    let mut weight = |context: &[u32], gamma: f64| {
        match &mut weights {
            ContextWeights::Unigrams(unigram) => unigram[context[0] as usize] = gamma,
            ContextWeights::InSection => context_weight.set(Some(arpa_word(gamma))),
        }
        Ok(())
    };
    let pass = globals.context_pass(m, smoothing);
    if m <= READ_AHEAD_UP_TO {
        pass.run(ReadAhead::new(ngrams, m + 1), job, &mut term, &mut weight)?;
    } else {
        pass.run(ngrams, job, &mut term, &mut weight)?;
    }
    let (prefix_sorted, context_weights) = match weights {
        ContextWeights::Unigrams(_) => (prefix_sorted.finish()?, None),
        ContextWeights::InSection => {
            let (records, weights) = prefix_sorted.finish_with_prefix_values()?;
            (records, Some(weights))
        }
    };
    Ok(Interpolated {
        context_sorted: context_sorted.map(RecordWriter::into_reader).transpose()?,
        prefix_sorted,
        context_weights,
    })
}

/// Where an order's context pass puts the weights gamma of its contexts.
enum ContextWeights<'a> {
    /// The bigrams': into the unigrams' array (linear, by word id).
    Unigrams(&'a mut [f64]),
    /// Above: into the records of the order's section, each n-gram carrying its context's
    /// weight (an [`arpa_word`]), which the section's sorter keeps apart as prefix values. A
    /// context whose continuations are all pruned is carried by none, but its weight is exactly
    /// 1 (its pruned counts over the same total): what section m-1 writes for an n-gram with no
    /// weight.
    InSection,
}

/// p(w|h) from an n-gram's interpolation terms and p(w|h'): the one formula of both joins.
#[inline]
pub(crate) fn interpolated(a: f64, b: f64, c: f64, lower_p: f64) -> f64 {
    (a + b * lower_p) / c
}

/// The probabilities of one order (k words) in context order, held one context's block at a
/// time: the continuations of a (k-1)-word context, by last word.
struct LowerBlocks {
    reader: RecordReader,
    k: usize,
    /// The block's context, its continuations' last words (ascending) and probabilities.
    context: Vec<u32>,
    words: Vec<u32>,
    probs: Vec<f64>,
    /// The first record of the next block, once read.
    next: Vec<u32>,
    have_next: bool,
    /// Where the last word asked for was found: the words of one context are asked for in
    /// ascending order.
    cursor: usize,
}

impl LowerBlocks {
    fn new(reader: RecordReader, k: usize) -> Self {
        LowerBlocks {
            reader,
            k,
            context: Vec::with_capacity(k),
            words: Vec::new(),
            probs: Vec::new(),
            next: vec![0; k + 2],
            have_next: false,
            cursor: 0,
        }
    }

    /// The probability of `suffix` (k words); suffixes come in context order.
    fn prob(&mut self, suffix: &[u32]) -> Result<f64> {
        let (context, word) = suffix.split_at(self.k - 1);
        let word = word[0];
        if (self.words.is_empty() || !equal_words(&self.context, context)) && !self.seek(context)? {
            return Err(missing_suffix(suffix));
        }
        if word < self.words[self.cursor] {
            // a word of the next n-gram context
            self.cursor = 0;
        }
        let at = self.cursor + self.words[self.cursor..].partition_point(|&w| w < word);
        if self.words.get(at) != Some(&word) {
            return Err(missing_suffix(suffix));
        }
        self.cursor = at;
        Ok(self.probs[at])
    }

    /// Reads blocks up to that of `context`; false if there is none (the blocks come in
    /// suffix order of their contexts).
    fn seek(&mut self, context: &[u32]) -> Result<bool> {
        let k = self.k;
        loop {
            if !self.have_next && !self.reader.read_into(&mut self.next)? {
                return Ok(false);
            }
            self.context.clear();
            extend_words(&mut self.context, &self.next[..k - 1]);
            self.words.clear();
            self.probs.clear();
            self.words.push(self.next[k - 1]);
            self.probs.push(words_f64(&self.next[k..]));
            self.have_next = false;
            while let Some(r) = self.reader.next_record()? {
                if !equal_words(&r[..k - 1], &self.context) {
                    copy_words(&mut self.next, r);
                    self.have_next = true;
                    break;
                }
                self.words.push(r[k - 1]);
                self.probs.push(words_f64(&r[k..]));
            }
            self.cursor = 0;
            match self.context.iter().rev().cmp(context.iter().rev()) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Ok(true),
                std::cmp::Ordering::Greater => return Ok(false),
            }
        }
    }
}

/// The context statistics of one order m.
pub(crate) struct ContextPass<'a> {
    m: usize,
    smoothing: &'a Smoothing,
    discounts: &'a [f64; 3],
    vocab_size: f64,
}

impl ContextPass<'_> {
    /// Reads order m's n-grams (`[gram, count]`, in an order where the continuations of a
    /// context are contiguous: prefix or context order), hands each kept n-gram and its
    /// interpolation terms (a, b, c) to `term` (in the same order) and each context's weight
    /// gamma to `weight(context, gamma)` (contexts of order m-1).
    pub(crate) fn run(
        &self,
        mut ngrams: impl Records,
        job: &Job,
        mut term: impl FnMut(&[u32], (f64, f64, f64)) -> Result<()>,
        mut weight: impl FnMut(&[u32], f64) -> Result<()>,
    ) -> Result<()> {
        let mut done = 0;
        let m = self.m;
        let mut group: Vec<u32> = Vec::new();
        let mut flush = |group: &mut Vec<u32>| -> Result<()> {
            let mut stats = ContextStats::default();
            for r in group.chunks_exact(m + 1) {
                stats.add(r[m] & !PRUNED, r[m] & PRUNED != 0);
            }
            let gamma = context_weight(self.smoothing, &stats, self.discounts, self.vocab_size);
            weight(&group[..m - 1], gamma)?;
            for r in group.chunks_exact(m + 1).filter(|r| r[m] & PRUNED == 0) {
                let terms = interpolation_terms(self.smoothing, r[m], &stats, self.discounts);
                term(&r[..m], terms)?;
            }
            group.clear();
            Ok(())
        };
        while let Some(r) = ngrams.next_record()? {
            job.tick(&mut done)?;
            if !group.is_empty() && !equal_words(&group[..m - 1], &r[..m - 1]) {
                flush(&mut group)?;
            }
            extend_words(&mut group, r);
        }
        if !group.is_empty() {
            flush(&mut group)?;
        }
        Ok(())
    }
}

pub(crate) fn missing_suffix(suffix: &[u32]) -> Error {
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

/// Writes order m's section from its probabilities `[gram, log10 p]` in prefix order, with the
/// weights `[gram, log10 gamma]` (prefix order; only n-grams that are contexts have one) unless m
/// is the highest order (both values as [`arpa_word`]s); the section line is written first (not
/// by a piece writer, see [`ArpaWriter::piece`]).
pub(crate) fn write_section<W: Write + Send>(
    out: &mut ArpaWriter<W>,
    m: usize,
    probs: RecordStream,
    weights: Option<impl Records + Send>,
    vocab: &Vocab,
    job: &Job,
    name: &str,
) -> Result<()> {
    /// Lines formatted together (on all cores), then written in order.
    const BATCH: usize = 1 << 16;
    out.section(m).map_err(Error::io(name))?;
    let mut rows = SectionRows {
        m,
        probs,
        weights,
        weight: vec![PAD; m + 1],
        have_weight: false,
    };
    let width = rows.width();
    let mut batch: Vec<u32> = Vec::with_capacity(BATCH * width);
    let mut next: Vec<u32> = Vec::with_capacity(BATCH * width);
    rows.fill(&mut batch, BATCH)?;
    // the next batch is merged while this one is formatted and written
    while !batch.is_empty() {
        let (written, filled) = rayon::join(
            || {
                out.ngrams(
                    &batch,
                    width,
                    |row| (f32::from_bits(row[m]), f32::from_bits(row[m + 1])),
                    |run| {
                        let mut words = WordsOfRows::new(vocab, run, width, m);
                        move |row: &[u32], text: &mut Vec<u8>| words.push(row, text)
                    },
                )
            },
            || rows.fill(&mut next, BATCH),
        );
        written.map_err(Error::io(name))?;
        filled?;
        job.step((batch.len() / width) as u64)?;
        batch.clear();
        std::mem::swap(&mut batch, &mut next);
    }
    Ok(())
}

/// The rows `[gram, log10 p, log10 gamma]` of a section in prefix order (as [`arpa_word`]s): its
/// probabilities joined with the weights of those n-grams that are contexts (1 for the others).
struct SectionRows<P, G> {
    m: usize,
    probs: P,
    weights: Option<G>,
    /// The next weight read, if not used yet.
    weight: Vec<u32>,
    have_weight: bool,
}

impl<P: Records, G: Records> SectionRows<P, G> {
    fn width(&self) -> usize {
        self.m + 2
    }

    /// Appends up to `rows` rows to `batch` (fewer only at the end).
    fn fill(&mut self, batch: &mut Vec<u32>, rows: usize) -> Result<()> {
        let m = self.m;
        // the weight of an n-gram that is no context
        let no_weight = arpa_word(1.0);
        for _ in 0..rows {
            let Some(r) = self.probs.next_record()? else {
                break;
            };
            let gamma = match self.weights.as_mut() {
                None => no_weight,
                Some(reader) => {
                    // both in prefix order: the next weight is this n-gram's, a later one's, or
                    // a pruned context's (skipped)
                    while !self.have_weight || self.weight[..m] < r[..m] {
                        if let Some(w) = reader.next_record()? {
                            copy_words(&mut self.weight, w);
                            self.have_weight = true;
                        } else {
                            self.have_weight = false;
                            break;
                        }
                    }
                    if self.have_weight && equal_words(&self.weight[..m], &r[..m]) {
                        self.have_weight = false;
                        self.weight[m]
                    } else {
                        no_weight
                    }
                }
            };
            extend_words(batch, r);
            batch.push(gamma);
        }
        Ok(())
    }
}
