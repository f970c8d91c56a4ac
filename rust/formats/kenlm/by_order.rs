//! Scoring a batch of sentences with a KenLM file one order at a time: the same numbers as
//! [`KenlmModel`]'s `FullScore` token after token ([`Scorer::score_full`]), with the lookups of
//! each order made for a whole window of positions before those of the next.
//!
//! Token after token, the state a token leaves decides how far the next one walks back, so each
//! token waits for the misses of the one before ([`crate::model::interleaved`] overlaps those of
//! a few sentences). But the lookup of order m at position p depends only on the words and on
//! the lookup of order m-1 at p (a hash of the words in a probing file, the node found below in
//! a trie), and whether the walk gets that far is known, up to a rare exception, once order m-1
//! is done at p and p-1. So a window's lookups are made one order at a time, all those of an
//! order independent of one another and prefetched [`AHEAD`], and kept; then the window is
//! scored token after token by the same code as before, which reads the kept lookups instead
//! of the tables. A lookup the passes did not foresee (a model whose n-gram of order m-1 has no
//! extension while a longer one has) is made there and then, which only costs time: every score
//! is the token-by-token one, bit for bit.
//!
//! This pays where lookups miss the cache and can be fetched ahead: probing files
//! ([`Search::PREFETCHES`]; lmplz's Gutenberg 5-gram scores about 1.2x faster per core). A model
//! that fits in the cache scores about 10 % slower this way, and a trie, which has nothing to
//! fetch ahead, keeps scoring sentences side by side.

use super::mapped::{has_extension, KenlmModel, KenlmState, Lookups, Search};
use crate::formats::ln_from_log10;
use crate::model::scorer::Scorer;
use crate::util::job::Job;

/// Lookups prefetched ahead of the one being made.
const AHEAD: usize = 16;

/// Positions (tokens and `</s>`) whose lookups are made and kept at a time: the kept values of
/// all orders (about 20 bytes per order and position) then stay in the core's cache.
const WINDOW: usize = 1 << 13;

/// What a pass found for an n-gram.
#[derive(Clone, Copy, Default)]
enum Found {
    /// Not looked up (not foreseen).
    #[default]
    NotLooked,
    Missing,
    /// Stored; `independent`: no longer stored n-gram ends with it (KenLM's independent left).
    Stored {
        independent: bool,
    },
}

/// The lookups of the positions of one window: the unigram of position i at i, and those of
/// the orders above at `(m - 2) * len + i` for order m.
struct Kept<N> {
    len: usize,
    found: Vec<Found>,
    prob: Vec<f32>,
    backoff: Vec<f32>,
    node: Vec<N>,
    /// As [`Search::unigram`] gives them.
    unigrams: Vec<(f32, f32, bool, N)>,
}

impl<N: Copy + Default> Kept<N> {
    fn new() -> Self {
        Kept {
            len: 0,
            found: Vec::new(),
            prob: Vec::new(),
            backoff: Vec::new(),
            node: Vec::new(),
            unigrams: Vec::new(),
        }
    }

    /// Nothing looked up for `len` positions of a model of order `order` (memory reused).
    fn reset(&mut self, len: usize, order: usize) {
        let n = (order - 1) * len;
        self.len = len;
        for v in [&mut self.prob, &mut self.backoff] {
            v.clear();
            v.resize(n, 0.0);
        }
        self.found.clear();
        self.found.resize(n, Found::NotLooked);
        self.node.clear();
        self.node.resize(n, N::default());
        self.unigrams.clear();
    }

    /// Whether the walk at position `i` goes on past order m-1 (stored and not independent
    /// left).
    #[inline]
    fn goes_on(&self, m: usize, i: usize) -> bool {
        match m {
            2 => !self.unigrams[i].2,
            _ => matches!(
                self.found[(m - 3) * self.len + i],
                Found::Stored { independent: false }
            ),
        }
    }

    /// Whether the (m-1)-gram ending at position i-1 was found and extends, so that the state
    /// i-1 leaves keeps m-1 words (foreseen at the window's first position).
    #[inline]
    fn extends_before(&self, m: usize, i: usize) -> bool {
        match (i, m) {
            (0, _) => true,
            (_, 2) => has_extension(self.unigrams[i - 1].1),
            _ => {
                let at = (m - 3) * self.len + i - 1;
                matches!(self.found[at], Found::Stored { .. }) && has_extension(self.backoff[at])
            }
        }
    }

    /// The node of order m-1 at position `i`.
    #[inline]
    fn node_below(&self, m: usize, i: usize) -> N {
        match m {
            2 => self.unigrams[i].3,
            _ => self.node[(m - 3) * self.len + i],
        }
    }
}

