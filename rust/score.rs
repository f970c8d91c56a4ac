//! Scoring whole corpora with a model, sentences in parallel.

use rayon::prelude::*;

use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::vocab::UNK;

/// What to do with tokens outside the model's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OovPolicy {
    /// Score them as `<unk>` and count them.
    Unk,
    /// Leave their scores and themselves out of the totals (`<unk>` stays in the history).
    Skip,
    /// Refuse the corpus.
    Error,
}

impl OovPolicy {
    /// Parses the names used by the Python API.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "unk" => Ok(Self::Unk),
            "skip" => Ok(Self::Skip),
            "error" => Ok(Self::Error),
            other => Err(Error::invalid(format!(
                "oov must be 'unk', 'skip' or 'error', got {other:?}"
            ))),
        }
    }
}

/// Per-sentence totals of a scored corpus (natural logs).
#[derive(Debug, Clone, Default)]
pub struct CorpusScores {
    /// Sum of ln p over the in-vocabulary predicted tokens of each sentence.
    pub logprob: Vec<f64>,
    /// Sum of ln p(<unk>) over the OOV tokens of each sentence.
    pub oov_logprob: Vec<f64>,
    /// Predicted tokens of each sentence (OOVs and `</s>` included).
    pub tokens: Vec<u32>,
    /// OOV tokens of each sentence.
    pub oovs: Vec<u32>,
    /// ln p of every predicted token, sentence after sentence, when asked for.
    pub token_logprobs: Option<Vec<f64>>,
}

/// Scores every sentence of `corpus`.
pub fn score_corpus(
    model: &Model,
    corpus: &Corpus,
    oov: OovPolicy,
    want_tokens: bool,
) -> Result<CorpusScores> {
    let translate = model.vocab.translation_from(corpus.vocab());
    let is_oov = |corpus_id: u32| translate[corpus_id as usize] == UNK;
    if oov == OovPolicy::Error {
        for s in 0..corpus.num_sentences() {
            if let Some(pos) = corpus.sentence(s).iter().position(|&i| is_oov(i)) {
                return Err(Error::OutOfVocabulary {
                    word: corpus.vocab().word(corpus.sentence(s)[pos]).to_string(),
                    sentence: s,
                    position: pos,
                });
            }
        }
    }
    let per_sentence = usize::from(model.bos_eos);
    let n = corpus.num_sentences();
    let mut token_out = want_tokens.then(|| vec![0.0f64; corpus.num_tokens() + per_sentence * n]);
    let mut slices: Vec<Option<&mut [f64]>> = Vec::with_capacity(n);
    match token_out.as_deref_mut() {
        Some(mut rest) => {
            for s in 0..n {
                let (head, tail) = rest.split_at_mut(corpus.sentence(s).len() + per_sentence);
                slices.push(Some(head));
                rest = tail;
            }
        }
        None => slices.resize_with(n, || None),
    }
    let rows: Vec<(f64, f64, u32, u32)> = slices
        .into_par_iter()
        .enumerate()
        .with_min_len(64)
        .map(|(s, mut out)| {
            let sentence = corpus.sentence(s);
            let ids: Vec<u32> = sentence.iter().map(|&i| translate[i as usize]).collect();
            let (mut lp, mut oov_lp, mut oovs) = (0.0, 0.0, 0u32);
            model.score_sentence(&ids, |i, x| {
                if let Some(o) = out.as_deref_mut() {
                    o[i] = x;
                }
                if i < sentence.len() && is_oov(sentence[i]) {
                    oov_lp += x;
                    oovs += 1;
                } else {
                    lp += x;
                }
            });
            (lp, oov_lp, (ids.len() + per_sentence) as u32, oovs)
        })
        .collect();
    let mut scores = CorpusScores {
        logprob: Vec::with_capacity(n),
        oov_logprob: Vec::with_capacity(n),
        tokens: Vec::with_capacity(n),
        oovs: Vec::with_capacity(n),
        token_logprobs: token_out,
    };
    for (lp, olp, t, o) in rows {
        scores.logprob.push(lp);
        scores.oov_logprob.push(olp);
        scores.tokens.push(t);
        scores.oovs.push(o);
    }
    Ok(scores)
}
