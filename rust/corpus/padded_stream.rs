//! Sentences laid out for counting and scoring: one flat id array with the sentence markers in it.

use crate::corpus::vocab::{BOS, EOS};
use crate::corpus::Corpus;

/// Sentences of ids, each padded as `<s> w1 .. wk </s>` when `bos_eos`, stored flat.
#[derive(Debug, Clone)]
pub struct PaddedStream {
    /// All ids, sentence after sentence, markers included.
    pub ids: Vec<u32>,
    /// Start of each sentence in `ids`, plus the end.
    pub offsets: Vec<usize>,
    /// Whether each sentence starts with `<s>` (context only) and ends with `</s>`.
    pub bos_eos: bool,
}

impl PaddedStream {
    /// Pads every sentence of `corpus`, translating its ids through `translate` (its vocabulary's
    /// ids to a model's).
    pub fn new(corpus: &Corpus, bos_eos: bool, translate: Option<&[u32]>) -> Self {
        let extra = if bos_eos { 2 } else { 0 };
        let mut ids = Vec::with_capacity(corpus.num_tokens() + extra * corpus.num_sentences());
        let mut offsets = Vec::with_capacity(corpus.num_sentences() + 1);
        offsets.push(0);
        for s in 0..corpus.num_sentences() {
            if bos_eos {
                ids.push(BOS);
            }
            match translate {
                Some(t) => ids.extend(corpus.sentence(s).iter().map(|&i| t[i as usize])),
                None => ids.extend_from_slice(corpus.sentence(s)),
            }
            if bos_eos {
                ids.push(EOS);
            }
            offsets.push(ids.len());
        }
        PaddedStream {
            ids,
            offsets,
            bos_eos,
        }
    }

    /// Number of sentences.
    pub fn num_sentences(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Offset, inside a sentence, of its first predicted token (1 after `<s>`, else 0).
    pub fn first_predicted(&self) -> usize {
        usize::from(self.bos_eos)
    }

    /// Number of predicted tokens (`<s>` excluded).
    pub fn num_predicted(&self) -> usize {
        self.ids.len() - self.first_predicted() * self.num_sentences()
    }
}