/// A batch's positions: the word at each, and its offset in its sentence (`<s>` is at -1).
struct Positions {
    word: Vec<u32>,
    offset: Vec<u32>,
}

impl Positions {
    /// The positions of the sentences `ids[ends[i-1]..ends[i]]`, with `eos` after each.
    fn new(ids: &[u32], ends: &[usize], eos: u32) -> Self {
        let len = ids.len() + ends.len();
        let (mut word, mut offset) = (Vec::with_capacity(len), Vec::with_capacity(len));
        let mut start = 0;
        for &end in ends {
            word.extend(ids[start..end].iter().copied().chain([eos]));
            offset.extend(0..=(end - start) as u32);
            start = end;
        }
        Positions { word, offset }
    }

    /// The word m-1 places before position `p` (`bos` just before its sentence), if its
    /// sentence reaches that far.
    #[inline]
    fn context_word(&self, p: usize, m: usize, bos: u32) -> Option<u32> {
        let k = self.offset[p] as usize;
        match (k + 1).checked_sub(m - 1)? {
            0 => Some(bos),
            _ => Some(self.word[p - (m - 1)]),
        }
    }
}

/// A window's lookups, read by the token-by-token scoring of its position `i` (see [`Lookups`]).
struct KeptAt<'a, S: Search> {
    search: &'a S,
    kept: &'a Kept<S::Node>,
    i: usize,
}

impl<S: Search> Lookups<S::Node> for KeptAt<'_, S> {
    /// The position's unigram, kept (`w` is always the position's word).
    #[inline]
    fn unigram(&mut self, _w: u32) -> (f32, f32, bool, S::Node) {
        self.kept.unigrams[self.i]
    }

    #[inline]
    fn middle(&mut self, j: usize, w: u32, node: &mut S::Node) -> Option<(f32, f32, bool)> {
        let at = j * self.kept.len + self.i;
        match self.kept.found[at] {
            Found::NotLooked => self.search.middle(j, w, node),
            Found::Missing => None,
            Found::Stored { independent } => {
                *node = self.kept.node[at];
                Some((self.kept.prob[at], self.kept.backoff[at], independent))
            }
        }
    }

    #[inline]
    fn longest(&mut self, w: u32, node: S::Node) -> Option<f32> {
        // (the highest order's lookups are the last of the window's)
        let at = self.kept.found.len() - self.kept.len + self.i;
        match self.kept.found[at] {
            Found::NotLooked => self.search.longest(w, node),
            Found::Missing => None,
            Found::Stored { .. } => Some(self.kept.prob[at]),
        }
    }
}

/// The lookups of the positions `start..start + len` of `positions`, order after order;
/// `pending` is scratch.
fn look_up_window<S: Search>(
    model: &KenlmModel<S>,
    positions: &Positions,
    start: usize,
    len: usize,
    kept: &mut Kept<S::Node>,
    pending: &mut Vec<(u32, u32, S::Node)>,
) {
    let (search, order, bos) = (model.search(), Scorer::order(model), model.bos_id());
    kept.reset(len, order);
    kept.unigrams
        .extend((start..start + len).map(|p| search.unigram(positions.word[p])));
    for m in 2..=order {
        // the walk at p reaches order m where it goes on past m-1 and p's state keeps m-1
        // context words: at its sentence's start (only `<s>`, kept whatever its backoff), or
        // where the (m-1)-gram ending at p-1 extends
        pending.clear();
        pending.extend((0..len).filter_map(|i| {
            let p = start + i;
            let keeps = positions.offset[p] == 0 || kept.extends_before(m, i);
            if !kept.goes_on(m, i) || !keeps {
                return None;
            }
            let w = positions.context_word(p, m, bos)?;
            Some((i as u32, w, kept.node_below(m, i)))
        }));
        look_up(search, m, order, pending, kept);
    }
}

/// Makes the lookups of order `m` in `pending` (window position, word to the left, node of
/// order m-1), prefetching [`AHEAD`], and keeps what they find.
fn look_up<S: Search>(
    search: &S,
    m: usize,
    order: usize,
    pending: &[(u32, u32, S::Node)],
    kept: &mut Kept<S::Node>,
) {
    let j = m - 2;
    for (n, &(i, w, mut node)) in pending.iter().enumerate() {
        if let Some(&(_, ahead_w, ahead_node)) = pending.get(n + AHEAD) {
            search.prefetch(j, ahead_w, ahead_node);
        }
        let at = j * kept.len + i as usize;
        kept.found[at] = Found::Missing;
        if m == order {
            if let Some(prob) = search.longest(w, node) {
                // (no longer n-gram exists)
                (kept.found[at], kept.prob[at]) = (Found::Stored { independent: true }, prob);
            }
        } else if let Some((prob, backoff, independent)) = search.middle(j, w, &mut node) {
            kept.found[at] = Found::Stored { independent };
            (kept.prob[at], kept.backoff[at], kept.node[at]) = (prob, backoff, node);
        }
    }
}

