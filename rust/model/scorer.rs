//! What scoring needs from a model ([`Scorer`]), so that one scoring code serves fastppl's own
//! [`Model`] and models used in place in other formats (KenLM's mapped binary files).
//!
//! Scoring code is generic over the trait (monomorphized: no dynamic call per token), so a
//! [`Model`] scores exactly as fast as when the code was written against it.

use crate::corpus::vocab::{Vocab, EOS};
use crate::model::{by_order, interleaved, Model, State};
use crate::util::job::Job;

/// A backoff model that scores one word at a time from a state. Ids are the model's own;
/// `<unk>` is id 0 in every implementation.
pub trait Scorer: Sync {
    /// The context carried from one word to the next.
    type State: Clone + Send;

    /// The order N.
    fn order(&self) -> usize;
    /// Whether sentences are scored as `<s> .. </s>`.
    fn bos_eos(&self) -> bool;
    /// Size of the predictable vocabulary |V| (every word but `<s>`).
    fn vocab_size(&self) -> usize;
    /// The id of `</s>`.
    fn eos(&self) -> u32;
    /// The id of `word`, or `<unk>`'s.
    fn id(&self, word: &str) -> u32;
    /// Whether `word` is in the vocabulary.
    fn contains(&self, word: &str) -> bool;
    /// The state at the start of a sentence (after `<s>` when the model has markers).
    fn sentence_start(&self) -> Self::State;
    /// The state with no context at all (KenLM's `NullContextWrite`).
    fn null_context(&self) -> Self::State;
    /// Puts `state` back at the start of a sentence (no allocation).
    fn restart(&self, state: &mut Self::State);
    /// The state after the context `ids` (oldest first; only the last N-1 matter).
    fn state_after(&self, ids: &[u32]) -> Self::State;
    /// ln p(w | state) and the length of the longest stored n-gram ending at `w` (KenLM's
    /// `ngram_length`); advances the state past `w`.
    fn score_full(&self, state: &mut Self::State, w: u32) -> (f64, usize);
    /// Prefetches what scoring `w` in `state` will read first (a hint; may do nothing).
    fn prefetch(&self, _state: &Self::State, _w: u32) {}

    /// ln p(w | state); advances the state.
    #[inline]
    fn score(&self, state: &mut Self::State, w: u32) -> f64 {
        self.score_full(state, w).0
    }

    /// Appends to `out` the ln p of every predicted token of the sentences
    /// `ids[ends[i-1]..ends[i]]` (model ids; `ends` are ends in `ids`), sentence after sentence,
    /// with `</s>` after each when the model has markers: what [`Scorer::score`] gives token
    /// after token from [`Scorer::sentence_start`]. Stops early, leaving `out` part-filled,
    /// when `job` is cancelled. By default sentences are scored side by side
    /// ([`interleaved`]).
    fn score_batch(&self, ids: &[u32], ends: &[usize], out: &mut Vec<f64>, job: &Job)
    where
        Self: Sized,
    {
        interleaved::score_batch(self, ids, ends, out, job);
    }

    /// For each id of `other`, the id of the same spelling here (or `<unk>`).
    fn translation_from(&self, other: &Vocab) -> Vec<u32> {
        other.words().map(|w| self.id(w)).collect()
    }

    /// (ln p, matched n-gram length) of each predicted token of one sentence of model ids;
    /// `bos = false` starts from an empty context and `eos = false` leaves `</s>` out (KenLM's
    /// `bos`/`eos` flags; both only apply to models with markers).
    fn score_sentence_full(&self, ids: &[u32], bos: bool, eos: bool) -> Vec<(f64, usize)> {
        let mut state = if bos {
            self.sentence_start()
        } else {
            self.null_context()
        };
        let mut out: Vec<(f64, usize)> = ids
            .iter()
            .map(|&w| self.score_full(&mut state, w))
            .collect();
        if self.bos_eos() && eos {
            out.push(self.score_full(&mut state, self.eos()));
        }
        out
    }
}

impl Scorer for Model {
    type State = State;

    fn order(&self) -> usize {
        self.order
    }
    fn bos_eos(&self) -> bool {
        self.bos_eos
    }
    fn vocab_size(&self) -> usize {
        Model::vocab_size(self)
    }
    fn eos(&self) -> u32 {
        EOS
    }
    fn id(&self, word: &str) -> u32 {
        Model::id(self, word)
    }
    fn contains(&self, word: &str) -> bool {
        self.vocab.get(word).is_some()
    }
    fn sentence_start(&self) -> State {
        Model::sentence_start(self)
    }
    fn null_context(&self) -> State {
        Model::state_after(self, &[])
    }
    fn restart(&self, state: &mut State) {
        Model::restart(self, state);
    }
    fn state_after(&self, ids: &[u32]) -> State {
        Model::state_after(self, ids)
    }
    #[inline]
    fn score_full(&self, state: &mut State, w: u32) -> (f64, usize) {
        Model::score_full(self, state, w)
    }
    #[inline]
    fn prefetch(&self, state: &State, w: u32) {
        Model::prefetch(self, state, w);
    }
    /// One order at a time ([`by_order`]), but for batches too large for its arrays (a
    /// sentence of more than [`by_order::MAX_TOKENS`] tokens).
    fn score_batch(&self, ids: &[u32], ends: &[usize], out: &mut Vec<f64>, job: &Job) {
        if ids.len() + ends.len() <= 2 * by_order::MAX_TOKENS {
            by_order::score_batch(self, ids, ends, out);
        } else {
            interleaved::score_batch(self, ids, ends, out, job);
        }
    }
    fn translation_from(&self, other: &Vocab) -> Vec<u32> {
        self.vocab.translation_from(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::vocab::{BOS, UNK};
    use crate::formats::arpa::read_arpa_from;

    #[test]
    fn bos_and_eos_flags_as_kenlm() {
        let arpa = "\\data\\\nngram 1=4\nngram 2=2\n\n\\1-grams:\n-1\t<unk>\t0\n0\t<s>\t-0.5\n\
            -0.7\t</s>\t0\n-0.6\ta\t-0.3\n\n\\2-grams:\n-0.2\t<s> a\n-0.1\ta </s>\n\n\\end\\\n";
        let model = read_arpa_from(arpa.as_bytes(), "t.arpa").unwrap();
        let a = Scorer::id(&model, "a");
        let both = model.score_sentence_full(&[a], true, true);
        assert_eq!(both.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2, 2]);
        let no_bos = model.score_sentence_full(&[a], false, false);
        assert_eq!(no_bos.len(), 1);
        assert!((no_bos[0].0 - -0.6 * std::f64::consts::LN_10).abs() < 1e-6);
        assert_eq!(Scorer::id(&model, "zzz"), UNK);
        assert!(!Scorer::contains(&model, "zzz") && Scorer::contains(&model, "a"));
        assert_ne!(Scorer::eos(&model), BOS);
    }
}
