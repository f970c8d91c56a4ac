//! KenLM's binary model files (`build_binary` output, format version 5), scored in place on the
//! mapped file as KenLM does ([`KenlmModel`]: mapped.rs, over the probing search, probing.rs, or
//! the trie, trie_search.rs; batches of sentences with each order's lookups made together,
//! by_order.rs), and tries converted into a fastppl [`Model`] on demand (trie.rs):
//! `lm/binary_format.{hh,cc}`, `lm/model.cc`, `lm/vocab.cc`, `lm/search_hashed.cc`,
//! `lm/search_trie.cc`, `lm/trie.cc`, `lm/bhiksha.cc`, `lm/quantize.cc`, `util/bit_packing.hh`.
//!
//! ## File
//! ```text
//! header               magic, test values, parameters, counts (header.rs)
//! vocabulary lookup    probing: a hash table of word hashes; trie: a sorted array of them
//! search               probing: hash tables per order (probing.rs); trie: see trie.rs
//! words                NUL-terminated, in id order (words.rs)
//! ```
//! Numbers are in the writing machine's byte order; only little-endian files (x86-64, ARM64)
//! are read, which the header's test values check.
//!
//! ## What is read
//! - Opening ([`open_kenlm_binary`]) maps the file and checks its header and layout, and counts
//!   the words at its end (a scan of the word list's bytes, not of the model's: about 6 ms for
//!   1.3 M words), so it costs nearly the same whatever the model's size and refuses a file cut
//!   anywhere; scores, n-gram lengths and states are then KenLM's own (the same lookups and
//!   float32 sums as `query`).
//! - Probing files (`build_binary probing`, KenLM's default): their tables hold 64-bit hashes of
//!   word-id sequences, not the words, so their n-grams cannot be listed
//!   ([`PROBING_HAS_NO_NGRAMS`]): no ARPA or fastppl-format output from them. Rest-cost probing
//!   files (`build_binary rest`) are refused.
//! - Tries of every kind: plain (`build_binary trie`), quantized (`-q`, `-b`: the values are the
//!   bin centers KenLM's `query` uses), with array-compressed pointers (`-a`), and both.
//!   [`read_kenlm_bytes`] converts one whole (trie.rs), for ARPA and fastppl-binary output: as in
//!   the ARPA reader, log10 values are float32s made float64 natural logs, `-99` is log10 0,
//!   `<s>` is never predicted.
//!
//! Everything is bounds-checked: the sizes of all parts are computed from the header and
//! checked against the file's length before use, and every read is checked again, so a
//! truncated, corrupt or hostile file gives an [`Error::BinaryFormat`] naming the file, never a
//! panic.

mod bits;
mod by_order;
mod header;
mod mapped;
mod pointers;
mod probing;
mod trie;
mod trie_search;
mod values;
mod words;

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Fallback, Model, OrderTable};
use crate::ngram::probing::ProbingTable;
use crate::util::job::Job;
use crate::util::mapped::FileBytes;

pub use header::MAGIC_PREFIX;
use header::{parse_header, SearchKind};
pub use mapped::{KenlmModel, KenlmState, Search};
pub use probing::ProbingModel;
use trie::Trie;
pub use trie_search::TrieModel;
use words::read_words;

/// Why a probing file cannot be converted, listed or written in another format.
pub const PROBING_HAS_NO_NGRAMS: &str = "a KenLM probing binary (build_binary probing, the \
    default) holds hashes of word sequences, not their words, so its n-grams cannot be listed: \
    it can only be scored (in place). For ARPA or fastppl-format output, n-gram counts or \
    fitting, load the ARPA file it was built from, or rebuild the binary as a trie \
    (build_binary trie ...), whose n-grams fastppl reads";

fn format_err(path: &str, message: impl Into<String>) -> Error {
    Error::BinaryFormat {
        path: path.to_string(),
        message: message.into(),
    }
}

