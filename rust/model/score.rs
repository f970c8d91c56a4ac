//! Scoring whole corpora with a model, sentences in parallel.

use rayon::prelude::*;

use crate::corpus::vocab::UNK;
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::model::by_order;
use crate::model::scorer::Scorer;
use crate::util::job::Job;
use crate::util::numpy_sum::numpy_sum;

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

impl CorpusScores {
    /// ln p of each sentence: its in-vocabulary tokens', and its OOVs' (as `<unk>`) unless
    /// `skip_oov`.
    pub fn sentence_log_probs(&self, skip_oov: bool) -> Vec<f64> {
        if skip_oov {
            return self.logprob.clone();
        }
        self.logprob
            .iter()
            .zip(&self.oov_logprob)
            .map(|(lp, olp)| lp + olp)
            .collect()
    }

    /// Counted tokens of each sentence: its predicted tokens, less its OOVs if `skip_oov`.
    pub fn sentence_num_tokens(&self, skip_oov: bool) -> Vec<i64> {
        self.tokens
            .iter()
            .zip(&self.oovs)
            .map(|(&t, &o)| i64::from(t) - if skip_oov { i64::from(o) } else { 0 })
            .collect()
    }
}

/// An evaluation's totals, added as `numpy.sum` adds (see [`numpy_sum`]): the figures are
/// those of NumPy over the per-sentence arrays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Totals {
    /// Sum of the sentences' ln p.
    pub log_prob: f64,
    /// Counted tokens.
    pub num_tokens: i64,
    /// OOV tokens met (counted or not).
    pub num_oov: i64,
    /// Sentences of probability 0 (ln p = -inf).
    pub num_zero_probability: usize,
}

impl Totals {
    /// The totals of `scores` by the OOV policy `skip_oov`.
    pub fn of(scores: &CorpusScores, skip_oov: bool) -> Totals {
        let log_probs = scores.sentence_log_probs(skip_oov);
        let num_oov: i64 = scores.oovs.iter().map(|&o| i64::from(o)).sum();
        let predicted: i64 = scores.tokens.iter().map(|&t| i64::from(t)).sum();
        Totals {
            log_prob: numpy_sum(&log_probs),
            num_tokens: predicted - if skip_oov { num_oov } else { 0 },
            num_oov,
            num_zero_probability: log_probs
                .iter()
                .filter(|&&lp| lp == f64::NEG_INFINITY)
                .count(),
        }
    }
}

