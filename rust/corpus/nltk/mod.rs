//! NLTK's `word_tokenize` and `sent_tokenize` (NLTK 3.10.4), ported rule for rule so that the
//! tokens and sentences are NLTK's own; checked token for token against NLTK by
//! `tests/test_nltk_native.py`.
//!
//! - [`params`]: Punkt parameters from NLTK's `punkt_tab/<language>/` files;
//! - [`punkt`]: `PunktSentenceTokenizer` at inference (sentence spans);
//! - [`word`]: `NLTKWordTokenizer` (the Treebank rules, applied to one sentence);
//! - [`chars`]: the Python character classes both need.
//!
//! This module joins them as `nltk.tokenize` does (`word_tokenize(text, language,
//! preserve_line)`: Punkt sentences, then the word rules on each) and feeds a [`Corpus`]. The
//! Punkt pass runs over the whole text on one thread (it is cheap: one look at each `.`, `?`,
//! `!`); the word rules, most of the work, run on all cores over batches of whole sentences,
//! which cannot change the result since NLTK applies them to each sentence on its own. Tokens
//! are written into one buffer per batch, consumed in order, so memory follows the output.

pub mod chars;
pub mod params;
pub mod punkt;
pub mod word;

use rayon::prelude::*;

use super::{is_terminator, Corpus};
use crate::error::Result;
use crate::util::job::Job;
pub use params::PunktParams;
pub use punkt::Punkt;

/// How the words of a sentence are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordRule {
    /// `NLTKWordTokenizer` (what `word_tokenize` applies to each sentence).
    Nltk,
    /// Python's `str.split()`.
    Whitespace,
}

/// Which pieces of the text become one sentence of the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// Each Punkt sentence.
    Punkt,
    /// Each line (`\n`), tokenized by `word_tokenize(line)`.
    Lines,
    /// The whole text as one token sequence, cut after each terminator token (`t in ".!?"`).
    Terminators,
    /// The whole text as one token sequence.
    Whole,
}

impl Grouping {
    /// Parses the `sentences=` names of the Python API.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "punkt" => Ok(Self::Punkt),
            "lines" => Ok(Self::Lines),
            "terminators" => Ok(Self::Terminators),
            "none" => Ok(Self::Whole),
            other => Err(crate::error::Error::invalid(format!(
                "unknown sentence mode {other:?} (expected 'punkt', 'lines', 'terminators' or \
                 'none')"
            ))),
        }
    }
}

/// `sent_tokenize(text)`: the sentences of `text`.
pub fn sent_tokenize<'a>(punkt: &Punkt, text: &'a str) -> Vec<&'a str> {
    punkt
        .sentence_spans(text)
        .into_iter()
        .map(|s| punkt::span_text(text, s))
        .collect()
}

/// `word_tokenize(text, preserve_line=punkt.is_none())`: Punkt sentences (unless `punkt` is
/// None), then `NLTKWordTokenizer` on each; `job` can cancel it.
pub fn word_tokenize(punkt: Option<&Punkt>, text: &str, job: &Job) -> Result<Vec<String>> {
    job.stage("splitting sentences", text.len() as u64)?;
    let pieces = match punkt {
        Some(p) => sent_tokenize(p, text)
            .into_iter()
            .map(|s| (s, true))
            .collect(),
        None => vec![(text, true)],
    };
    job.stage("tokenizing", text.len() as u64)?;
    let mut out = Vec::new();
    for_each_piece(&pieces, WordRule::Nltk, job, |tokens, _| {
        out.extend(tokens.iter().map(|t| t.to_string()));
    })?;
    Ok(out)
}

/// The pieces the word rule is applied to, each with "ends a group" (a corpus sentence for
/// [`Grouping::Punkt`] and [`Grouping::Lines`]).
fn pieces<'a>(punkt: Option<&Punkt>, text: &'a str, grouping: Grouping) -> Vec<(&'a str, bool)> {
    let sentences = |t: &'a str| -> Vec<&'a str> {
        match punkt {
            Some(p) => sent_tokenize(p, t),
            None => vec![t],
        }
    };
    match grouping {
        Grouping::Lines => {
            let lines: Vec<&str> = text.split('\n').collect();
            lines
                .par_iter()
                .map(|line| {
                    let s = sentences(line);
                    let n = s.len();
                    s.into_iter()
                        .enumerate()
                        .map(|(i, s)| (s, i + 1 == n))
                        .collect::<Vec<_>>()
                })
                .flatten()
                .collect()
        }
        Grouping::Punkt => sentences(text).into_iter().map(|s| (s, true)).collect(),
        Grouping::Terminators | Grouping::Whole => {
            sentences(text).into_iter().map(|s| (s, false)).collect()
        }
    }
}

/// Tokens of consecutive pieces, stored flat.
#[derive(Default)]
struct Batch {
    bytes: String,
    /// End of each token in `bytes`.
    token_ends: Vec<usize>,
    /// For each piece: end in `token_ends`, and whether it ends a group.
    piece_ends: Vec<(usize, bool)>,
}

