//! KenLM's trie (`lm/search_trie.{hh,cc}`, `lm/trie.{hh,cc}`): the n-grams as a tree keyed by
//! reversed history, read whole into a fastppl [`Model`].
//!
//! ## Layout (from the start of the search area)
//! ```text
//! quantization tables   (quantized files only, see values.rs)
//! unigrams              (N1 + 2) records of 16 bytes: log10 p (f32), log10 backoff (f32),
//!                       next (u64: the first bigram record of the word's children)
//! order m = 2..N-1      [pointer array block, see pointers.rs] then N_m + 1 bit-packed records
//!                       word | values | next, and 8 bytes of slack
//! order N               N_N + 1 records word | log10 p, and 8 bytes of slack
//! ```
//! Word fields are wide enough for N1 (`RequiredBits`), so a record's width is fixed per order.
//! A record of order m whose parent (order m-1) stands for `w2 .. wm` stands for `w1 w2 .. wm`,
//! `w1` its word: the unigram at the root is the n-gram's *last* word, each level adds one word of
//! history to the left. Children are the records `next(i)..next(i + 1)` of the order below,
//! sorted by word. Every suffix of a stored n-gram is its ancestor, so stored; KenLM's "blank"
//! n-grams (missing from a pruned ARPA file) are stored like the others.
//!
//! ## Reading
//! Orders are read one after the other, each record's n-gram rebuilt from its ancestors' words,
//! and inserted into the model with its context's entry (the context `w1 .. w(m-1)` lies on
//! another branch, read with the order below). Every pointer is checked to be in range and the
//! children ranges to tile the next order exactly, so that a corrupt file gives an error, never
//! a record read twice, skipped or out of bounds.

use super::bits::{packed_bytes, required_bits, BitArray, MAX_FIELD_BITS};
use super::header::Header;
use super::pointers::{array_budget, Pointers};
use super::values::Values;
use super::{check_values, format_err, ln_from_log10, read_u32, read_u64};
use crate::corpus::vocab::BOS;
use crate::error::Result;
use crate::model::Model;
use crate::util::job::Job;
use crate::util::mapped::{FileBytes, MappedSlice};
use std::sync::Arc;

/// The words of the n-gram `ids`, space-separated (for messages).
fn words_of(model: &Model, ids: &[u32]) -> String {
    let words: Vec<&str> = ids.iter().map(|&i| model.vocab.word(i)).collect();
    words.join(" ")
}

/// Bytes of a unigram record.
const UNIGRAM_BYTES: usize = 16;

/// A bit-packed order: records of `word | values [| next]`.
struct Level {
    records: MappedSlice<u8>,
    width: u8,
    word_bits: u8,
    /// Child pointers (middle orders only).
    pointers: Option<Pointers>,
}

impl Level {
    fn value_offset(&self) -> u64 {
        u64::from(self.word_bits)
    }

    /// The records.
    #[inline]
    fn records(&self) -> BitArray<'_> {
        BitArray::new(self.records.as_slice(), self.width)
    }
}

/// The parsed trie of a file, holding views of its (mapped) bytes.
pub struct Trie {
    counts: Vec<u64>,
    values: Values,
    /// The unigram records (`UNIGRAM_BYTES` each).
    unigrams: MappedSlice<u8>,
    /// Orders 2..=N at index m-2.
    levels: Vec<Level>,
    /// Where the search area ends: the words follow.
    pub end: usize,
}

/// A view of `bytes[at..at + len]`, or a truncation error.
fn region(bytes: &Arc<FileBytes>, at: usize, len: u64, path: &str) -> Result<MappedSlice<u8>> {
    usize::try_from(len)
        .ok()
        .and_then(|len| MappedSlice::new(Arc::clone(bytes), at, len))
        .ok_or_else(|| {
            format_err(
                path,
                format!(
                    "truncated KenLM binary file: {} bytes, but its trie needs {len} bytes from \
                     byte {at}",
                    bytes.len()
                ),
            )
        })
}