/// The ln p and counted tokens of each document, from those of its sentences: document d holds
/// sentences `document_offsets[d]..document_offsets[d + 1]` (summed as [`numpy_sum`] sums).
pub fn document_sums(
    log_probs: &[f64],
    num_tokens: &[i64],
    document_offsets: &[usize],
) -> (Vec<f64>, Vec<i64>) {
    document_offsets
        .windows(2)
        .map(|d| {
            let sentences = d[0]..d[1];
            (
                numpy_sum(&log_probs[sentences.clone()]),
                num_tokens[sentences].iter().sum::<i64>(),
            )
        })
        .unzip()
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

/// Sentences handed to one task.
const CHUNK: usize = 2048;
/// Tokens a task scores at a time (a batch holds more only when one sentence does).
const BATCH_TOKENS: usize = by_order::MAX_TOKENS;

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

impl<M: Scorer> Tables<'_, M> {
    fn is_oov(&self, corpus_id: u32) -> bool {
        self.translate[corpus_id as usize] == UNK
    }

    /// Scores sentences `first..first + outs.len()`, in batches of about [`BATCH_TOKENS`]
    /// tokens ([`Scorer::score_batch`]); fewer rows when cancelled.
    fn score_chunk(&self, first: usize, outs: &mut [Option<&mut [f64]>]) -> Vec<Row> {
        let n = outs.len();
        let mut rows = Vec::with_capacity(n);
        let (mut ids, mut ends, mut scores) = (Vec::new(), Vec::new(), Vec::new());
        let mut k = 0;
        while k < n {
            let begin = k;
            ids.clear();
            ends.clear();
            scores.clear();
            while k < n
                && (k == begin || ids.len() + self.corpus.sentence(first + k).len() <= BATCH_TOKENS)
            {
                let sentence = self.corpus.sentence(first + k);
                ids.extend(sentence.iter().map(|&i| self.translate[i as usize]));
                ends.push(ids.len());
                k += 1;
            }
            self.model.score_batch(&ids, &ends, &mut scores, self.job);
            if self.job.is_cancelled() {
                break;
            }
            let mut at = 0;
            for (s, out) in outs[begin..k].iter_mut().enumerate() {
                let sentence = self.corpus.sentence(first + begin + s);
                let xs = &scores[at..at + sentence.len() + self.per_sentence];
                at += xs.len();
                let mut row = (0.0, 0.0, xs.len() as u32, 0);
                for (pos, &x) in xs.iter().enumerate() {
                    if pos < sentence.len() && self.is_oov(sentence[pos]) {
                        row.1 += x;
                        row.3 += 1;
                    } else {
                        row.0 += x;
                    }
                }
                if let Some(o) = out.take() {
                    o.copy_from_slice(xs);
                }
                rows.push(row);
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The totals and document sums by OOV policy: OOVs' ln p and tokens counted with "unk",
    /// left out with "skip"; a sentence of ln p -inf counted; a document of no sentence empty.
    #[test]
    fn totals_and_document_sums_follow_the_oov_policy() {
        let scores = CorpusScores {
            logprob: vec![-1.0, -2.0, f64::NEG_INFINITY],
            oov_logprob: vec![-0.5, 0.0, -0.25],
            tokens: vec![3, 2, 4],
            oovs: vec![1, 0, 2],
            token_logprobs: None,
        };
        let unk = Totals::of(&scores, false);
        assert_eq!(
            (unk.num_tokens, unk.num_oov, unk.num_zero_probability),
            (9, 3, 1)
        );
        assert_eq!(unk.log_prob, f64::NEG_INFINITY);
        let skip = Totals::of(&scores, true);
        assert_eq!((skip.num_tokens, skip.num_oov), (6, 3));
        assert_eq!(scores.sentence_log_probs(false)[..2], [-1.5, -2.0]);
        let (log_probs, num_tokens) = document_sums(
            &scores.sentence_log_probs(true)[..2],
            &scores.sentence_num_tokens(true)[..2],
            &[0, 0, 2],
        );
        assert_eq!((log_probs, num_tokens), (vec![0.0, -3.0], vec![0, 4]));
    }
    use crate::formats::arpa::read_arpa_from;

    /// A corpus of short sentences around one longer than a batch, with OOVs: the totals and
    /// the token scores are those of each sentence scored token by token, wherever the batches
    /// and chunks cut (the long sentence takes the interleaved path).
    #[test]
    fn corpus_scores_equal_sentence_scores_across_batches() {
        let arpa = "\\data\\\nngram 1=5\nngram 2=3\nngram 3=1\n\n\\1-grams:\n-1\t<unk>\t0\n\
            0\t<s>\t-0.5\n-0.7\t</s>\t0\n-0.6\ta\t-0.3\n-0.8\tb\t-0.2\n\n\\2-grams:\n\
            -0.2\t<s> a\t-0.05\n-0.3\ta b\t-0.1\n-0.5\tb </s>\t0\n\n\\3-grams:\n-0.1\t<s> a b\n\n\
            \\end\\\n";
        let model = read_arpa_from(arpa.as_bytes(), "t.arpa").unwrap();
        let mut corpus = Corpus::new();
        let words = ["a", "b", "zz", "a", "b", "b"];
        let long = BATCH_TOKENS * 2 + 3;
        let mut sentences: Vec<Vec<&str>> =
            (0..5000).map(|i| words[..=(i % 7 % 6)].to_vec()).collect();
        sentences.insert(3000, words.iter().copied().cycle().take(long).collect());
        for s in &sentences {
            corpus.push_sentence(s.iter().copied()).unwrap();
        }
        let scores = score_corpus(&model, &corpus, OovPolicy::Unk, true, &Job::default()).unwrap();
        let mut expected_tokens = Vec::new();
        for (i, s) in sentences.iter().enumerate() {
            let ids: Vec<u32> = s.iter().map(|w| model.id(w)).collect();
            let xs: Vec<f64> = model
                .score_sentence_full(&ids, true, true)
                .iter()
                .map(|x| x.0)
                .collect();
            let (mut lp, mut olp) = (0.0, 0.0);
            for (pos, &x) in xs.iter().enumerate() {
                if pos < s.len() && s[pos] == "zz" {
                    olp += x;
                } else {
                    lp += x;
                }
            }
            assert_eq!(scores.logprob[i].to_bits(), lp.to_bits(), "sentence {i}");
            assert_eq!(
                scores.oov_logprob[i].to_bits(),
                olp.to_bits(),
                "sentence {i}"
            );
            assert_eq!(scores.tokens[i] as usize, s.len() + 1);
            assert_eq!(
                scores.oovs[i] as usize,
                s.iter().filter(|&&w| w == "zz").count()
            );
            expected_tokens.extend(xs);
        }
        let tokens = scores.token_logprobs.unwrap();
        assert!(tokens
            .iter()
            .map(|x| x.to_bits())
            .eq(expected_tokens.iter().map(|x| x.to_bits())));
    }
}