/// Text bytes per batch of pieces tokenized by one task.
const BATCH_BYTES: usize = 1 << 20;

/// Applies `rule` to each piece (in parallel, by batches) and gives `emit` the tokens of each
/// piece in order, with the piece's "ends a group" flag; reports bytes done to `job` and stops
/// when it is cancelled.
fn for_each_piece(
    pieces: &[(&str, bool)],
    rule: WordRule,
    job: &Job,
    mut emit: impl FnMut(&[&str], bool) + Send,
) -> Result<()> {
    let mut batches: Vec<&[(&str, bool)]> = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, (piece, _)) in pieces.iter().enumerate() {
        size += piece.len() + 1;
        if size >= BATCH_BYTES {
            batches.push(&pieces[start..=i]);
            start = i + 1;
            size = 0;
        }
    }
    if start < pieces.len() {
        batches.push(&pieces[start..]);
    }
    // A window of batches at a time keeps memory bounded by a few batches per thread; the
    // tokens of one window are handed to `emit` (sequential: interning) while the next window
    // is tokenized on the other cores.
    let window = 4 * rayon::current_num_threads().max(1);
    let mut ready: Vec<Batch> = Vec::new();
    for group in batches.chunks(window) {
        job.check()?;
        let (done, ()) = rayon::join(
            || {
                group
                    .par_iter()
                    .map(|b| tokenize_batch(b, rule))
                    .collect::<Vec<_>>()
            },
            || emit_batches(&ready, &mut emit),
        );
        job.advance(done.iter().map(|b| b.bytes.len() as u64).sum());
        ready = done;
    }
    emit_batches(&ready, &mut emit);
    Ok(())
}

/// Gives `emit` the tokens of each piece of `batches`, in order.
fn emit_batches(batches: &[Batch], emit: &mut impl FnMut(&[&str], bool)) {
    let mut tokens: Vec<&str> = Vec::new();
    for batch in batches {
        let mut token = 0;
        let mut offset = 0;
        for &(end, ends_group) in &batch.piece_ends {
            tokens.clear();
            for &e in &batch.token_ends[token..end] {
                tokens.push(&batch.bytes[offset..e]);
                offset = e;
            }
            token = end;
            emit(&tokens, ends_group);
        }
    }
}

fn tokenize_batch(pieces: &[(&str, bool)], rule: WordRule) -> Batch {
    // sized once from the text (tokens hold about its bytes, a little more where quotes become
    // `` and ''), so that the buffers are not grown and copied token after token
    let bytes: usize = pieces.iter().map(|(p, _)| p.len()).sum();
    let mut batch = Batch {
        bytes: String::with_capacity(bytes + bytes / 8),
        token_ends: Vec::with_capacity(bytes / 4),
        piece_ends: Vec::with_capacity(pieces.len()),
    };
    for &(piece, ends_group) in pieces {
        let push = |t: &str| {
            batch.bytes.push_str(t);
            batch.token_ends.push(batch.bytes.len());
        };
        match rule {
            WordRule::Nltk => word::tokenize(piece, push),
            WordRule::Whitespace => piece
                .split(chars::is_py_space)
                .filter(|t| !t.is_empty())
                .for_each(push),
        }
        batch.piece_ends.push((batch.token_ends.len(), ends_group));
    }
    batch
}

impl Corpus {
    /// Appends the sentences of `text` tokenized as NLTK does: `rule` on each Punkt sentence
    /// (`punkt` None: on each group whole, NLTK's `preserve_line=True`), grouped into corpus
    /// sentences by `grouping`. Empty sentences are dropped.
    pub fn push_nltk_text(
        &mut self,
        text: &str,
        punkt: Option<&Punkt>,
        grouping: Grouping,
        rule: WordRule,
        job: &Job,
    ) -> Result<()> {
        job.stage("splitting sentences", text.len() as u64)?;
        let pieces = pieces(punkt, text, grouping);
        // (token bytes, a little less than the text's: whitespace is dropped)
        job.stage("tokenizing", text.len() as u64)?;
        let mut current: Vec<String> = Vec::new();
        let mut result = Ok(());
        for_each_piece(&pieces, rule, job, |tokens, ends_group| {
            if result.is_err() {
                return;
            }
            match grouping {
                Grouping::Terminators => {
                    for &t in tokens {
                        current.push(t.to_string());
                        if is_terminator(t) {
                            result = self.push_sentence(current.iter().map(String::as_str));
                            current.clear();
                        }
                    }
                }
                Grouping::Whole => current.extend(tokens.iter().map(|t| t.to_string())),
                Grouping::Punkt | Grouping::Lines if current.is_empty() && ends_group => {
                    result = self.push_sentence(tokens.iter().copied());
                }
                Grouping::Punkt | Grouping::Lines => {
                    current.extend(tokens.iter().map(|t| t.to_string()));
                    if ends_group {
                        result = self.push_sentence(current.iter().map(String::as_str));
                        current.clear();
                    }
                }
            }
        })?;
        result?;
        self.push_sentence(current.iter().map(String::as_str))
    }
}
