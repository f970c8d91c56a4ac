//! Writing ARPA files: [`ArpaWriter`], the one line formatter used by both estimation paths
//! (a fitted [`Model`], and [`crate::estimate::budgeted`], which streams sections from disk);
//! the layout is the one described in the [module documentation](super).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use crate::corpus::vocab::{Vocab, BOS};
use crate::error::{Error, Result};
use crate::model::{Fallback, Model};
use crate::ngram::keys::{is_free, key_prefix, key_word, NONE};
use crate::util::compressed::Output;
use crate::util::float_format::{log10_f32, push_f32, push_log10, Recent};
use crate::util::huge_pages;
use crate::util::job::Job;
use crate::util::prefetch::prefetch_ahead;

/// The file's last line.
const END: &[u8] = b"\n\\end\\\n";

/// Output buffer of an ARPA file.
const BUFFER: usize = 1 << 20;

/// N-gram lines per call of [`ArpaWriter::ngrams`] when writing a model (one progress step).
const BATCH: usize = 1 << 20;

/// N-gram lines formatted on all cores while the part before them is written.
const PART: usize = 1 << 16;

/// N-gram lines formatted one after the other by one thread (words shared with the line before
/// are kept within a run).
const RUN: usize = 4096;

/// Writes an ARPA file section by section: [`ArpaWriter::new`] writes the `\data\` header, then
/// [`section`](ArpaWriter::section) opens each order in turn (1, 2, ...), filled with
/// [`unigram`](ArpaWriter::unigram) or [`ngrams`](ArpaWriter::ngrams) lines, and
/// [`finish`](ArpaWriter::finish) writes `\end\`. Values come in as natural logs and are written
/// as log10, as KenLM prints floats; every order below the highest has a backoff column.
///
/// ```
/// use fastppl::formats::arpa::ArpaWriter;
/// let mut w = ArpaWriter::new(Vec::new(), &[4]).unwrap();
/// w.section(1).unwrap();
/// for (id, word) in ["<unk>", "<s>", "</s>", "a"].iter().enumerate() {
///     w.unigram(id as u32, word, 0.25f64.ln(), 0.0).unwrap();
/// }
/// let text = String::from_utf8(w.finish().unwrap()).unwrap();
/// assert!(text.starts_with("\\data\\\nngram 1=4\n\n\\1-grams:\n-0.60206\t<unk>\n0\t<s>\n"));
/// assert!(text.ends_with("\n\\end\\\n"));
///
/// // the same file from pieces of its unigram section, written apart
/// let mut pieces = Vec::new();
/// for ids in [0..2, 2..4] {
///     let mut piece = ArpaWriter::piece(Vec::new(), 1, 1);
///     for id in ids {
///         let word = ["<unk>", "<s>", "</s>", "a"][id];
///         piece.unigram(id as u32, word, 0.25f64.ln(), 0.0).unwrap();
///     }
///     pieces.push(piece.finish().unwrap());
/// }
/// let mut w = ArpaWriter::new(Vec::new(), &[4]).unwrap();
/// w.section(1).unwrap();
/// for piece in &pieces {
///     w.append(&mut piece.as_slice()).unwrap();
/// }
/// assert_eq!(String::from_utf8(w.finish().unwrap()).unwrap(), text);
/// ```
pub struct ArpaWriter<W: Write> {
    out: W,
    /// The highest order (the number of sections).
    order: usize,
    /// The order of the section being written (0 before the first).
    section: usize,
    /// Writes the lines of one section only (see [`ArpaWriter::piece`]).
    piece: bool,
    line: Vec<u8>,
}

/// An ARPA file being written, compressed by the extension of its path.
pub type ArpaFile = ArpaWriter<BufWriter<Output>>;

impl<W: Write> ArpaWriter<W> {
    /// Starts an ARPA text on `out` with `counts[m - 1]` n-grams of order m: writes the header.
    pub fn new(mut out: W, counts: &[u64]) -> io::Result<Self> {
        out.write_all(b"\\data\\\n")?;
        for (i, c) in counts.iter().enumerate() {
            writeln!(out, "ngram {}={c}", i + 1)?;
        }
        Ok(ArpaWriter {
            out,
            order: counts.len(),
            section: 0,
            piece: false,
            line: Vec::with_capacity(256),
        })
    }

