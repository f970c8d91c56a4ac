//! Writing ARPA files: [`ArpaWriter`], the one line formatter used by both estimation paths
//! (a fitted [`Model`], and [`crate::estimate::budgeted`], which streams sections from disk);
//! the layout is the one described in the [module documentation](super).

use std::io::{self, BufWriter, Write};
use std::path::Path;

use rayon::prelude::*;

use crate::corpus::vocab::BOS;
use crate::error::{Error, Result};
use crate::model::{Fallback, Model};
use crate::ngram::keys::{key_prefix, key_word, EMPTY, NONE};
use crate::util::compressed::Output;
use crate::util::float_format::push_log10;
use crate::util::job::Job;

/// The file's last line.
const END: &[u8] = b"\n\\end\\\n";

/// Output buffer of an ARPA file.
const BUFFER: usize = 1 << 20;

/// N-gram lines formatted together on all cores, then written in order.
const BATCH: usize = 1 << 16;

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
    /// on all cores and written in order: `values(row)` gives the n-gram's ln probability and ln
    /// backoff weight (ignored at the highest order); `words()` makes, for each run of
    /// consecutive rows formatted together, the function that appends a row's words separated
    /// by spaces (it may keep what consecutive rows share).
    pub fn ngrams<T: Sync, F: FnMut(&[T], &mut Vec<u8>)>(
        &mut self,
        rows: &[T],
        group: usize,
        values: impl Fn(&[T]) -> (f64, f64) + Sync,
        words: impl Fn() -> F + Sync,
    ) -> io::Result<()> {
        debug_assert!(
            self.section >= 2,
            "n-gram lines belong to sections 2 and up"
        );
        let with_weight = self.section < self.order;
        let texts: Vec<Vec<u8>> = rows
            .par_chunks(group * 4096)
            .map(|part| {
                let mut text = Vec::with_capacity(part.len() / group * 48);
                let mut push_words = words();
                for row in part.chunks_exact(group) {
                    let (ln_p, ln_weight) = values(row);
                    push_log10(&mut text, ln_p);
                    text.push(b'\t');
                    push_words(row, &mut text);
                    if with_weight {
                        text.push(b'\t');
                        push_log10(&mut text, ln_weight);
                    }
                    text.push(b'\n');
                }
                text
            })
            .collect();
        texts.iter().try_for_each(|text| self.out.write_all(text))
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
    write_sections(model, &mut file, job, &path.display().to_string())?;
    file.close()
}

/// Writes `model` in ARPA form to `w` (see the module documentation for the layout).
pub fn write_arpa_to(model: &Model, w: &mut impl Write) -> Result<()> {
    const NAME: &str = "<ARPA text>";
    let mut writer = ArpaWriter::new(w, &ngram_counts(model)).map_err(Error::io(NAME))?;
    write_sections(model, &mut writer, &Job::none(), NAME)?;
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

/// The words of entries of a model written one after the other, each rebuilt from the last:
/// n-grams in lexicographic order mostly share their context with the one before, whose words
/// are then kept instead of looked up again word by word.
struct WordsInOrder<'a> {
    model: &'a Model,
    /// `entries[j]`: the entry of order j+1 whose words are `text[..ends[j]]` (`NONE`: none).
    entries: Vec<u32>,
    ends: Vec<usize>,
    text: Vec<u8>,
}

impl<'a> WordsInOrder<'a> {
    /// For entries of orders up to `order` of `model`.
    fn new(model: &'a Model, order: usize) -> Self {
        WordsInOrder {
            model,
            entries: vec![NONE; order],
            ends: vec![0; order],
            text: Vec::new(),
        }
    }

    /// Appends the words of order `m`'s entry `entry`, separated by spaces.
    fn push(&mut self, m: usize, entry: u32, out: &mut Vec<u8>) {
        self.set(m, entry);
        out.extend_from_slice(&self.text);
    }

    /// Makes `text` hold the words of order `m`'s entry `entry`.
    fn set(&mut self, m: usize, entry: u32) {
        if self.entries[m - 1] == entry {
            self.text.truncate(self.ends[m - 1]);
            return;
        }
        let word = if m == 1 {
            self.text.clear();
            entry
        } else {
            let key = self.model.higher[m - 2].table.key(entry);
            self.set(m - 1, key_prefix(key));
            self.text.push(b' ');
            key_word(key)
        };
        self.text
            .extend_from_slice(self.model.vocab.word(word).as_bytes());
        self.entries[m - 1] = entry;
        self.ends[m - 1] = self.text.len();
        // the entries above were built on the words this one replaced
        self.entries[m..].fill(NONE);
    }
}

/// Writes every section of `model`, each order in lexicographic order of word ids, so that equal
/// models give equal files; `name` names the output in I/O errors.
fn write_sections<W: Write>(
    model: &Model,
    w: &mut ArpaWriter<W>,
    job: &Job,
    name: &str,
) -> Result<()> {
    job.stage("writing ARPA", ngram_counts(model).iter().sum())?;
    let io = Error::io(name);
    w.section(1).map_err(io)?;
    for id in 0..model.vocab.len() as u32 {
        let (ln_p, ln_weight) = (
            model.unigram_logp[id as usize],
            model.unigram_weight[id as usize],
        );
        w.unigram(id, model.vocab.word(id), ln_p, ln_weight)
            .map_err(io)?;
    }
    job.step(model.vocab.len() as u64)?;
    // rank[e]: the position of entry e of the order below in lexicographic order
    let mut rank: Vec<u32> = (0..model.vocab.len() as u32).collect();
    for m in 2..=model.order {
        let table = &model.higher[m - 2];
        w.section(m).map_err(io)?;
        // (checked: an unverified binary model may be corrupt, and must not panic here)
        let mut sorted: Vec<(u32, u32, u32)> = table
            .table
            .iter()
            .map(|(g, key, _)| {
                let (prefix, word) = (key_prefix(key), key_word(key));
                // the prefix must be an entry of the order below (checked in its own turn)
                let known = (prefix as usize) < rank.len()
                    && (m == 2 || model.higher[m - 3].table.key(prefix) != EMPTY)
                    && (word as usize) < model.vocab.len();
                if known {
                    Ok((rank[prefix as usize], word, g))
                } else {
                    Err(Error::invalid(format!(
                        "the model is corrupt: its order-{m} entry {g} holds prefix {prefix} and \
                         word {word}, which do not exist (load it with verify=True to find out \
                         more)"
                    )))
                }
            })
            .collect::<Result<_>>()?;
        sorted.sort_unstable();
        let mut next_rank = vec![0u32; table.table.capacity()];
        for (r, &(_, _, g)) in sorted.iter().enumerate() {
            next_rank[g as usize] = r as u32;
        }
        rank = next_rank;
        for batch in sorted.chunks(BATCH) {
            w.ngrams(
                batch,
                1,
                |row| {
                    let entry = table.table.entry(row[0].2);
                    (entry.logp, entry.weight)
                },
                || {
                    let mut words = WordsInOrder::new(model, m);
                    move |row: &[(u32, u32, u32)], text: &mut Vec<u8>| {
                        words.push(m, row[0].2, text);
                    }
                },
            )
            .map_err(io)?;
            job.step(batch.len() as u64)?;
        }
    }
    Ok(())
}
