//! NLTK's `word_tokenize` and `sent_tokenize` (NLTK 3.10.4), ported rule for rule so that the
//! tokens and sentences are NLTK's own; checked token for token against NLTK by
//! `tests/parity/test_nltk_native.py`.
//!
//! - [`params`]: Punkt parameters from NLTK's `punkt_tab/<language>/` files;
//! - [`punkt`]: `PunktSentenceTokenizer` at inference (sentence spans);
//! - [`word`]: `NLTKWordTokenizer` (the Treebank rules, applied to one sentence);
//! - [`chars`]: the Python character classes both need;
//! - `batch`: the tokens of a batch of sentences, their types interned on the worker thread.
//!
//! This module joins them as `nltk.tokenize` does (`word_tokenize(text, language,
//! preserve_line)`: Punkt sentences, then the word rules on each) and feeds a [`Corpus`]. The
//! Punkt pass finds its candidates over the whole text on one thread (one look at each `.`,
//! `?`, `!`) and decides them on all cores; the word rules, most of the work, run on all cores
//! over batches of whole sentences, which cannot change the result since NLTK applies them to
//! each sentence on its own. Each batch keeps its distinct tokens once and its tokens as
//! indices of them; batches are consumed in order (the corpus's vocabulary then sees each type
//! of a batch once, not each token), a window at a time, so memory follows the output.
//! [`word_tokenize`] hands each batch over as soon as the batches before it are, so that its
//! caller (the Python list of tokens) works on it while the next ones are tokenized.

mod batch;
pub mod chars;
pub mod params;
pub mod punkt;
#[cfg(test)]
mod random_texts;
pub mod word;

use rayon::prelude::*;

use super::vocab::{BOS, EOS, UNSET};
use super::{is_terminator, Corpus};
use crate::error::Result;
use crate::util::interner::Interner;
use crate::util::job::Job;
use batch::Batch;
pub use batch::{token_room, type_room};
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

/// The tokens of a batch of consecutive sentences, as [`word_tokenize`] hands them over (in text
/// order): each token as a type of the text (its distinct tokens, numbered in order of first
/// occurrence), and the spellings of the types first met in this batch. A caller converts each
/// type once, not each token.
pub struct TokenBatch {
    batch: Batch,
    /// For each type of the batch, the text's type.
    text_types: Vec<u32>,
    /// The first text type this batch introduced (the number of types before it).
    first_new: u32,
}

impl TokenBatch {
    /// The spellings of the text's types first met in this batch, in order of their ids (which
    /// follow those of the batches before).
    pub fn new_types(&self) -> impl Iterator<Item = &str> {
        (0..self.batch.num_types() as u32)
            .filter(|&t| self.text_types[t as usize] >= self.first_new)
            .map(|t| self.batch.spelling(t))
    }

    /// Each token, as a type of the text.
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.batch
            .tokens()
            .iter()
            .map(|&t| self.text_types[t as usize])
    }
}

/// The text's types met so far (spellings copied, so that each batch can go once handed over).
struct TextTypes(Interner);

impl TextTypes {
    /// Room for the types of `text_bytes` bytes of text, about: a type per 64 bytes (Machado
    /// has one per 90; more for a short text, see [`type_room`]), up to 2^16 (the types
    /// of larger texts grow more slowly: one per 310 bytes on a 64 MB Gutenberg shard), so that
    /// the index is seldom rebuilt as it grows.
    fn for_text(text_bytes: usize) -> Self {
        let types = type_room(text_bytes, 64).min(1 << 16);
        TextTypes(Interner::with_capacity(types, 8 * types))
    }

    /// For each type of `batch`: the text's type, or [`UNSET`] when it is not one yet (looked up
    /// on the worker threads, against the batches before `batch`'s window).
    fn known(&self, batch: &Batch) -> Vec<u32> {
        (0..batch.num_types() as u32)
            .map(|t| self.0.get(batch.spelling(t)).unwrap_or(UNSET))
            .collect()
    }

    /// `batch`, whose types `known` looked up, with those still unknown made types of the text
    /// (one may have been added by an earlier batch of the same window).
    fn push(&mut self, batch: Batch, mut text_types: Vec<u32>) -> TokenBatch {
        let first_new = u32::try_from(self.0.len()).expect("fewer than 2^32 types");
        for (t, id) in text_types.iter_mut().enumerate() {
            if *id == UNSET {
                *id = self.0.intern(batch.spelling(t as u32));
            }
        }
        TokenBatch {
            batch,
            text_types,
            first_new,
        }
    }
}