impl Trie {
    /// Lays the trie of `header` over the file `bytes`, checking that every part fits.
    pub fn parse(
        bytes: &Arc<FileBytes>,
        header: &Header,
        quantized: bool,
        array_pointers: bool,
        path: &str,
    ) -> Result<Self> {
        let counts = header.counts.clone();
        let order = counts.len();
        // the vocabulary's lookup structure: a u64 count and a u64 hash per word
        let search_start = 8 * (counts[0] as usize) + 8 + header.data_start;
        let search = bytes.get(search_start..).unwrap_or(&[]);
        let (values, quant_len) = Values::parse(search, order, quantized, path)?;
        let mut at = search_start + quant_len;
        let unigram_len = (counts[0] + 2) * UNIGRAM_BYTES as u64;
        let unigrams = region(bytes, at, unigram_len, path)?;
        at += unigrams.as_slice().len();
        let budget = if array_pointers && order > 2 {
            Some(array_budget(bytes, at, path)?)
        } else {
            None
        };
        let word_bits = required_bits(counts[0]);
        let mut levels = Vec::with_capacity(order - 1);
        for m in 2..=order {
            let count = counts[m - 1];
            let (pointers, value_bits, block) = if m < order {
                let (p, block) = Pointers::parse(bytes, at, count, counts[m], budget, path)?;
                (Some(p), values.middle_bits(), block)
            } else {
                (None, values.longest_bits(), 0)
            };
            at += block;
            let width = u64::from(word_bits)
                + u64::from(value_bits)
                + pointers.as_ref().map_or(0, |p| u64::from(p.bits()));
            let Some(width) = u8::try_from(width)
                .ok()
                .filter(|_| pointers.as_ref().is_none_or(|p| p.bits() <= MAX_FIELD_BITS))
            else {
                return Err(format_err(
                    path,
                    format!(
                        "KenLM trie: {m}-gram records of {width} bits, wider than KenLM writes"
                    ),
                ));
            };
            let len = packed_bytes(count, width).unwrap_or(u64::MAX);
            let records = region(bytes, at, len, path)?;
            at += records.as_slice().len();
            levels.push(Level {
                records,
                width,
                word_bits,
                pointers,
            });
        }
        Ok(Trie {
            counts,
            values,
            unigrams,
            levels,
            end: at,
        })
    }

    /// (log10 p, log10 backoff, next) of unigram record `k` (`k <= N1`: the last holds only the
    /// end pointer).
    pub fn unigram(&self, k: u64) -> (f32, f32, u64) {
        let at = k as usize * UNIGRAM_BYTES;
        let f = |i: usize| f32::from_bits(read_u32(self.unigrams.as_slice(), at + i).unwrap_or(0));
        (
            f(0),
            f(4),
            read_u64(self.unigrams.as_slice(), at + 8).unwrap_or(u64::MAX),
        )
    }

    /// The first child of record `p` of order `m` (`next(p)`; record `p + 1`'s gives the end of
    /// its children); `None` if it lies outside the file.
    #[inline]
    pub fn next(&self, m: usize, p: u64) -> Option<u64> {
        if m == 1 {
            return (p <= self.counts[0]).then(|| self.unigram(p).2);
        }
        let level = self.levels.get(m - 2)?;
        let offset = level.value_offset() + u64::from(self.values.middle_bits());
        level.pointers.as_ref()?.next(&level.records(), p, offset)
    }

