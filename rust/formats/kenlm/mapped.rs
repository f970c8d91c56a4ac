//! KenLM binary files scored in place, whatever their search structure: the scoring steps of
//! `lm/model.cc` (`FullScore`, `ScoreExceptBackoff`, `ResumeScore`, `GetState`) over a
//! [`Search`] (the probing tables, probing.rs, or the trie, trie_search.rs), on the mapped file.
//!
//! A state ([`KenlmState`], KenLM's `State`) keeps the context words that can still matter,
//! most recent first, with their log10 backoffs: a word is kept while a stored n-gram extends it
//! to the right (a backoff other than -0.0, KenLM's `HasExtension`). Scoring a word looks up the
//! n-grams ending at it one order at a time, walking back through the context, and stops at the
//! first one missing or "independent left" (no longer stored n-gram ends with it); the
//! probability is the longest match's plus the backoffs of the context orders it did not reach,
//! summed in float32 as KenLM does, so scores equal `query`'s and the `kenlm` module's.
//!
//! Opening reads the header, checks every section's size against the file's length, and checks
//! the word list at the end by a scan of its bytes (`<unk>` first, a NUL after the last word, as
//! many words as the header counts unigrams: [`check_words`]), so that a truncated file is
//! refused when opened; the words themselves are decoded only when asked for, as KenLM does.

use std::sync::Arc;

use super::format_err;
use super::header::Header;
use super::words::{check_words, read_words};
use crate::corpus::vocab::UNK;
use crate::error::{Error, Result};
use crate::model::interleaved;
use crate::model::scorer::Scorer;
use crate::util::job::Job;
use crate::util::mapped::FileBytes;

/// A KenLM search structure, used in place.
pub trait Search: Send + Sync + Sized {
    /// Where a lookup stands: what the next (longer) n-gram is found from.
    type Node: Copy + Default;

    /// Lays the structure of `header` over `bytes`, checking that it fits; returns it and
    /// where its words start.
    fn open(bytes: &Arc<FileBytes>, header: &Header, path: &str) -> Result<(Self, usize)>;
    /// KenLM's word id of `word` (`None`: `<unk>`).
    fn word_id(&self, word: &str) -> Option<u32>;
    /// (log10 p, log10 backoff, independent left, node) of word id `w` (`<unk>`'s for an id
    /// out of range).
    fn unigram(&self, w: u32) -> (f32, f32, bool, Self::Node);
    /// The `(j + 2)`-gram made of `node`'s n-gram and `w` to its left: (log10 p, log10
    /// backoff, independent left), `node` moved to it.
    fn middle(&self, j: usize, w: u32, node: &mut Self::Node) -> Option<(f32, f32, bool)>;
    /// log10 p of the highest-order n-gram made of `node`'s n-gram and `w` to its left.
    fn longest(&self, w: u32, node: Self::Node) -> Option<f32>;
    /// Prefetches what looking up `node`'s n-gram with `w` to its left reads first (as
    /// [`Search::middle`] with `j`, or [`Search::longest`] where `j + 2` is the order; a hint).
    fn prefetch(&self, _j: usize, _w: u32, _node: Self::Node) {}
    /// Whether [`Search::prefetch`] fetches anything (a probing file's slots). Batches are then
    /// scored one order at a time (`super::by_order`: about 1.2x per core on lmplz's
    /// Gutenberg 5-gram), else sentences side by side ([`crate::model::interleaved`]).
    const PREFETCHES: bool = false;
}

/// Where a scoring step finds its n-grams: in the search structure itself, or among lookups a
/// batch made ahead ([`super::by_order`]).
pub(super) trait Lookups<N> {
    /// As [`Search::unigram`].
    fn unigram(&mut self, w: u32) -> (f32, f32, bool, N);
    /// As [`Search::middle`].
    fn middle(&mut self, j: usize, w: u32, node: &mut N) -> Option<(f32, f32, bool)>;
    /// As [`Search::longest`].
    fn longest(&mut self, w: u32, node: N) -> Option<f32>;
}

impl<S: Search> Lookups<S::Node> for &S {
    #[inline]
    fn unigram(&mut self, w: u32) -> (f32, f32, bool, S::Node) {
        Search::unigram(*self, w)
    }
    #[inline]
    fn middle(&mut self, j: usize, w: u32, node: &mut S::Node) -> Option<(f32, f32, bool)> {
        Search::middle(*self, j, w, node)
    }
    #[inline]
    fn longest(&mut self, w: u32, node: S::Node) -> Option<f32> {
        Search::longest(*self, w, node)
    }
}

/// KenLM's `HasExtension`: any backoff but -0.0.
#[inline]
pub fn has_extension(backoff: f32) -> bool {
    backoff.to_bits() != (-0.0f32).to_bits()
}

