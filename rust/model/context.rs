//! KenLM's incremental scoring (`lm::ngram::State`, `Model::FullScore` in KenLM's
//! `lm/model.cc`): a context kept as the word ids that can still matter, scored one word at a
//! time.
//!
//! KenLM keeps in a state only the longest suffix of the history that some stored n-gram can
//! extend (its `HasExtension`: a backoff other than zero, or the prefix of a longer stored
//! n-gram), so that two histories that score every continuation alike give equal states.
//! [`Extensions`] records which stored n-grams extend, so that the contexts here are KenLM's.

use crate::corpus::vocab::BOS;
use crate::error::{Error, Result};
use crate::model::{Fallback, Model};
use crate::ngram::keys::{key_prefix, NONE};

/// Which stored n-grams of orders 1..N-1 a word can extend: `by_order[m-1][entry]`.
#[derive(Debug, Clone)]
pub struct Extensions {
    by_order: Vec<Vec<bool>>,
}

/// One word scored after a context, as KenLM's `FullScore` returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct WordScore {
    /// ln p(word | context).
    pub logp: f64,
    /// Length of the longest stored n-gram ending at the word (KenLM's `ngram_length`).
    pub ngram_length: usize,
    /// The context after the word, oldest first, cut to what KenLM's state keeps.
    pub context: Vec<u32>,
}

impl Extensions {
    /// Marks the n-grams of orders 1..N-1 with a non-zero weight or a longer n-gram on them.
    pub fn new(model: &Model) -> Self {
        let by_order = (1..model.order)
            .map(|m| {
                let mut extends: Vec<bool> = if m == 1 {
                    model.unigram_weight.iter().map(|&w| w != 0.0).collect()
                } else {
                    let table = &model.higher[m - 2].table;
                    let mut v = vec![false; table.capacity()];
                    for (slot, _, entry) in table.iter() {
                        v[slot as usize] = entry.weight != 0.0;
                    }
                    v
                };
                for (_, key, _) in model.higher[m - 1].table.iter() {
                    extends[key_prefix(key) as usize] = true;
                }
                extends
            })
            .collect();
        Self { by_order }
    }

    /// Scores word id `w` after `context` (model ids, oldest first; only the last N-1 count).
    /// `<s>` scores as KenLM's lmplz files have it, log p(`<s>`) = 0 plus the context's
    /// weights. Ids beyond the vocabulary (a context from another model) are refused.
    pub fn score_word(&self, model: &Model, context: &[u32], w: u32) -> Result<WordScore> {
        let size = model.vocab.len();
        if let Some(&bad) = context.iter().chain([&w]).find(|&&id| id as usize >= size) {
            return Err(Error::invalid(format!(
                "word id {bad} is not in this model's vocabulary of {size} words: the state \
                 was written by another model"
            )));
        }
        let mut state = model.state_after(context);
        let (logp, found) = if w == BOS {
            (Self::weights_after(model, &state.ctx[..state.len]), 1)
        } else {
            model.score_full(&mut state, w)
        };
        // after score_full, state.ctx[j-1] is the stored j-gram ending at w
        let kept = if w == BOS {
            usize::from(self.extends(1, BOS))
        } else {
            (1..=found.min(model.order - 1))
                .rev()
                .find(|&j| state.ctx[j - 1] != NONE && self.extends(j, state.ctx[j - 1]))
                .unwrap_or(0)
        };
        let history = context.iter().copied().chain([w]).collect::<Vec<u32>>();
        Ok(WordScore {
            logp,
            ngram_length: found,
            context: history[history.len() - kept..].to_vec(),
        })
    }

    /// Whether the stored `m`-gram `entry` is extended.
    fn extends(&self, m: usize, entry: u32) -> bool {
        self.by_order
            .get(m - 1)
            .is_some_and(|v| v.get(entry as usize).copied().unwrap_or(false))
    }

    /// The sum of the context weights a word backs off through from a unigram: what KenLM
    /// adds to p(`<s>`).
    fn weights_after(model: &Model, ctx: &[u32]) -> f64 {
        match model.fallback {
            Fallback::Chain => (1..=ctx.len()).map(|j| model.weight(j, ctx[j - 1])).sum(),
            Fallback::Flat => ctx.last().map_or(0.0, |&c| model.weight(ctx.len(), c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::arpa::read_arpa_from;

    fn read_arpa_str(text: &str) -> Result<Model> {
        read_arpa_from(text.as_bytes(), "test.arpa")
    }

    /// a and b are contexts of bigrams; "a b" is a trigram context (backoff -0.1); c is only
    /// predicted (backoff written as 0, no bigram after it).
    const ARPA: &str = "\\data\\\nngram 1=6\nngram 2=4\nngram 3=1\n\n\\1-grams:\n-1\t<unk>\t0\n\
        0\t<s>\t-0.5\n-0.7\t</s>\t0\n-0.6\ta\t-0.3\n-0.8\tb\t-0.2\n-0.9\tc\t0\n\n\\2-grams:\n\
        -0.2\t<s> a\t0\n-0.3\ta b\t-0.1\n-0.4\tb c\t0\n-0.5\tb </s>\t0\n\n\\3-grams:\n\
        -0.1\ta b c\n\n\\end\\\n";

    #[test]
    fn keeps_only_the_context_that_extends() {
        let model = read_arpa_str(ARPA).unwrap();
        let ext = Extensions::new(&model);
        let [a, b, c] = ["a", "b", "c"].map(|w| model.id(w));
        let after_a = ext.score_word(&model, &[BOS], a).unwrap();
        assert_eq!(after_a.ngram_length, 2);
        assert_eq!(after_a.context, vec![a]); // "<s> a" has backoff 0 and no trigram on it
        let after_b = ext.score_word(&model, &after_a.context, b).unwrap();
        assert_eq!(after_b.context, vec![a, b]);
        let after_c = ext.score_word(&model, &after_b.context, c).unwrap();
        assert_eq!(after_c.ngram_length, 3);
        assert!(after_c.context.is_empty()); // c extends nothing: every continuation backs off
        let ln10 = std::f64::consts::LN_10; // (the file holds float32 log10s)
        assert!((after_c.logp - -0.1 * ln10).abs() < 1e-6);
    }

    #[test]
    fn bos_scores_zero_plus_the_backoffs() {
        let model = read_arpa_str(ARPA).unwrap();
        let ext = Extensions::new(&model);
        let a = model.id("a");
        let s = ext.score_word(&model, &[a], BOS).unwrap();
        assert!((s.logp - -0.3 * std::f64::consts::LN_10).abs() < 1e-6);
        assert_eq!((s.ngram_length, s.context), (1, vec![BOS]));
    }

    #[test]
    fn ids_of_another_model_are_refused() {
        let model = read_arpa_str(ARPA).unwrap();
        let ext = Extensions::new(&model);
        let err = ext.score_word(&model, &[99], 3).unwrap_err();
        assert!(err.to_string().contains("another model"), "{err}");
    }
}