/// `word_tokenize(text, preserve_line=punkt.is_none())`: Punkt sentences (unless `punkt` is
/// None), then `rule` on each (NLTK's is `NLTKWordTokenizer`), handed to `emit` by batches of
/// sentences in text order as they are ready (so that a caller converts one batch while the
/// next are tokenized); `job` can cancel it.
pub fn word_tokenize(
    punkt: Option<&Punkt>,
    text: &str,
    rule: WordRule,
    job: &Job,
    emit: &mut (dyn FnMut(TokenBatch) + Send),
) -> Result<()> {
    job.stage("splitting sentences", text.len() as u64)?;
    let pieces = match punkt {
        Some(p) => sent_tokenize(p, text)
            .into_iter()
            .map(|s| (s, true))
            .collect(),
        None => vec![(text, true)],
    };
    job.stage("tokenizing", text.len() as u64)?;
    for_each_batch(
        &pieces,
        rule,
        job,
        &mut TextTypes::for_text(text.len()),
        TextTypes::known,
        |types, batch, text_types| emit(types.push(batch, text_types)),
    )
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

/// Text bytes per batch of pieces tokenized by one task, at most: bounds the memory of a window
/// of batches on large inputs.
const MAX_BATCH_BYTES: usize = 1 << 20;
/// Text bytes per batch, at least: a task is worth scheduling.
const MIN_BATCH_BYTES: usize = 1 << 16;

/// The batch size for `total` bytes of text: small enough that a few-MB text still makes
/// several batches per thread (for balance, and so that interning one window overlaps
/// tokenizing the next).
fn batch_bytes(total: usize) -> usize {
    (total / (8 * rayon::current_num_threads().max(1))).clamp(MIN_BATCH_BYTES, MAX_BATCH_BYTES)
}

/// Applies `rule` to each piece (in parallel, by batches of whole pieces), looks each batch up
/// in `state` by `resolve` (in parallel), and gives `emit` the batches in order with what
/// `resolve` made of them; reports bytes of text done to `job` and stops when it is cancelled.
fn for_each_batch<S: Sync + Send, R: Send>(
    pieces: &[(&str, bool)],
    rule: WordRule,
    job: &Job,
    state: &mut S,
    resolve: impl Fn(&S, &Batch) -> R + Sync,
    mut emit: impl FnMut(&mut S, Batch, R) + Send,
) -> Result<()> {
    let batch_size = batch_bytes(pieces.iter().map(|(p, _)| p.len() + 1).sum());
    let parts = cut_long_pieces(pieces, batch_size);
    let pieces = parts.as_deref().unwrap_or(pieces);
    let batches = batches_of(pieces, batch_size);
    let text_bytes = |b: &[(&str, bool)]| b.iter().map(|(p, _)| p.len() as u64 + 1).sum::<u64>();
    if let [only] = batches[..] {
        // a short text (a sentence a call, say): tokenized on this thread, as handing it to the
        // pool and waiting for it would take longer than the work
        job.check()?;
        let batch = tokenize_batch(only, rule);
        let r = resolve(state, &batch);
        emit(state, batch, r);
        job.advance(text_bytes(only));
        return Ok(());
    }
    // A window of batches at a time keeps memory bounded by a few batches per thread; the
    // tokens of one window are handed to `emit` (sequential: interning) while the next window
    // is tokenized on the other cores. Between the two, `resolve` runs on all cores on the
    // window just tokenized, against the state `emit` left (so that `emit`, the sequential
    // part, only does what `resolve` could not: interning the types new to the corpus).
    let window = 4 * rayon::current_num_threads().max(1);
    let mut ready: Vec<(Batch, R)> = Vec::new();
    for group in batches.chunks(window) {
        job.check()?;
        let (done, ()) = rayon::join(
            || {
                group
                    .par_iter()
                    .map(|b| tokenize_batch(b, rule))
                    .collect::<Vec<_>>()
            },
            || {
                ready.drain(..).for_each(|(batch, r)| emit(state, batch, r));
            },
        );
        job.advance(group.iter().map(|b| text_bytes(b)).sum());
        let known: &S = state;
        ready = done
            .into_par_iter()
            .map(|batch| {
                let r = resolve(known, &batch);
                (batch, r)
            })
            .collect();
    }
    ready.drain(..).for_each(|(batch, r)| emit(state, batch, r));
    Ok(())
}

/// `pieces` with each piece longer than `batch_size` (a text with `preserve_line=True`, a long
/// line) cut where the cut cannot change its tokens ([`word::split_at_cuts`]), so that its parts
/// are tokenized in parallel; None when no piece is that long.
fn cut_long_pieces<'a>(
    pieces: &[(&'a str, bool)],
    batch_size: usize,
) -> Option<Vec<(&'a str, bool)>> {
    if pieces.iter().all(|(p, _)| p.len() <= batch_size) {
        return None;
    }
    let mut parts = Vec::new();
    for &(piece, ends_group) in pieces {
        if piece.len() <= batch_size {
            parts.push((piece, ends_group));
            continue;
        }
        let cut = word::split_at_cuts(piece, batch_size);
        let last = cut.len() - 1;
        parts.extend(
            cut.into_iter()
                .enumerate()
                .map(|(i, part)| (part, ends_group && i == last)),
        );
    }
    Some(parts)
}

/// `pieces` in batches of consecutive pieces of at least `batch_size` bytes (the last may be
/// smaller), counting a byte between pieces.
fn batches_of<'p, 'a>(
    pieces: &'p [(&'a str, bool)],
    batch_size: usize,
) -> Vec<&'p [(&'a str, bool)]> {
    let mut batches = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, (piece, _)) in pieces.iter().enumerate() {
        size += piece.len() + 1;
        if size >= batch_size {
            batches.push(&pieces[start..=i]);
            start = i + 1;
            size = 0;
        }
    }
    if start < pieces.len() {
        batches.push(&pieces[start..]);
    }
    batches
}