/// Appends to `out` the ln p of every predicted token of the sentences `ids[ends[i-1]..ends[i]]`
/// (model ids), sentence after sentence, with `</s>` after each; stops early, leaving `out`
/// part-filled, when `job` is cancelled.
pub fn score_batch<S: Search>(
    model: &KenlmModel<S>,
    ids: &[u32],
    ends: &[usize],
    out: &mut Vec<f64>,
    job: &Job,
) {
    let positions = Positions::new(ids, ends, model.eos());
    let total = positions.word.len();
    let mut kept = Kept::new();
    let mut pending = Vec::new();
    let mut state: KenlmState = model.sentence_start();
    out.reserve(total);
    for start in (0..total).step_by(WINDOW) {
        if job.is_cancelled() {
            return;
        }
        let len = WINDOW.min(total - start);
        look_up_window(model, &positions, start, len, &mut kept, &mut pending);
        for i in 0..len {
            let p = start + i;
            if positions.offset[p] == 0 {
                model.restart(&mut state);
            }
            let mut lookups = KeptAt {
                search: model.search(),
                kept: &kept,
                i,
            };
            let (log10, _) = model.full_score_log10(&mut lookups, &mut state, positions.word[p]);
            out.push(ln_from_log10(log10));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::formats::kenlm::header::parse_header;
    use crate::formats::kenlm::{ProbingModel, TrieModel};
    use crate::util::mapped::FileBytes;

    /// The fuzz seeds: a probing file of a trigram model of three words, a trie of a trigram
    /// model of three English sentences.
    const TINY: &[u8] = include_bytes!("../../fuzz/seeds/kenlm_reader/tiny.probing.bin");
    const SMALL: &[u8] = include_bytes!("../../fuzz/seeds/kenlm_reader/small.trie.bin");

    fn open<S: Search>(file: &[u8]) -> KenlmModel<S> {
        let bytes = Arc::new(FileBytes::read(file, file.len()).unwrap());
        let header = parse_header(&bytes, "seed").unwrap();
        KenlmModel::open(bytes, header, "seed".to_string()).unwrap()
    }

    /// Pseudo-random sentences of 0 to 11 words of `model` (`<unk>` included, `<s>` not),
    /// `positions` tokens and `</s>` in all: (ids, ends).
    fn sentences<S: Search>(model: &KenlmModel<S>, positions: usize) -> (Vec<u32>, Vec<usize>) {
        let words = model.counts()[0] as u32;
        let (mut ids, mut ends, mut x) = (Vec::new(), Vec::new(), 7u64);
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) as u32
        };
        while ids.len() + ends.len() < positions {
            for _ in 0..next() % 12 {
                let w = next() % words;
                ids.push(if w == model.bos_id() { 0 } else { w });
            }
            ends.push(ids.len());
        }
        (ids, ends)
    }

    /// Every score of a batch over several windows equals, bit for bit, the token-by-token one,
    /// on a probing file and a trie; a cancelled job stops before the first window.
    fn scores_as_token_by_token<S: Search>(model: &KenlmModel<S>) {
        let (ids, ends) = sentences(model, 3 * WINDOW + 5);
        let mut out = Vec::new();
        score_batch(model, &ids, &ends, &mut out, &Job::none());
        let mut start = 0;
        let mut expected = Vec::new();
        for &end in &ends {
            let scores = model.score_sentence_full(&ids[start..end], true, true);
            expected.extend(scores.into_iter().map(|(lp, _)| lp));
            start = end;
        }
        assert_eq!(out.len(), expected.len());
        for (p, (got, want)) in out.iter().zip(&expected).enumerate() {
            assert_eq!(got.to_bits(), want.to_bits(), "position {p}: {got} {want}");
        }
        let job = Job::none();
        job.cancel();
        let mut out = Vec::new();
        score_batch(model, &ids, &ends, &mut out, &job);
        assert!(out.is_empty());
    }

    #[test]
    fn probing_scores_as_token_by_token() {
        let model: ProbingModel = open(TINY);
        scores_as_token_by_token(&model);
    }

    #[test]
    fn trie_scores_as_token_by_token() {
        let model: TrieModel = open(SMALL);
        scores_as_token_by_token(&model);
    }
}
