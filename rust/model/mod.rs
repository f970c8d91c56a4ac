//! A scored n-gram model in backoff form, and the scoring of token sequences with it.
//!
//! Every estimator compiles to the same structure (KenLM's): for each stored n-gram `(h, w)` the
//! natural-log probability `ln p(w|h)`, and for each stored context `h` a natural-log weight.
//! Scoring a token finds the longest stored n-gram ending at it, one order at a time, carrying
//! along the n-grams that ended at the previous token (they are the contexts of this one).
//!
//! - [`Fallback::Chain`] (interpolated and backoff estimators, ARPA models):
//!   `ln p(w|h) = ln p(w|h') + ln weight(h)` when `(h, w)` is not stored, recursively; a context
//!   never seen has the model's `missing_weight` (0 for probability models: weight 1).
//! - [`Fallback::Flat`] (MLE, additive): `ln p(w|h) = ln weight(h)` when `(h, w)` is not stored,
//!   and `missing_weight` when `h` itself was never seen: these estimators never look at shorter
//!   histories.

mod build;
pub mod by_order;
pub mod context;
pub mod interleaved;
pub mod score;
pub mod scorer;

use crate::corpus::vocab::{Vocab, BOS};
use crate::ngram::keys::find_chain;
use crate::ngram::keys::{pack, NONE};
use crate::ngram::probing::ProbingTable;

/// What happens when the full n-gram is not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// Back off to the shorter history, adding the context's weight.
    Chain,
    /// The context's weight is the probability; shorter histories are not consulted.
    Flat,
}

/// The stored n-grams of one order >= 2.
#[derive(Debug, Clone)]
pub struct OrderTable {
    /// Key = (entry of the prefix at order m-1, last word) -> ln p and ln weight; an n-gram's
    /// entry number is its slot.
    pub table: ProbingTable,
    /// Raw training count of each n-gram, by slot (empty for models read from files).
    pub counts: Vec<u32>,
}

/// An n-gram language model in backoff form.
#[derive(Debug, Clone)]
pub struct Model {
    /// The order N.
    pub order: usize,
    /// Whether sentences are scored as `<s> .. </s>`.
    pub bos_eos: bool,
    /// Word ids; unigrams are indexed by id.
    pub vocab: Vocab,
    /// ln p(w) per word id (`-inf` for `<s>`).
    pub unigram_logp: Vec<f64>,
    /// ln weight of each word as a one-word context.
    pub unigram_weight: Vec<f64>,
    /// Raw unigram counts (empty for models read from files).
    pub unigram_counts: Vec<u32>,
    /// Orders 2..=N at index m-2.
    pub higher: Vec<OrderTable>,
    /// How unstored n-grams are scored.
    pub fallback: Fallback,
    /// ln weight of a context that is not stored.
    pub missing_weight: f64,
    /// Whether the scores are probabilities (false for stupid backoff).
    pub normalized: bool,
    /// Name of the estimator that made the model.
    pub smoothing: String,
    /// Discounts per order (D1, D2, D3+), for the estimators that have them.
    pub discounts: Vec<[f64; 3]>,
}

/// The n-grams that ended at the previous token, by length: the contexts of the next token.
#[derive(Debug, Clone)]
pub struct State {
    /// `ctx[j-1]` is the entry of the j-gram ending at the previous token, or [`NONE`].
    ctx: Vec<u32>,
    /// Scratch for the next `ctx`.
    next: Vec<u32>,
    /// Number of context tokens available (at most N-1).
    len: usize,
}