    /// A writer of some lines of section `m` of an ARPA text of highest order `order`, and
    /// nothing else (no header, section line or `\end\`): a piece of a file that
    /// [`append`](ArpaWriter::append) assembles (distributed estimation writes a section in
    /// ranges of n-grams on different machines). [`section`](ArpaWriter::section)`(m)` writes
    /// nothing; [`finish`](ArpaWriter::finish) returns the output.
    pub fn piece(out: W, order: usize, m: usize) -> Self {
        ArpaWriter {
            out,
            order,
            section: m,
            piece: true,
            line: Vec::with_capacity(256),
        }
    }

    /// Opens the section of the n-grams of order `m` (sections come in order, from 1).
    pub fn section(&mut self, m: usize) -> io::Result<()> {
        if self.piece {
            debug_assert_eq!(m, self.section, "a piece holds the lines of one section");
            return Ok(());
        }
        debug_assert_eq!(m, self.section + 1, "ARPA sections are written in order");
        self.section = m;
        write!(self.out, "\n\\{m}-grams:\n")
    }

    /// Writes the unigram line of word `id`: its ln probability (`<s>`, never predicted, gets
    /// log10 probability 0 as lmplz writes it) and its ln backoff weight (left out when the
    /// model is of order 1).
    pub fn unigram(&mut self, id: u32, word: &str, ln_p: f64, ln_weight: f64) -> io::Result<()> {
        debug_assert_eq!(self.section, 1, "unigram lines belong to section 1");
        let line = &mut self.line;
        line.clear();
        if id == BOS {
            line.push(b'0');
        } else {
            push_log10(line, ln_p);
        }
        line.push(b'\t');
        line.extend_from_slice(word.as_bytes());
        if self.order > 1 {
            line.push(b'\t');
            push_log10(line, ln_weight);
        }
        line.push(b'\n');
        self.out.write_all(line)
    }

    /// Writes one line of the current section (order >= 2) per `group` items of `rows`, formatted
    /// on all cores and written in order, each part of the rows formatted while the one before
    /// is written: `values(row)` gives the n-gram's log10 probability and log10 backoff weight
    /// as float32 (see [`log10_f32`]; the weight is ignored at the highest order); `words(run)`
    /// makes, for each run of consecutive rows formatted together, the function that appends a
    /// row's words separated by spaces, called on each row of the run in turn (it may keep what
    /// consecutive rows share, and look ahead in the run).
    pub fn ngrams<'r, T: Sync, F: FnMut(&[T], &mut Vec<u8>)>(
        &mut self,
        rows: &'r [T],
        group: usize,
        values: impl Fn(&[T]) -> (f32, f32) + Sync,
        words: impl Fn(&'r [T]) -> F + Sync,
    ) -> io::Result<()>
    where
        W: Send,
    {
        debug_assert!(
            self.section >= 2,
            "n-gram lines belong to sections 2 and up"
        );
        let with_weight = self.section < self.order;
        let format = |part: &'r [T]| -> Vec<Vec<u8>> {
            part.par_chunks(group * RUN)
                .map(|run| {
                    let mut text = Vec::with_capacity(run.len() / group * 48);
                    let mut push_words = words(run);
                    // few distinct weights: most are printed from memory
                    let mut weights = Recent::default();
                    for row in run.chunks_exact(group) {
                        let (p, weight) = values(row);
                        push_f32(&mut text, p);
                        text.push(b'\t');
                        push_words(row, &mut text);
                        if with_weight {
                            text.push(b'\t');
                            weights.push(&mut text, weight);
                        }
                        text.push(b'\n');
                    }
                    text
                })
                .collect()
        };
        let mut formatted: Vec<Vec<u8>> = Vec::new();
        for part in rows.chunks(group * PART) {
            let out = &mut self.out;
            let (written, next) = rayon::join(
                || formatted.iter().try_for_each(|text| out.write_all(text)),
                || format(part),
            );
            written?;
            formatted = next;
        }
        formatted
            .iter()
            .try_for_each(|text| self.out.write_all(text))
    }

    /// Copies the lines of a piece of the current section (written by a
    /// [`piece`](ArpaWriter::piece) writer) from `lines`; returns the bytes copied.
    pub fn append(&mut self, lines: &mut impl io::Read) -> io::Result<u64> {
        debug_assert!(
            self.section >= 1 && !self.piece,
            "pieces go into an open section"
        );
        io::copy(lines, &mut self.out)
    }

    /// Writes the `\end\` line (not for a piece) and returns the output (not flushed).
    pub fn finish(mut self) -> io::Result<W> {
        if !self.piece {
            self.out.write_all(END)?;
        }
        Ok(self.out)
    }
}