/// A KenLM binary file scored in place.
pub struct KenlmModel<S> {
    search: S,
    path: String,
    counts: Vec<u64>,
    bos: u32,
    eos: u32,
    /// Where the words start.
    words_at: usize,
    bytes: Arc<FileBytes>,
}

/// KenLM's `State`: the context words that can matter, most recent first, with their backoffs.
#[derive(Debug, Clone, PartialEq)]
pub struct KenlmState {
    /// `words[..length]`, most recent first.
    words: Vec<u32>,
    /// `backoff[j]`: log10 backoff of the (j+1)-gram `words[..=j]` (reversed).
    backoff: Vec<f32>,
    length: usize,
    /// Scratch for the next backoffs.
    next: Vec<f32>,
}

impl KenlmState {
    /// The context kept, oldest first.
    pub fn context(&self) -> Vec<u32> {
        self.words[..self.length].iter().rev().copied().collect()
    }
}

impl<S: Search> KenlmModel<S> {
    /// The model in `bytes` (a file whose header is `header`), named `path` in errors.
    pub fn open(bytes: Arc<FileBytes>, header: Header, path: String) -> Result<Self> {
        let (search, words_at) = S::open(&bytes, &header, &path)?;
        check_words(&bytes, words_at, header.counts[0], &path)?;
        let mut model = KenlmModel {
            search,
            path,
            counts: header.counts,
            bos: UNK,
            eos: UNK,
            words_at,
            bytes,
        };
        model.bos = model.id("<s>");
        model.eos = model.id("</s>");
        for (id, name) in [(model.bos, "<s>"), (model.eos, "</s>")] {
            if id == UNK {
                return Err(format_err(
                    &model.path,
                    format!(
                        "the KenLM model has no {name}: fastppl, like KenLM by default, needs the \
                         sentence markers <s> and </s>"
                    ),
                ));
            }
        }
        Ok(model)
    }

    /// Number of n-grams of each order in the header (unigrams with `<unk>`, `<s>`, `</s>`).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The file's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &Arc<FileBytes> {
        &self.bytes
    }

    /// The words in KenLM's id order, read from the end of the file.
    pub fn words(&self) -> Result<Vec<String>> {
        let (vocab, ids) = read_words(&self.bytes, self.words_at, self.counts[0], &self.path)?;
        Ok(ids.iter().map(|&i| vocab.word(i).to_string()).collect())
    }

    /// The search structure.
    pub(super) fn search(&self) -> &S {
        &self.search
    }

    /// KenLM's id of `<s>`.
    pub(super) fn bos_id(&self) -> u32 {
        self.bos
    }

    /// KenLM's `FullScore` in log10: (prob, matched length); advances `state`. The n-grams are
    /// found in `lookups`.
    #[inline]
    pub(super) fn full_score_log10(
        &self,
        lookups: &mut impl Lookups<S::Node>,
        state: &mut KenlmState,
        w: u32,
    ) -> (f32, usize) {
        let order = self.counts.len();
        let (mut prob, backoff, mut independent, mut node) = lookups.unigram(w);
        let mut found = 1;
        state.next[0] = backoff;
        let mut length = usize::from(has_extension(backoff));
        for (j, &context_word) in state.words[..state.length].iter().enumerate() {
            if independent {
                break;
            }
            if j + 2 == order {
                if let Some(p) = lookups.longest(context_word, node) {
                    prob = p;
                    found = order;
                }
                break;
            }
            let Some((p, b, i)) = lookups.middle(j, context_word, &mut node) else {
                break;
            };
            (prob, independent) = (p, i);
            found = j + 2;
            state.next[j + 1] = b;
            if has_extension(b) {
                length = found;
            }
        }
        for b in &state.backoff[found - 1..state.length] {
            prob += b;
        }
        if length > 0 {
            state.words.copy_within(0..length - 1, 1);
            state.words[0] = w;
        }
        std::mem::swap(&mut state.backoff, &mut state.next);
        state.length = length;
        (prob, found)
    }

    /// KenLM's `GetState`: the state after `reversed` (most recent first, at most N-1 words).
    fn state_from_reversed(&self, reversed: &[u32]) -> KenlmState {
        let mut state = self.empty_state();
        let Some((&first, rest)) = reversed.split_first() else {
            return state;
        };
        let (_, backoff, _, mut node) = self.search.unigram(first);
        state.backoff[0] = backoff;
        state.length = usize::from(has_extension(backoff));
        for (j, &w) in rest.iter().enumerate() {
            let Some((_, b, _)) = self.search.middle(j, w, &mut node) else {
                break;
            };
            state.backoff[j + 1] = b;
            if has_extension(b) {
                state.length = j + 2;
            }
        }
        state.words[..state.length].copy_from_slice(&reversed[..state.length]);
        state
    }

    fn empty_state(&self) -> KenlmState {
        let keep = self.counts.len() - 1;
        KenlmState {
            words: vec![UNK; keep],
            backoff: vec![0.0; keep],
            length: 0,
            next: vec![0.0; keep],
        }
    }

    /// KenLM's `BaseFullScore` from a context (model ids, oldest first): (ln p, matched
    /// length, the context kept after `w`, oldest first). Ids beyond the vocabulary (a context
    /// from another model) are refused.
    pub fn score_word(&self, context: &[u32], w: u32) -> Result<(f64, usize, Vec<u32>)> {
        let size = self.counts[0];
        if let Some(&bad) = context
            .iter()
            .chain([&w])
            .find(|&&id| u64::from(id) >= size)
        {
            return Err(Error::invalid(format!(
                "word id {bad} is not in this model's vocabulary of {size} words: the state \
                 was written by another model"
            )));
        }
        let mut state = Scorer::state_after(self, context);
        let (logp, found) = self.score_full(&mut state, w);
        Ok((logp, found, state.context()))
    }
}

