//! Scoring whole corpora with a model, sentences in parallel.

use rayon::prelude::*;

use crate::corpus::vocab::UNK;
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::model::scorer::Scorer;
use crate::util::job::Job;

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
    /// Sum of ln p(`<unk>`) over the OOV tokens of each sentence.
    pub oov_logprob: Vec<f64>,
    /// Predicted tokens of each sentence (OOVs and `</s>` included).
    pub tokens: Vec<u32>,
    /// OOV tokens of each sentence.
    pub oovs: Vec<u32>,
    /// ln p of every predicted token, sentence after sentence, when asked for.
    pub token_logprobs: Option<Vec<f64>>,
}

/// Scores every sentence of `corpus`, reporting sentences done to `job` (which can cancel it).
pub fn score_corpus<M: Scorer>(
    model: &M,
    corpus: &Corpus,
    oov: OovPolicy,
    want_tokens: bool,
    job: &Job,
) -> Result<CorpusScores> {
    job.stage("scoring", corpus.num_sentences() as u64)?;
    let translate = model.translation_from(corpus.vocab());
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
    let per_sentence = usize::from(model.bos_eos());
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
    let tables = Tables {
        model,
        corpus,
        translate: &translate,
        per_sentence,
        job,
    };
    let rows: Vec<Row> = slices
        .par_chunks_mut(CHUNK)
        .enumerate()
        .flat_map_iter(|(c, outs)| {
            if job.is_cancelled() {
                return Vec::new();
            }
            job.advance(outs.len() as u64);
            tables.score_chunk(c * CHUNK, outs)
        })
        .collect();
    job.check()?;
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

/// Sentences handed to one task; within it [`LANES`] sentences are scored side by side.
const CHUNK: usize = 2048;
/// Sentences scored side by side by one thread: while one waits for a table slot (prefetched
/// after its previous token), the others compute. Large models are bound by memory latency, not
/// arithmetic, so this overlaps several cache misses instead of paying for them one at a time.
const LANES: usize = 8;

/// (ln p of in-vocabulary tokens, ln p of OOVs, tokens, OOVs) of a sentence.
type Row = (f64, f64, u32, u32);

/// What every chunk reads.
struct Tables<'a, M: Scorer> {
    model: &'a M,
    corpus: &'a Corpus,
    translate: &'a [u32],
    per_sentence: usize,
    job: &'a Job,
}

/// A sentence being scored.
struct SentenceCursor<'a, M: Scorer> {
    /// index in the chunk
    k: usize,
    /// the corpus ids of the sentence
    sentence: &'a [u32],
    /// the model ids of the sentence
    ids: Vec<u32>,
    pos: usize,
    state: M::State,
    row: Row,
    out: Option<&'a mut [f64]>,
}

impl<'a, M: Scorer> Tables<'a, M> {
    fn is_oov(&self, corpus_id: u32) -> bool {
        self.translate[corpus_id as usize] == UNK
    }

    /// Scores sentences `first..first + outs.len()`.
    fn score_chunk(&self, first: usize, outs: &mut [Option<&'a mut [f64]>]) -> Vec<Row> {
        let n = outs.len();
        let mut rows = vec![(0.0, 0.0, 0, 0); n];
        let mut next = 0;
        let mut lanes: Vec<SentenceCursor<M>> = Vec::with_capacity(LANES);
        while next < n && lanes.len() < LANES {
            let mut lane = SentenceCursor {
                k: 0,
                sentence: &[],
                ids: Vec::new(),
                pos: 0,
                state: self.model.sentence_start(),
                row: (0.0, 0.0, 0, 0),
                out: None,
            };
            self.start(&mut lane, next, first, outs);
            next += 1;
            lanes.push(lane);
        }
        let mut rounds = 0u32;
        while !lanes.is_empty() {
            // (long sentences: a chunk can hold millions of tokens, so check within it too)
            rounds = rounds.wrapping_add(1);
            if rounds % 4096 == 0 && self.job.is_cancelled() {
                break;
            }
            let mut i = 0;
            while i < lanes.len() {
                let lane = &mut lanes[i];
                if self.step(lane) {
                    i += 1;
                    continue;
                }
                rows[lane.k] = lane.row;
                if next < n {
                    self.start(lane, next, first, outs);
                    next += 1;
                    i += 1;
                } else {
                    lanes.swap_remove(i);
                }
            }
        }
        rows
    }

    /// Loads sentence `k` of the chunk into `lane`.
    fn start(
        &self,
        lane: &mut SentenceCursor<'a, M>,
        k: usize,
        first: usize,
        outs: &mut [Option<&'a mut [f64]>],
    ) {
        lane.k = k;
        lane.sentence = self.corpus.sentence(first + k);
        lane.ids.clear();
        lane.ids
            .extend(lane.sentence.iter().map(|&i| self.translate[i as usize]));
        lane.pos = 0;
        self.model.restart(&mut lane.state);
        lane.row = (0.0, 0.0, (lane.ids.len() + self.per_sentence) as u32, 0);
        lane.out = outs[k].take();
        if let Some(&w) = lane.ids.first() {
            self.model.prefetch(&lane.state, w);
        }
    }

    /// Scores the next token of `lane`; false when the sentence is done.
    #[inline]
    fn step(&self, lane: &mut SentenceCursor<'a, M>) -> bool {
        let total = lane.ids.len() + self.per_sentence;
        if lane.pos == total {
            return false;
        }
        let eos = self.model.eos();
        let token = |pos: usize| lane.ids.get(pos).copied().unwrap_or(eos);
        let x = self.model.score(&mut lane.state, token(lane.pos));
        if let Some(o) = lane.out.as_deref_mut() {
            o[lane.pos] = x;
        }
        if lane.pos < lane.sentence.len() && self.is_oov(lane.sentence[lane.pos]) {
            lane.row.1 += x;
            lane.row.3 += 1;
        } else {
            lane.row.0 += x;
        }
        lane.pos += 1;
        if lane.pos < total {
            self.model.prefetch(&lane.state, token(lane.pos));
        }
        true
    }
}