impl ArpaFile {
    /// Creates the file `path` (compressed by its extension: .gz, .xz, .bz2) and writes the
    /// header for `counts`.
    pub fn create(path: &Path, counts: &[u64]) -> Result<Self> {
        let out = BufWriter::with_capacity(BUFFER, Output::create(path)?);
        ArpaWriter::new(out, counts).map_err(Error::io(path))
    }

    /// The path, for error messages.
    pub fn path(&self) -> &str {
        self.out.get_ref().path()
    }

    /// Writes `\end\`, flushes and closes the file.
    pub fn close(self) -> Result<()> {
        let path = self.path().to_string();
        let out = self.finish().map_err(Error::io(&path))?;
        let out = out
            .into_inner()
            .map_err(|e| Error::io(&path)(e.into_error()))?;
        out.finish()
    }
}

/// Writes `model` as an ARPA file, compressed by the extension of `path` (.gz, .xz, .bz2),
/// reporting n-grams written to `job`; cancelled, it leaves no file (the write is atomic).
pub fn write_arpa(model: &Model, path: &Path, job: &Job) -> Result<()> {
    check_writable(model)?;
    let mut file = ArpaFile::create(path, &ngram_counts(model))?;
    write_sections(
        model,
        &mut file,
        job,
        &path.display().to_string(),
        PART_ROWS,
    )?;
    file.close()
}

/// Writes `model` in ARPA form to `w` (see the module documentation for the layout).
pub fn write_arpa_to(model: &Model, w: &mut (impl Write + Send)) -> Result<()> {
    const NAME: &str = "<ARPA text>";
    let mut writer = ArpaWriter::new(w, &ngram_counts(model)).map_err(Error::io(NAME))?;
    write_sections(model, &mut writer, &Job::none(), NAME, PART_ROWS)?;
    writer.finish().map(drop).map_err(Error::io(NAME))
}

/// "a" or "an" before an estimator's name, as it is read aloud ("an additive", "an mle").
fn article(smoothing: &str) -> &'static str {
    let vowel = smoothing.starts_with(['a', 'e', 'i', 'o', 'u']) || smoothing == "mle";
    if vowel {
        "an"
    } else {
        "a"
    }
}

/// Refuses the models that have no ARPA form.
pub fn check_writable(model: &Model) -> Result<()> {
    if model.fallback == Fallback::Flat {
        return Err(Error::invalid(format!(
            "{} {} model cannot be written as ARPA: its probabilities do not back off to shorter \
             histories (backoff form needs an interpolated or backoff estimator such as \
             modified_kneser_ney, kneser_ney, witten_bell or absolute_discounting)",
            article(&model.smoothing),
            model.smoothing
        )));
    }
    if !model.normalized || model.missing_weight != 0.0 {
        return Err(Error::invalid(format!(
            "{} {} model gives scores, not probabilities: an ARPA file of it would be read as a \
             probability model by other tools, so fastppl refuses to write one",
            article(&model.smoothing),
            model.smoothing
        )));
    }
    if !model.bos_eos {
        return Err(Error::invalid(
            "ARPA models score sentences as <s> ... </s>; this model was fitted with \
             bos_eos=False, so an ARPA file of it would be scored differently",
        ));
    }
    check_arpa_tokens(model.vocab.words())
}

/// Refuses a vocabulary that ARPA cannot carry: ARPA separates words by ASCII whitespace, so a
/// word holding any (or an empty word) would be read back as other words.
pub fn check_arpa_tokens<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<()> {
    if let Some(word) = words
        .into_iter()
        .find(|w| w.is_empty() || w.bytes().any(|b| b.is_ascii_whitespace()))
    {
        return Err(Error::invalid(format!(
            "the token {word:?} cannot be written to an ARPA file, which separates words by \
             ASCII whitespace (an empty token or one holding a space, tab or line break would \
             be read back as other words); save the model in fastppl's binary format instead \
             (save / a .fppl file), which keeps every token"
        )));
    }
    Ok(())
}

/// The number of n-grams of each order, unigrams first (the header's counts).
fn ngram_counts(model: &Model) -> Vec<u64> {
    std::iter::once(model.vocab.len())
        .chain(model.higher.iter().map(|t| t.table.len()))
        .map(|n| n as u64)
        .collect()
}

/// Rows ahead of the one being formatted whose words' places in the vocabulary are fetched into
/// the cache, and rows ahead whose spellings are (their places fetched by then): rows in file
/// order name words from all over the vocabulary, each a cache miss to find where its spelling
/// is and another to read it.
const PLACES_AHEAD: usize = 16;
const SPELLINGS_AHEAD: usize = 8;