/// The little-endian u32 at `bytes[at..]`, if it is there.
fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// The little-endian u64 at `bytes[at..]`, if it is there.
fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// A float32 log10 value as a natural log ([`crate::formats::ln_from_log10`]), with -0.0 (a
/// trie's "no extension" backoff) read as 0.
fn ln_from_log10(value: f32) -> f64 {
    crate::formats::ln_from_log10(value) + 0.0
}

/// Refuses a log10 probability that is NaN or positive, or a log10 backoff that is NaN or
/// infinite upward (the ARPA reader's rules), naming the n-gram `ngram()`.
fn check_values(prob: f32, backoff: f32, ngram: impl Fn() -> String, path: &str) -> Result<()> {
    if prob.is_nan() || prob > 0.0 {
        return Err(format_err(
            path,
            format!(
                "KenLM model: log10 probability {prob} of \"{}\" (expected <= 0)",
                ngram()
            ),
        ));
    }
    if backoff.is_nan() || backoff == f32::INFINITY {
        return Err(format_err(
            path,
            format!("KenLM model: log10 backoff {backoff} of \"{}\"", ngram()),
        ));
    }
    Ok(())
}

/// A KenLM binary file opened for scoring in place.
pub enum KenlmBinary {
    /// A probing file.
    Probing(ProbingModel),
    /// A trie (of any kind); [`read_kenlm_bytes`] converts it into a fastppl model.
    Trie(TrieModel),
}

/// Opens the KenLM binary file at `path` for scoring in place: maps it and checks its header,
/// layout and word list (reporting to `job`, which can cancel it).
pub fn open_kenlm_binary(path: &Path, job: &Job) -> Result<KenlmBinary> {
    let p = path.display().to_string();
    if path.is_dir() {
        return Err(Error::is_a_directory(path));
    }
    job.check()?;
    let file = std::fs::File::open(path).map_err(Error::io(path))?;
    let bytes = FileBytes::map(&file, false).map_err(Error::io(path))?;
    open_kenlm_bytes(std::sync::Arc::new(bytes), &p)
}

/// [`open_kenlm_binary`] on a file's bytes; `path` names it in errors.
pub fn open_kenlm_bytes(bytes: std::sync::Arc<FileBytes>, path: &str) -> Result<KenlmBinary> {
    let header = parse_header(&bytes, path)?;
    let path = path.to_string();
    Ok(match header.search {
        SearchKind::Probing { .. } => {
            KenlmBinary::Probing(ProbingModel::open(bytes, header, path)?)
        }
        SearchKind::Trie { .. } => KenlmBinary::Trie(TrieModel::open(bytes, header, path)?),
    })
}

/// Converts the KenLM trie in `bytes` into a fastppl model (every n-gram read), reporting
/// n-grams read to `job` (which can cancel it); `path` names it in errors.
pub fn read_kenlm_bytes(bytes: &std::sync::Arc<FileBytes>, path: &str, job: &Job) -> Result<Model> {
    let header = parse_header(bytes, path)?;
    let SearchKind::Trie {
        quantized,
        array_pointers,
    } = header.search
    else {
        return Err(format_err(path, PROBING_HAS_NO_NGRAMS));
    };
    let trie = Trie::parse(bytes, &header, quantized, array_pointers, path)?;
    let (vocab, ids) = read_words(bytes, trie.end, header.counts[0], path)?;
    let order = header.counts.len();
    let total = header.counts[1..].iter().sum();
    job.stage("reading KenLM binary", total)?;
    let mut model = Model {
        order,
        bos_eos: true,
        unigram_logp: vec![f64::NAN; vocab.len()],
        unigram_weight: vec![0.0; vocab.len()],
        vocab,
        unigram_counts: Vec::new(),
        higher: header.counts[1..]
            .iter()
            .map(|&c| OrderTable {
                table: ProbingTable::with_entries(c as usize),
                counts: Vec::new(),
            })
            .collect(),
        fallback: Fallback::Chain,
        missing_weight: 0.0,
        normalized: true,
        smoothing: "arpa".to_string(),
        discounts: Vec::new(),
    };
    trie.fill(&mut model, &ids, path, job)?;
    Ok(model)
}