impl<S: Search> Scorer for KenlmModel<S> {
    type State = KenlmState;

    fn order(&self) -> usize {
        self.counts.len()
    }
    fn bos_eos(&self) -> bool {
        true
    }
    fn vocab_size(&self) -> usize {
        self.counts[0] as usize - 1
    }
    fn eos(&self) -> u32 {
        self.eos
    }
    fn id(&self, word: &str) -> u32 {
        self.search
            .word_id(word)
            .filter(|&id| u64::from(id) < self.counts[0])
            .unwrap_or(UNK)
    }
    fn contains(&self, word: &str) -> bool {
        self.id(word) != UNK
    }
    fn sentence_start(&self) -> KenlmState {
        let mut state = self.empty_state();
        self.restart(&mut state);
        state
    }
    fn null_context(&self) -> KenlmState {
        self.empty_state()
    }
    /// KenLM's `BeginSentenceState`: `<s>` kept whatever its backoff.
    fn restart(&self, state: &mut KenlmState) {
        state.words[0] = self.bos;
        state.backoff[0] = self.search.unigram(self.bos).1;
        state.length = 1;
    }
    fn state_after(&self, ids: &[u32]) -> KenlmState {
        let keep = ids.len().min(self.counts.len() - 1);
        let reversed: Vec<u32> = ids[ids.len() - keep..].iter().rev().copied().collect();
        self.state_from_reversed(&reversed)
    }
    #[inline]
    fn score_full(&self, state: &mut KenlmState, w: u32) -> (f64, usize) {
        let (log10, found) = self.full_score_log10(&mut &self.search, state, w);
        (crate::formats::ln_from_log10(log10), found)
    }
    /// One order at a time (`super::by_order`) where the search prefetches
    /// ([`Search::PREFETCHES`]), else sentences side by side.
    fn score_batch(&self, ids: &[u32], ends: &[usize], out: &mut Vec<f64>, job: &Job) {
        if S::PREFETCHES {
            super::by_order::score_batch(self, ids, ends, out, job);
        } else {
            interleaved::score_batch(self, ids, ends, out, job);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_negative_zero_extends_nothing() {
        assert!(!has_extension(-0.0) && has_extension(0.0) && has_extension(-0.1));
    }

    /// A file cut anywhere in its word list, or with a word added, is refused when opened
    /// (the fuzz seeds: a trie and a probing file), naming the file and what is wrong.
    #[test]
    fn a_cut_or_longer_word_list_is_refused_at_open() {
        use crate::formats::kenlm::open_kenlm_bytes;
        let open = |data: &[u8]| {
            let bytes = Arc::new(FileBytes::read(data, data.len()).unwrap());
            open_kenlm_bytes(bytes, "cut.bin").map(|_| ())
        };
        for seed in [
            include_bytes!("../../fuzz/seeds/kenlm_reader/small.trie.bin").as_slice(),
            include_bytes!("../../fuzz/seeds/kenlm_reader/tiny.probing.bin"),
        ] {
            open(seed).unwrap();
            let start = seed.windows(6).position(|w| w == b"<unk>\0").unwrap();
            let words = seed[start..].iter().filter(|&&b| b == 0).count();
            for cut in start..seed.len() {
                let e = open(&seed[..cut]).unwrap_err().to_string();
                assert!(
                    e.starts_with("cut.bin: ") && e.contains("truncated"),
                    "{cut}: {e}"
                );
                if cut > start && seed[cut - 1] == 0 {
                    let read = seed[start..cut].iter().filter(|&&b| b == 0).count();
                    assert!(
                        e.contains(&format!("ends after {read} of {words} words")),
                        "{e}"
                    );
                }
            }
            let e = open(&[seed, b"extra\0"].concat()).unwrap_err().to_string();
            assert!(
                e.contains(&format!("{} words in the word list", words + 1)),
                "{e}"
            );
        }
    }
}