/// Fetches the words of the rows ahead of the row being formatted into the cache, in two steps
/// (see [`PLACES_AHEAD`]), whatever the rows are.
struct WordsAhead<'a> {
    vocab: &'a Vocab,
    /// The row formatted next.
    next: usize,
}

impl<'a> WordsAhead<'a> {
    fn new(vocab: &'a Vocab) -> Self {
        WordsAhead { vocab, next: 0 }
    }

    /// Called once per row, in order, before the row is formatted; `words(i)` gives the ids of
    /// the words of row i that formatting it will look up (none past the last row).
    #[inline]
    fn step<W: IntoIterator<Item = u32>>(&mut self, words: impl Fn(usize) -> W) {
        for w in words(self.next + PLACES_AHEAD) {
            self.vocab.prefetch_place(w);
        }
        for w in words(self.next + SPELLINGS_AHEAD) {
            self.vocab.prefetch_word(w);
        }
        self.next += 1;
    }
}

/// The words of n-grams in prefix order (rows of `width` words, the n-gram's `m` ids first),
/// each line rebuilt from the last: consecutive n-grams mostly share their first words, whose
/// text is kept, and the words of rows ahead are fetched into the cache (see [`PLACES_AHEAD`]).
pub(crate) struct WordsOfRows<'a> {
    vocab: &'a Vocab,
    rows: &'a [u32],
    width: usize,
    m: usize,
    ahead: WordsAhead<'a>,
    /// The last n-gram's ids, and where each of its words ends in `text` (its words).
    ids: Vec<u32>,
    ends: Vec<usize>,
    text: Vec<u8>,
}

impl<'a> WordsOfRows<'a> {
    /// For the rows `rows`, each `width` words of which the first `m` are an n-gram's ids.
    pub(crate) fn new(vocab: &'a Vocab, rows: &'a [u32], width: usize, m: usize) -> Self {
        WordsOfRows {
            vocab,
            rows,
            width,
            m,
            ahead: WordsAhead::new(vocab),
            ids: Vec::with_capacity(m),
            ends: Vec::with_capacity(m),
            text: Vec::new(),
        }
    }

    /// Appends the words of the next row (`row`, in order), separated by spaces.
    #[inline]
    pub(crate) fn push(&mut self, row: &[u32], out: &mut Vec<u8>) {
        let (rows, width, m) = (self.rows, self.width, self.m);
        self.ahead.step(|i| {
            let gram = rows.get(i * width..).and_then(|r| r.get(..m));
            gram.unwrap_or_default().iter().copied()
        });
        let gram = &row[..self.m];
        let shared = self
            .ids
            .iter()
            .zip(gram)
            .take_while(|(a, b)| a == b)
            .count();
        self.ids.truncate(shared);
        self.ends.truncate(shared);
        self.text.truncate(self.ends.last().copied().unwrap_or(0));
        for &w in &gram[shared..] {
            if !self.ids.is_empty() {
                self.text.push(b' ');
            }
            self.text.extend_from_slice(self.vocab.word(w).as_bytes());
            self.ids.push(w);
            self.ends.push(self.text.len());
        }
        out.extend_from_slice(&self.text);
    }
}

/// The lines of one order (>= 2) in file order: line r is the n-gram whose prefix is line
/// `prefix[r]` of the order below (a word id for bigrams) and whose last word is `word[r]`.
#[derive(Default)]
struct LinesInOrder {
    prefix: Vec<u32>,
    word: Vec<u32>,
}

/// The words of lines of one order written one after the other, each rebuilt from the last:
/// lines in file order mostly share their prefix with the one before, whose words are kept, and
/// the prefixes of consecutive lines are lines of the orders below in increasing order, read
/// from their [`LinesInOrder`] front to back rather than looked up in the model's tables.
struct WordsInOrder<'a> {
    vocab: &'a Vocab,
    /// `below[k - 2]`: the lines of order k (2 <= k < the order written).
    below: &'a [LinesInOrder],
    /// `lines[k - 1]`: the line of order k whose words are `text[..ends[k - 1]]` (`NONE`: none).
    lines: Vec<u32>,
    ends: Vec<usize>,
    text: Vec<u8>,
}

impl<'a> WordsInOrder<'a> {
    /// For lines of order `below.len() + 2`.
    fn new(vocab: &'a Vocab, below: &'a [LinesInOrder]) -> Self {
        let prefix_order = below.len() + 1;
        WordsInOrder {
            vocab,
            below,
            lines: vec![NONE; prefix_order],
            ends: vec![0; prefix_order],
            text: Vec::new(),
        }
    }