    /// The record of order `m` among `begin..end` (children of one record, sorted by word) whose
    /// word is `w` (KenLM's `FindBitPacked`, here a binary search: the same record).
    #[inline]
    pub fn find(&self, m: usize, begin: u64, end: u64, w: u32) -> Option<u64> {
        let level = &self.levels[m - 2];
        let records = level.records();
        let (mut lo, mut hi) = (begin, end.min(self.counts[m - 1]));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let word = records.field(mid, 0, level.word_bits)?;
            match word.cmp(&u64::from(w)) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// (KenLM word id, log10 p, log10 backoff (0 on the highest order)) of record `c` of order
    /// `m`; `None` if it lies outside the file.
    pub fn record(&self, m: usize, c: u64) -> Option<(u64, f32, f32)> {
        let level = &self.levels[m - 2];
        let records = level.records();
        let word = records.field(c, 0, level.word_bits)?;
        let offset = level.value_offset();
        let (prob, backoff) = if m < self.counts.len() {
            self.values.middle(m, &records, c, offset)?
        } else {
            (self.values.longest(&records, c, offset)?, 0.0)
        };
        Some((word, prob, backoff))
    }

    /// Fills `model` (empty tables sized for the counts, `ids[k]` the fastppl id of KenLM word
    /// `k`) with every n-gram of the trie, reporting n-grams to `job`.
    ///
    /// (Over 80 lines on purpose: one walk of the trie, order by order, whose bounds checks of
    /// each record and pointer sit beside the reads they guard.)
    pub fn fill(&self, model: &mut Model, ids: &[u32], path: &str, job: &Job) -> Result<()> {
        let fail = |message: String| format_err(path, format!("KenLM trie: {message}"));
        let corrupt = |m: usize, i: u64| {
            fail(format!(
                "{m}-gram record {i} lies outside the file (corrupt file?)"
            ))
        };
        for (k, &id) in ids.iter().enumerate() {
            let (prob, backoff, _) = self.unigram(k as u64);
            check_values(prob, backoff, || model.vocab.word(id).to_string(), path)?;
            model.unigram_logp[id as usize] = ln_from_log10(prob);
            model.unigram_weight[id as usize] = ln_from_log10(backoff);
        }
        model.unigram_logp[BOS as usize] = f64::NEG_INFINITY;
        // per order m >= 2 (index m-2), each record's word (fastppl id) and parent record
        let mut words: Vec<Vec<u32>> = Vec::new();
        let mut parents: Vec<Vec<u32>> = Vec::new();
        let mut ngram: Vec<u32> = Vec::new();
        let mut ticks = 0u64;
        let order = self.counts.len();
        for m in 2..=order {
            let count = self.counts[m - 1];
            let keep = m < order;
            let mut level_words = Vec::with_capacity(if keep { count as usize } else { 0 });
            let mut level_parents = Vec::with_capacity(if keep { count as usize } else { 0 });
            let next_of = |p: u64| self.next(m - 1, p).ok_or_else(|| corrupt(m - 1, p));
            let mut begin = next_of(0)?;
            if begin != 0 {
                return Err(fail(format!(
                    "the {m}-grams start at record {begin} instead of 0 (corrupt file?)"
                )));
            }
            for p in 0..self.counts[m - 2] {
                let end = next_of(p + 1)?;
                if end < begin || end > count {
                    return Err(fail(format!(
                        "the children of {}-gram record {p} are records {begin}..{end} of the \
                         {count} {m}-grams (corrupt file?)",
                        m - 1
                    )));
                }
                for c in begin..end {
                    let (w, prob, backoff) = self.record(m, c).ok_or_else(|| corrupt(m, c))?;
                    let Some(&w) = ids.get(w as usize) else {
                        return Err(fail(format!(
                            "{m}-gram record {c} has word id {w}, but there are {} words",
                            ids.len()
                        )));
                    };
                    // the n-gram: this word, then the parent's n-gram
                    ngram.clear();
                    ngram.push(w);
                    let mut e = p as usize;
                    for k in (2..m).rev() {
                        ngram.push(words[k - 2][e]);
                        e = parents[k - 2][e] as usize;
                    }
                    ngram.push(ids[e]);
                    check_values(prob, backoff, || words_of(model, &ngram), path)?;
                    let Some(context) = model.find(&ngram[..m - 1]) else {
                        return Err(fail(format!(
                            "the context of the {m}-gram \"{}\" is not among the {}-grams",
                            words_of(model, &ngram),
                            m - 1
                        )));
                    };
                    if !model.insert_ngram(
                        m,
                        context,
                        ngram[m - 1],
                        ln_from_log10(prob),
                        ln_from_log10(backoff),
                    ) {
                        return Err(fail(format!(
                            "the {m}-gram \"{}\" is stored twice",
                            words_of(model, &ngram)
                        )));
                    }
                    if keep {
                        level_words.push(w);
                        level_parents.push(p as u32);
                    }
                    job.tick(&mut ticks)?;
                }
                begin = end;
            }
            if begin != count {
                return Err(fail(format!(
                    "the {}-grams' children end at record {begin}, but there are {count} {m}-grams (corrupt file?)",
                    m - 1
                )));
            }
            words.push(level_words);
            parents.push(level_parents);
        }
        Ok(())
    }
}