impl Model {
    /// Size of the predictable vocabulary |V|: every id but `<s>`, and but `</s>` without
    /// sentence markers.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len() - 1 - usize::from(!self.bos_eos)
    }

    /// The state at the start of a sentence.
    pub fn sentence_start(&self) -> State {
        let mut ctx = vec![NONE; self.order.saturating_sub(1)];
        let len = if self.bos_eos && self.order > 1 {
            ctx[0] = BOS;
            1
        } else {
            0
        };
        State {
            next: ctx.clone(),
            ctx,
            len,
        }
    }

    /// Puts `state` back at the start of a sentence (no allocation).
    pub fn restart(&self, state: &mut State) {
        state.len = 0;
        // (an order-1 model has no context to reset: not even an empty fill, a `memset` call
        // per sentence scored)
        if self.order > 1 {
            state.ctx.fill(NONE);
            if self.bos_eos {
                state.ctx[0] = BOS;
                state.len = 1;
            }
        }
    }

    /// The state after the context `ids` (oldest first); only the last N-1 tokens matter.
    pub fn state_after(&self, ids: &[u32]) -> State {
        let keep = ids.len().min(self.order - 1);
        let tail = &ids[ids.len() - keep..];
        let mut ctx = vec![NONE; self.order - 1];
        for j in 1..=keep {
            ctx[j - 1] = self.find(&tail[keep - j..]).unwrap_or(NONE);
        }
        State {
            next: ctx.clone(),
            ctx,
            len: keep,
        }
    }

    /// The entry number of the stored n-gram `ids` (its word id for one word).
    pub fn find(&self, ids: &[u32]) -> Option<u32> {
        if ids.len() > self.order {
            return None;
        }
        find_chain(ids, self.vocab.len(), |m, prefix, w| {
            self.higher[m - 2].table.find(pack(prefix, w))
        })
    }

    #[inline]
    fn weight(&self, len: usize, entry: u32) -> f64 {
        if entry == NONE {
            self.missing_weight
        } else if len == 1 {
            self.unigram_weight[entry as usize]
        } else {
            self.higher[len - 2].table.entry(entry).weight
        }
    }

    /// ln p(w | state) (a score for unnormalized models); advances the state past `w`.
    #[inline]
    pub fn score(&self, state: &mut State, w: u32) -> f64 {
        self.score_full(state, w).0
    }

    /// [`Model::score`] and the length of the longest stored n-gram ending at `w` in this
    /// context (KenLM's `ngram_length`: 1 when only the unigram matched); advances the state.
    #[inline]
    pub fn score_full(&self, state: &mut State, w: u32) -> (f64, usize) {
        let l = state.len;
        let keep = self.order - 1;
        // the longest stored n-gram ending at w, recording the ones on the way: they are the
        // contexts of the next token
        let mut found = 1;
        let mut entry = w;
        if keep > 0 {
            state.next[0] = w;
        }
        for j in 2..=l + 1 {
            let c = state.ctx[j - 2];
            if c == NONE {
                break;
            }
            match self.higher[j - 2].table.find(pack(c, w)) {
                Some(e) => {
                    found = j;
                    entry = e;
                    if j <= keep {
                        state.next[j - 1] = e;
                    }
                }
                None => break,
            }
        }
        let logp_found = if found == 1 {
            self.unigram_logp[w as usize]
        } else {
            self.higher[found - 2].table.entry(entry).logp
        };
        let logp = match self.fallback {
            Fallback::Chain => {
                let mut lp = logp_found;
                for c_len in found..=l {
                    lp += self.weight(c_len, state.ctx[c_len - 1]);
                }
                lp
            }
            Fallback::Flat if found == l + 1 => logp_found,
            Fallback::Flat => self.weight(l, state.ctx[l - 1]),
        };
        let new_len = (l + 1).min(keep);
        for j in found + 1..=new_len {
            state.next[j - 1] = NONE;
        }
        std::mem::swap(&mut state.ctx, &mut state.next);
        state.len = new_len;
        (logp, found)
    }

    /// Prefetches the slots that scoring `w` in `state` will probe first (one per order).
    #[inline]
    pub fn prefetch(&self, state: &State, w: u32) {
        for j in 2..=state.len + 1 {
            let c = state.ctx[j - 2];
            if c == NONE {
                break;
            }
            self.higher[j - 2].table.prefetch(pack(c, w));
        }
    }

    /// The id of `word` in the model, or `<unk>`'s.
    pub fn id(&self, word: &str) -> u32 {
        self.vocab.id_or_unk(word)
    }

    /// Raw training count of the n-gram `ids` (0 if unseen or unknown).
    pub fn count(&self, ids: &[u32]) -> u64 {
        match (ids.len(), self.find(ids)) {
            (1, Some(w)) => self
                .unigram_counts
                .get(w as usize)
                .map_or(0, |&c| u64::from(c)),
            (m, Some(e)) if m >= 2 => self.higher[m - 2]
                .counts
                .get(e as usize)
                .map_or(0, |&c| u64::from(c)),
            _ => 0,
        }
    }

    /// Number of stored n-grams of each order (unigrams: the predictable vocabulary).
    pub fn ngram_counts(&self) -> Vec<usize> {
        std::iter::once(self.vocab_size())
            .chain(self.higher.iter().map(|t| t.table.len()))
            .collect()
    }
}