fn tokenize_batch(pieces: &[(&str, bool)], rule: WordRule) -> Batch {
    let bytes: usize = pieces.iter().map(|(p, _)| p.len()).sum();
    let mut batch = Batch::with_capacity(bytes, pieces.len());
    for &(piece, ends_group) in pieces {
        let push = |t: &str| batch.push_token(t);
        match rule {
            WordRule::Nltk => word::tokenize(piece, push),
            WordRule::Whitespace => word::py_split(piece, push),
        }
        batch.end_piece(ends_group);
    }
    batch
}

/// For each type of `batch`: its id in `corpus`'s vocabulary ([`UNSET`] when it is not there,
/// or is a sentence marker, which [`Corpus::push_token`] refuses), and, when `at_terminators`,
/// whether it is a terminator.
fn known(corpus: &Corpus, batch: &Batch, at_terminators: bool) -> (Vec<u32>, Vec<bool>) {
    let vocab = corpus.vocab();
    let types = 0..batch.num_types() as u32;
    let ids = types
        .clone()
        .map(|t| match vocab.get(batch.spelling(t)) {
            Some(id) if id != BOS && id != EOS => id,
            _ => UNSET,
        })
        .collect();
    let terminators = if at_terminators {
        types.map(|t| is_terminator(batch.spelling(t))).collect()
    } else {
        Vec::new()
    };
    (ids, terminators)
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
        job.stage("tokenizing", text.len() as u64)?;
        // Each type of a batch is looked up in the vocabulary on the worker threads (`known`);
        // a type not found there is interned by its first token (which checks it, and keeps the
        // vocabulary's ids in order of first occurrence); its other tokens reuse the id.
        let at_terminators = grouping == Grouping::Terminators;
        let mut result = Ok(());
        for_each_batch(
            &pieces,
            rule,
            job,
            self,
            |corpus, batch| known(corpus, batch, at_terminators),
            |corpus, batch, (mut ids, terminators)| {
                if result.is_err() {
                    return;
                }
                for (tokens, ends_group) in batch.pieces() {
                    for &t in tokens {
                        let id = &mut ids[t as usize];
                        if *id == UNSET {
                            match corpus.push_token(batch.spelling(t)) {
                                Ok(new) => *id = new,
                                Err(e) => {
                                    result = Err(e);
                                    return;
                                }
                            }
                        } else {
                            corpus.push_id(*id);
                        }
                        if at_terminators && terminators[t as usize] {
                            corpus.end_sentence();
                        }
                    }
                    if ends_group {
                        corpus.end_sentence();
                    }
                }
            },
        )?;
        result?;
        self.end_sentence();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn english() -> Punkt {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("python/fastppl/data/punkt_tab/english");
        Punkt::new(PunktParams::load(&dir).unwrap())
    }

    #[test]
    fn text_types_are_found_once_across_batches() {
        // enough text for more batches than a window holds, the same words in each
        let sentence = "Dr. Watson's here, isn't he? The game (afoot) is on. ";
        let batches = 4 * rayon::current_num_threads().max(1) + 2;
        let text = sentence.repeat(batches * MIN_BATCH_BYTES / sentence.len());
        let punkt = english();
        let mut batches = Vec::new();
        word_tokenize(
            Some(&punkt),
            &text,
            WordRule::Nltk,
            &Job::none(),
            &mut |b| batches.push(b),
        )
        .unwrap();
        let expected: Vec<String> = sent_tokenize(&punkt, &text)
            .into_iter()
            .flat_map(|s| {
                let mut out = Vec::new();
                word::tokenize(s, |t| out.push(t.to_string()));
                out
            })
            .collect();
        assert!(batches.len() > 4 * rayon::current_num_threads().max(1));
        // the types, batch after batch: distinct, in order of first occurrence
        let types: Vec<&str> = batches.iter().flat_map(TokenBatch::new_types).collect();
        let mut first = Vec::new();
        for t in &expected {
            if !first.contains(&t.as_str()) {
                first.push(t.as_str());
            }
        }
        assert_eq!(types, first);
        // the batches' tokens, read through the text's types, are the tokens
        let read: Vec<&str> = batches
            .iter()
            .flat_map(TokenBatch::tokens)
            .map(|id| types[id as usize])
            .collect();
        assert_eq!(read, expected);
    }
}