    /// Appends the words of the line whose prefix is line `prefix` of the order below and whose
    /// last word is `word`, separated by spaces.
    fn push(&mut self, prefix: u32, word: u32, out: &mut Vec<u8>) {
        self.set(self.below.len() + 1, prefix);
        out.extend_from_slice(&self.text);
        out.push(b' ');
        out.extend_from_slice(self.vocab.word(word).as_bytes());
    }

    /// Makes `text` hold the words of line `line` of order `k`.
    fn set(&mut self, k: usize, line: u32) {
        if self.lines[k - 1] == line {
            self.text.truncate(self.ends[k - 1]);
            return;
        }
        let word = if k == 1 {
            self.text.clear();
            line
        } else {
            let lines = &self.below[k - 2];
            let (prefix, word) = (lines.prefix[line as usize], lines.word[line as usize]);
            self.set(k - 1, prefix);
            self.text.push(b' ');
            word
        };
        self.text
            .extend_from_slice(self.vocab.word(word).as_bytes());
        self.lines[k - 1] = line;
        self.ends[k - 1] = self.text.len();
        // the lines above were built on the words this one replaced
        self.lines[k..].fill(NONE);
    }
}

/// An n-gram of a model as written: its place in file order (the line of its prefix in the order
/// below, its last word), its slot in the table of its order, and its values as printed.
#[derive(Clone, Copy)]
struct Row {
    prefix_line: u32,
    word: u32,
    slot: u32,
    /// log10 p as float32.
    logp: f32,
    /// log10 backoff weight as float32.
    weight: f32,
}

/// Rows sorted and written at a time: an order is written in parts of about this many n-grams
/// (80 MB of rows), each the n-grams of a range of prefix lines, so that only one part's rows
/// exist at a time.
const PART_ROWS: usize = 1 << 22;

/// Ranges of prefix lines told apart when an order is cut into parts.
const PART_BUCKETS: usize = 1 << 16;

/// The line of the prefix (in the order below) of each slot of order `m` of `model` (`NONE` for
/// a free slot); `line_of[e]` is the line of entry e of the order below (`NONE` for a free slot).
/// Checked: an unverified binary model may be corrupt, and must not panic here.
fn prefix_lines(model: &Model, m: usize, line_of: &[AtomicU32]) -> Result<Vec<u32>> {
    let table = &model.higher[m - 2].table;
    let (capacity, vocab_len) = (table.capacity() as u32, model.vocab.len());
    (0..capacity)
        .into_par_iter()
        .map(|slot| {
            // the prefix's line of the slot ahead (none for a free slot: EMPTY's prefix is no
            // entry)
            prefetch_ahead(slot as usize, capacity as usize, |ahead| {
                line_of.get(key_prefix(table.key(ahead as u32)) as usize)
            });
            let key = table.key(slot);
            if is_free(key) {
                return Ok(NONE);
            }
            let (prefix, word) = (key_prefix(key), key_word(key));
            // the prefix must be an entry of the order below (checked in its own turn)
            match line_of.get(prefix as usize).map(|l| l.load(Relaxed)) {
                Some(prefix_line) if prefix_line != NONE && (word as usize) < vocab_len => {
                    Ok(prefix_line)
                }
                _ => Err(Error::invalid(format!(
                    "the model is corrupt: its order-{m} entry {slot} holds prefix {prefix} and \
                     word {word}, which do not exist (load it with verify=True to find out more)"
                ))),
            }
        })
        .collect()
}

