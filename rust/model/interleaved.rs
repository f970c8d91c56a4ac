//! Scoring a batch of sentences with any [`Scorer`], several sentences side by side.
//!
//! A scorer reads one token at a time from a state, and each token's lookups depend on the
//! previous token's: one sentence alone waits for every cache miss in turn. `LANES` sentences
//! scored in turn overlap them instead: while one waits for a table slot (prefetched after its
//! previous token), the others compute.

use crate::model::scorer::Scorer;
use crate::util::job::Job;

/// Sentences scored side by side.
const LANES: usize = 8;

/// A sentence being scored.
struct Lane<'a, S> {
    /// Its model ids.
    words: &'a [u32],
    /// Where its scores start in the output.
    at: usize,
    /// Next position to score (`words.len()` is `</s>`).
    pos: usize,
    state: S,
}

/// Appends to `out` the ln p of every predicted token of the sentences `ids[ends[i-1]..ends[i]]`
/// (model ids), sentence after sentence, with `</s>` after each when the model has markers.
/// Stops early, leaving `out` part-filled, when `job` is cancelled.
pub fn score_batch<'a, M: Scorer>(
    model: &M,
    ids: &'a [u32],
    ends: &[usize],
    out: &mut Vec<f64>,
    job: &Job,
) {
    let per_sentence = usize::from(model.bos_eos());
    let base = out.len();
    out.resize(base + ids.len() + per_sentence * ends.len(), 0.0);
    let out = &mut out[base..];
    let eos = model.eos();
    let mut sentences = ends.iter().enumerate().map(|(i, &end)| {
        let start = if i == 0 { 0 } else { ends[i - 1] };
        (&ids[start..end], start + per_sentence * i)
    });
    let start = |lane: &mut Lane<'a, M::State>, (words, at): (&'a [u32], usize)| {
        (lane.words, lane.at, lane.pos) = (words, at, 0);
        model.restart(&mut lane.state);
        model.prefetch(&lane.state, words.first().copied().unwrap_or(eos));
    };
    let mut lanes: Vec<Lane<'a, M::State>> = Vec::with_capacity(LANES);
    for sentence in sentences.by_ref().take(LANES) {
        let mut lane = Lane {
            words: &[],
            at: 0,
            pos: 0,
            state: model.sentence_start(),
        };
        start(&mut lane, sentence);
        lanes.push(lane);
    }
    let mut rounds = 0u32;
    while !lanes.is_empty() {
        // (a batch can be one sentence of millions of tokens: check within it too)
        rounds = rounds.wrapping_add(1);
        if rounds % 4096 == 0 && job.is_cancelled() {
            return;
        }
        let mut i = 0;
        while i < lanes.len() {
            let lane = &mut lanes[i];
            let total = lane.words.len() + per_sentence;
            if lane.pos < total {
                let token = |pos: usize| lane.words.get(pos).copied().unwrap_or(eos);
                out[lane.at + lane.pos] = model.score(&mut lane.state, token(lane.pos));
                lane.pos += 1;
                if lane.pos < total {
                    model.prefetch(&lane.state, token(lane.pos));
                }
                i += 1;
            } else if let Some(sentence) = sentences.next() {
                start(lane, sentence);
                i += 1;
            } else {
                lanes.swap_remove(i);
            }
        }
    }
}