/// Cuts the prefix lines `0..lines` into consecutive ranges holding about `part_rows` n-grams
/// each (a range of one line may hold more), from the prefix line of each slot (`NONE`: free).
fn parts(prefix_line: &[u32], lines: usize, part_rows: usize) -> Vec<std::ops::Range<u32>> {
    let buckets = PART_BUCKETS.min(lines.max(1));
    let bucket = |line: u32| (u64::from(line) * buckets as u64 / lines as u64) as usize;
    let sizes = prefix_line
        .par_chunks(1 << 16)
        .map(|chunk| {
            let mut n = vec![0usize; buckets];
            for &line in chunk.iter().filter(|&&l| l != NONE) {
                n[bucket(line)] += 1;
            }
            n
        })
        .reduce(
            || vec![0usize; buckets],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    // the first line of bucket b (the smallest line l with bucket(l) = b)
    let first_line = |b: usize| ((b as u64 * lines as u64).div_ceil(buckets as u64)) as u32;
    let mut ranges = Vec::new();
    let (mut start, mut rows) = (0usize, 0usize);
    for (b, &n) in sizes.iter().enumerate() {
        rows += n;
        if rows >= part_rows || b + 1 == buckets {
            ranges.push(first_line(start)..first_line(b + 1));
            (start, rows) = (b + 1, 0);
        }
    }
    ranges
}

/// Slots of a table scanned by one task when a part's n-grams are gathered.
const SCAN_SLOTS: usize = 1 << 16;

/// Puts into `sorted` (emptied first; its memory is reused from part to part, as fresh pages
/// cost a fault and a clearing each) the n-grams of order `m` of `model` whose prefix line is in
/// `lines`, in file order, from the prefix line of each slot. Values are read here, in slot
/// order, rather than looked up in file order (a cache miss each). The slots are scanned in
/// blocks on all cores twice: once to count each block's n-grams, which places each block's
/// rows, then to write them there (a scan costs far less than gathering rows into lists and
/// copying them).
fn sorted_part(
    model: &Model,
    m: usize,
    prefix_line: &[u32],
    lines: &std::ops::Range<u32>,
    sorted: &mut Vec<Row>,
) {
    let table = &model.higher[m - 2].table;
    // (NONE, a free slot, is above every range of lines)
    let (start, width) = (lines.start, lines.end - lines.start);
    let in_part = |line: u32| line.wrapping_sub(start) < width;
    let counts: Vec<usize> = prefix_line
        .par_chunks(SCAN_SLOTS)
        .map(|block| block.iter().filter(|&&line| in_part(line)).count())
        .collect();
    let total = counts.iter().sum();
    sorted.clear();
    sorted.reserve(total);
    let mut rest = &mut sorted.spare_capacity_mut()[..total];
    let mut outputs = Vec::with_capacity(counts.len());
    for &n in &counts {
        let (here, after) = rest.split_at_mut(n);
        outputs.push(here);
        rest = after;
    }
    prefix_line
        .par_chunks(SCAN_SLOTS)
        .zip(outputs)
        .enumerate()
        .for_each(|(b, (block, out))| {
            let first = (b * SCAN_SLOTS) as u32;
            let rows = block
                .iter()
                .enumerate()
                .filter(|(_, &line)| in_part(line))
                .map(|(i, &prefix_line)| {
                    let slot = first + i as u32;
                    let entry = table.entry(slot);
                    Row {
                        prefix_line,
                        word: key_word(table.key(slot)),
                        slot,
                        logp: log10_f32(entry.logp),
                        weight: log10_f32(entry.weight),
                    }
                });
            let mut written = 0;
            for (place, row) in out.iter_mut().zip(rows) {
                place.write(row);
                written += 1;
            }
            // the same filter over the same block: as many rows as counted
            assert_eq!(
                written,
                out.len(),
                "a block's n-grams changed while gathered"
            );
        });
    // SAFETY: the first `total` places were each written above: the slices handed to the blocks
    // cover them, and each block wrote every place of its slice (asserted).
    unsafe { sorted.set_len(total) };
    sorted.par_sort_unstable_by_key(|r| (u64::from(r.prefix_line) << 32) | u64::from(r.word));
}

/// The unigram section of `model`, its header included.
fn write_unigrams<W: Write + Send>(model: &Model, w: &mut ArpaWriter<W>) -> io::Result<()> {
    w.section(1)?;
    for id in 0..model.vocab.len() as u32 {
        let (ln_p, ln_weight) = (
            model.unigram_logp[id as usize],
            model.unigram_weight[id as usize],
        );
        w.unigram(id, model.vocab.word(id), ln_p, ln_weight)?;
    }
    Ok(())
}

/// The lines of `rows`, sorted rows of one order whose prefixes are lines of the orders
/// `below` (the unigrams' lines being word ids).
fn write_rows<W: Write + Send>(
    model: &Model,
    below: &[LinesInOrder],
    rows: &[Row],
    w: &mut ArpaWriter<W>,
) -> io::Result<()> {
    w.ngrams(
        rows,
        1,
        |row| (row[0].logp, row[0].weight),
        |run| {
            let mut words = WordsInOrder::new(&model.vocab, below);
            let mut ahead = WordsAhead::new(&model.vocab);
            // the last word, and the last word of the prefix (which changes at almost every
            // line of the higher orders)
            let prefix_word = |line: u32| match below.last() {
                None => line,
                Some(lines) => lines.word[line as usize],
            };
            move |row: &[Row], text: &mut Vec<u8>| {
                ahead.step(|i| {
                    let row = run.get(i);
                    row.into_iter()
                        .flat_map(|r| [r.word, prefix_word(r.prefix_line)])
                });
                words.push(row[0].prefix_line, row[0].word, text);
            }
        },
    )
}

/// Writes every section of `model`, each order in lexicographic order of word ids, so that equal
/// models give equal files, sorting about `part_rows` n-grams at a time ([`PART_ROWS`]); `name`
/// names the output in I/O errors.
fn write_sections<W: Write + Send>(
    model: &Model,
    w: &mut ArpaWriter<W>,
    job: &Job,
    name: &str,
    part_rows: usize,
) -> Result<()> {
    job.stage("writing ARPA", ngram_counts(model).iter().sum())?;
    let io = Error::io(name);
    write_unigrams(model, w).map_err(io)?;
    job.step(model.vocab.len() as u64)?;
    // line_of[e]: the line of entry e of the order below (unigram lines are word ids), filled
    // part by part on all cores (each slot once)
    let mut line_of: Vec<AtomicU32> = (0..model.vocab.len() as u32).map(AtomicU32::new).collect();
    let mut lines_below = model.vocab.len();
    let mut below: Vec<LinesInOrder> = Vec::with_capacity(model.order.saturating_sub(2));
    let mut sorted: Vec<Row> = Vec::new();
    for m in 2..=model.order {
        let table = &model.higher[m - 2].table;
        w.section(m).map_err(io)?;
        let prefix_line = prefix_lines(model, m, &std::mem::take(&mut line_of))?;
        let mut lines = LinesInOrder::default();
        if m < model.order {
            line_of = huge_pages::par_collect(
                (0..table.capacity())
                    .into_par_iter()
                    .map(|_| AtomicU32::new(NONE)),
            );
            lines.prefix.reserve_exact(table.len());
            lines.word.reserve_exact(table.len());
        }
        let mut first_line = 0u32;
        for part in parts(&prefix_line, lines_below, part_rows) {
            sorted_part(model, m, &prefix_line, &part, &mut sorted);
            for batch in sorted.chunks(BATCH) {
                write_rows(model, &below, batch, w).map_err(io)?;
                job.step(batch.len() as u64)?;
            }
            if m < model.order {
                sorted.par_iter().enumerate().for_each(|(i, row)| {
                    line_of[row.slot as usize].store(first_line + i as u32, Relaxed);
                });
                lines
                    .prefix
                    .par_extend(sorted.par_iter().map(|r| r.prefix_line));
                lines.word.par_extend(sorted.par_iter().map(|r| r.word));
            }
            first_line += sorted.len() as u32;
        }
        // the header gave the table's count; the lines of the next order are numbered below
        // the lines written (an unverified binary model may be corrupt, and must not panic)
        if first_line as usize != table.len() {
            return Err(Error::invalid(format!(
                "the model is corrupt: its order-{m} table holds {first_line} n-grams but counts \
                 {} (load it with verify=True to find out more)",
                table.len()
            )));
        }
        if m < model.order {
            below.push(lines);
            lines_below = table.len();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::corpus::{Corpus, SentenceMode};
    use crate::estimate::{fit, Pruning, Smoothing};

    #[test]
    fn words_of_rows_rebuilds_each_line_from_the_last() {
        let c = corpus(2_000, 50);
        let vocab = c.vocab();
        let ids = vocab.len() as u32;
        // rows of 3 ids and 2 payload words: shared prefixes of every length, repeats, and
        // lines that share nothing after one that shared everything
        let grams: [[u32; 3]; 7] = [
            [4, 5, 6],
            [4, 5, 7],
            [4, 8, 7],
            [4, 8, 7],
            [9, 5, 6],
            [9, 5, ids - 1],
            [3, 3, 3],
        ];
        let rows: Vec<u32> = grams
            .iter()
            .flat_map(|g| [g[0], g[1], g[2], 0, 0])
            .collect();
        let mut words = WordsOfRows::new(vocab, &rows, 5, 3);
        for (row, gram) in rows.chunks_exact(5).zip(&grams) {
            let mut out = b"x\t".to_vec();
            words.push(row, &mut out);
            let expected: Vec<&str> = gram.iter().map(|&w| vocab.word(w)).collect();
            assert_eq!(out, format!("x\t{}", expected.join(" ")).into_bytes());
        }
    }

    /// A corpus of `tokens` pseudo-random words over a vocabulary of `words` (a Zipf-like mix,
    /// so that contexts are shared by many n-grams and most are not), 12 words a line.
    fn corpus(tokens: usize, words: u64) -> Corpus {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut text = String::new();
        for i in 0..tokens {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let r = (state >> 33) % words;
            let end = if i % 12 == 11 { '\n' } else { ' ' };
            write!(text, "w{}{end}", r * r / words).unwrap();
        }
        let mut c = Corpus::new();
        c.push_whitespace_text(&text, SentenceMode::Lines).unwrap();
        c.finish();
        c
    }

    /// Prefix lines cut into parts: consecutive ranges from 0 to the number of lines, each of
    /// them closed once it holds the part's rows (as counted here, independently).
    #[test]
    fn parts_cover_every_line_in_order() {
        let lines = 1000usize;
        let prefix_line: Vec<u32> = (0..5000u32)
            .map(|i| if i % 7 == 0 { NONE } else { (i * i) % 1000 })
            .collect();
        for part_rows in [1, 50, 600, 1 << 20] {
            let ranges = parts(&prefix_line, lines, part_rows);
            assert_eq!(ranges.first().unwrap().start, 0);
            assert_eq!(ranges.last().unwrap().end, lines as u32);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
            let rows =
                |r: &std::ops::Range<u32>| prefix_line.iter().filter(|l| r.contains(l)).count();
            let n = ranges.len();
            assert!(ranges[..n - 1].iter().all(|r| rows(r) >= part_rows));
            let used = prefix_line.iter().filter(|&&l| l != NONE).count();
            assert_eq!(ranges.iter().map(rows).sum::<usize>(), used);
        }
    }

    /// Sorting a few n-grams at a time gives the same file as sorting an order at once.
    #[test]
    fn parts_of_any_size_give_the_same_file() {
        let c = corpus(30_000, 300);
        let smoothing = Smoothing::ModifiedKneserNey {
            discount_fallback: true,
        };
        let model = fit(&c, 3, true, smoothing, &Pruning::none(), &Job::none()).unwrap();
        let write = |part_rows: usize| {
            let mut w = ArpaWriter::new(Vec::new(), &ngram_counts(&model)).unwrap();
            write_sections(&model, &mut w, &Job::none(), "test", part_rows).unwrap();
            w.finish().unwrap()
        };
        let whole = write(PART_ROWS);
        assert!(
            model.higher[1].table.len() > 100 * 37,
            "too few n-grams for many parts"
        );
        for part_rows in [1, 37, 1000] {
            assert!(write(part_rows) == whole, "{part_rows} rows a part");
        }
    }

    /// Every line of every section, read back word by word: the model holds the n-gram with the
    /// printed values, sections are in increasing order of word ids and as long as the header
    /// says. More n-grams than a run and a part, so that runs start on shared prefixes.
    #[test]
    fn each_line_holds_its_ngram_in_file_order() {
        let c = corpus(300_000, 400);
        let smoothing = Smoothing::ModifiedKneserNey {
            discount_fallback: true,
        };
        let model = fit(&c, 4, true, smoothing, &Pruning::none(), &Job::none()).unwrap();
        assert!(
            model.higher[2].table.len() > PART,
            "too few n-grams to cross parts"
        );
        let mut out = Vec::new();
        write_arpa_to(&model, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let counts = ngram_counts(&model);
        for m in 2..=4 {
            let section = text
                .split(&format!("\\{m}-grams:\n"))
                .nth(1)
                .unwrap()
                .split("\n\n")
                .next()
                .unwrap();
            let mut previous: Vec<u32> = Vec::new();
            let mut lines = 0u64;
            for line in section.lines() {
                let fields: Vec<&str> = line.split('\t').collect();
                let ids: Vec<u32> = fields[1]
                    .split(' ')
                    .map(|w| model.vocab.get(w).unwrap())
                    .collect();
                assert_eq!(ids.len(), m);
                assert!(ids > previous, "{line} after {previous:?}");
                let entry = model.higher[m - 2].table.entry(model.find(&ids).unwrap());
                let mut expected = Vec::new();
                push_log10(&mut expected, entry.logp);
                assert_eq!(fields[0].as_bytes(), expected, "{line}");
                if m < 4 {
                    expected.clear();
                    push_log10(&mut expected, entry.weight);
                    assert_eq!(fields[2].as_bytes(), expected, "{line}");
                }
                previous = ids;
                lines += 1;
            }
            assert_eq!(lines, counts[m - 1], "order {m}");
        }
    }
}
