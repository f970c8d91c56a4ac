//! `_core.NGramModel`: a fitted model; the heavy calls release the GIL.

use std::f64::consts::LN_10;
use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::corpus::PyCorpus;
use super::errors::to_pyerr;
use super::job;
use super::nltk::{nltk_tokenizer, PyPunktModel};
use super::scores::PyScores;
use crate::corpus::documents::{Reading, Tokenizer};
use crate::corpus::padded_stream::PaddedStream;
use crate::corpus::vocab::UNK;
use crate::corpus::{kenlm_tokens, Corpus, SentenceMode};
use crate::error::Error;
use crate::estimate::{fit, DefaultValue, Parameters, Pruning, Smoothing, ESTIMATORS};
use crate::formats::kenlm::{
    open_kenlm_binary, read_kenlm_bytes, KenlmBinary, ProbingModel, TrieModel,
    PROBING_HAS_NO_NGRAMS,
};
use crate::model::score::{score_corpus, CorpusScores, OovPolicy};
use crate::model::scorer::Scorer;
use crate::model::Model;
use crate::util::job::Job;

/// The model behind an `NGramModel`: fastppl's own (fitted, read or loaded), or a KenLM binary
/// file scored in place.
pub enum Inner {
    Built(Arc<Model>),
    KenlmProbing(Arc<ProbingModel>),
    KenlmTrie(Arc<TrieModel>),
}

/// What errors call a fitted or loaded fastppl model, which keeps no path (see [`refuse_nan`]).
pub const BUILT_SOURCE: &str = "the model";

impl Inner {
    /// The file a model's scores come from, for errors: a KenLM file's path (fitted and loaded
    /// fastppl models keep none: [`BUILT_SOURCE`]).
    fn source(&self) -> &str {
        match self {
            Inner::Built(_) => BUILT_SOURCE,
            Inner::KenlmProbing(m) => m.path(),
            Inner::KenlmTrie(m) => m.path(),
        }
    }
}

/// Refuses scores of which one is NaN, as only a corrupt model file gives (a KenLM binary is
/// scored in place, its values read unchecked; a fastppl binary loaded with `verify=False`):
/// a `ModelFormatError` naming `source`, not a NaN that would pass into every sum.
pub fn refuse_nan(source: &str, mut scores: impl Iterator<Item = f64>) -> PyResult<()> {
    if scores.any(f64::is_nan) {
        return Err(to_pyerr(Error::BinaryFormat {
            path: source.to_string(),
            message: "a log probability is NaN: the model file holds a value that is not a \
                      number (is it corrupt?)"
                .to_string(),
        }));
    }
    Ok(())
}

/// Evaluates `$body` with `$m` bound to the model behind `$inner` as its own type (a
/// [`Scorer`]), so that generic scoring code is monomorphized for each.
macro_rules! with_scorer {
    ($inner:expr, $m:ident => $body:expr) => {
        match $inner {
            Inner::Built($m) => $body,
            Inner::KenlmProbing($m) => $body,
            Inner::KenlmTrie($m) => $body,
        }
    };
}

/// [`Smoothing::parse`] with the parameters as Python passes them.
fn parse_smoothing(
    name: &str,
    k: Option<f64>,
    discount: Option<f64>,
    alpha: Option<f64>,
    discount_fallback: bool,
) -> PyResult<Smoothing> {
    let params = Parameters {
        k,
        discount,
        alpha,
        discount_fallback,
    };
    Smoothing::parse(name, &params).map_err(to_pyerr)
}

/// Adds `SMOOTHINGS` (each estimator name, in [`ESTIMATORS`] order, to a dict of the parameters
/// it takes and their defaults) and `ARPA_SMOOTHINGS` (the names whose models have an ARPA form:
/// the interpolated ones) to the module.
pub fn register_smoothings(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let all = PyDict::new(py);
    let mut arpa = Vec::new();
    for (name, takes) in ESTIMATORS {
        let params = PyDict::new(py);
        for p in takes {
            match p.default() {
                DefaultValue::Number(x) => params.set_item(p.name(), x)?,
                DefaultValue::Flag(b) => params.set_item(p.name(), b)?,
            }
        }
        all.set_item(name, params)?;
        let smoothing = Smoothing::parse(name, &Parameters::default()).map_err(to_pyerr)?;
        if smoothing.is_interpolated() {
            arpa.push(name);
        }
    }
    m.add("SMOOTHINGS", all)?;
    m.add("ARPA_SMOOTHINGS", arpa)
}

/// Counts the n-grams of orders 1..=`order` of `corpus` and returns how many distinct ones each
/// order has (the counting step of `fit`, alone; used by the benchmarks).
#[pyfunction]
#[pyo3(signature = (corpus, order, bos_eos=true, progress=None))]
pub fn count_ngrams(
    py: Python<'_>,
    corpus: &PyCorpus,
    order: usize,
    bos_eos: bool,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    job::run(py, progress.as_ref(), |job| {
        corpus.with(|c| {
            let stream = PaddedStream::new(c, bos_eos, None);
            let counts = crate::ngram::counts::count_ngrams(&stream, order, c.vocab().len(), job)?;
            Ok(counts.distinct())
        })
    })
}

/// Gives the error that writing a model to `path` would give (see `Output::check`; with `arpa`
/// false, fastppl's binary format, which is not compressed: see `formats::binary::check`), and
/// writes nothing: for a caller to check its output before reading and counting a corpus.
#[pyfunction]
pub fn check_output(path: std::path::PathBuf, arpa: bool) -> PyResult<()> {
    let checked = if arpa {
        crate::util::compressed::Output::check(&path)
    } else {
        crate::formats::binary::check(&path)
    };
    checked.map_err(to_pyerr)
}

/// Estimates a model within a memory budget and writes it as ARPA (see `estimate::budgeted`); returns
/// (n-grams per order, sorted runs written, bytes spilled). Releases the GIL.
#[pyfunction]
#[pyo3(signature = (corpus, path, order, smoothing, memory, temp_dir, k=None, discount=None, alpha=None, discount_fallback=false, prune=Vec::new(), progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn train_arpa(
    py: Python<'_>,
    corpus: &PyCorpus,
    path: std::path::PathBuf,
    order: usize,
    smoothing: &str,
    memory: usize,
    temp_dir: std::path::PathBuf,
    k: Option<f64>,
    discount: Option<f64>,
    alpha: Option<f64>,
    discount_fallback: bool,
    prune: Vec<u64>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<(Vec<u64>, usize, u64)> {
    let smoothing = parse_smoothing(smoothing, k, discount, alpha, discount_fallback)?;
    let pruning = Pruning::new(&prune, order).map_err(to_pyerr)?;
    let budget = crate::estimate::budgeted::Budget { memory, temp_dir };
    let s = job::run(py, progress.as_ref(), |job| {
        corpus.with(|c| {
            crate::estimate::budgeted::train_arpa(
                c, order, smoothing, &pruning, &budget, &path, job,
            )
        })
    })?;
    Ok((s.ngram_counts, s.runs, s.bytes_spilled))
}

/// A fitted n-gram model (see `fastppl.NGramModel`).
#[pyclass(name = "NGramModel", module = "fastppl._core", frozen)]
pub struct PyModel {
    pub inner: Inner,
}

impl PyModel {
    /// `evaluate`'s result, once no sentence's score is NaN ([`refuse_nan`]; a NaN token makes
    /// its sentence's sum NaN).
    fn scores(&self, scores: CorpusScores, offsets: Vec<usize>) -> PyResult<PyScores> {
        let sums = scores.logprob.iter().chain(&scores.oov_logprob);
        refuse_nan(self.inner.source(), sums.copied())?;
        Ok(PyScores::new(scores, offsets))
    }

    fn built(model: Model) -> Self {
        PyModel {
            inner: Inner::Built(Arc::new(model)),
        }
    }

    /// The fastppl model, for operations that need the n-grams' words (`what` says which): a
    /// KenLM trie is converted (every n-gram read, reported to `job`), a probing file cannot be.
    /// Runs `check`, the output's check, first for a model read from a KenLM file (whose n-grams
    /// [`PyModel::ngrams`] makes, a conversion that may take long): its error then comes before
    /// that work, not after. A fitted model's writer gives the same error at once: no check (it
    /// would create and remove a temporary file for nothing).
    fn check_before_converting(
        &self,
        check: impl FnOnce() -> crate::error::Result<()>,
    ) -> crate::error::Result<()> {
        match self.inner {
            Inner::Built(_) => Ok(()),
            Inner::KenlmTrie(_) | Inner::KenlmProbing(_) => check(),
        }
    }

    /// The words of `text` split as KenLM splits a sentence, as ids, and the (ln p, n-gram
    /// length) of each, then of `</s>` when `eos` ([`Scorer::score_sentence_full`]), once none
    /// is NaN; None when a word is `<s>` or `</s>`.
    #[allow(clippy::type_complexity)]
    fn kenlm_sentence(
        &self,
        text: &str,
        bos: bool,
        eos: bool,
    ) -> PyResult<Option<(Vec<u32>, Vec<(f64, usize)>)>> {
        let words: Vec<&str> = kenlm_tokens(text).collect();
        if words.iter().any(|&w| w == "<s>" || w == "</s>") {
            return Ok(None);
        }
        let (ids, full) = with_scorer!(&self.inner, m => {
            let ids: Vec<u32> = words.iter().map(|w| Scorer::id(&**m, w)).collect();
            let full = m.score_sentence_full(&ids, bos, eos);
            (ids, full)
        });
        refuse_nan(self.inner.source(), full.iter().map(|&(x, _)| x))?;
        Ok(Some((ids, full)))
    }

    fn ngrams(&self, what: &str, job: &Job) -> crate::error::Result<Arc<Model>> {
        match &self.inner {
            Inner::Built(m) => Ok(Arc::clone(m)),
            Inner::KenlmTrie(m) => Ok(Arc::new(read_kenlm_bytes(m.bytes(), m.path(), job)?)),
            Inner::KenlmProbing(m) => Err(Error::BinaryFormat {
                path: m.path().to_string(),
                message: format!("cannot {what}: {PROBING_HAS_NO_NGRAMS}"),
            }),
        }
    }
}

#[pymethods]
impl PyModel {
    /// Counts `corpus` and estimates a model; releases the GIL while it works.
    #[staticmethod]
    #[pyo3(signature = (corpus, order, smoothing, bos_eos=true, k=None, discount=None, alpha=None, discount_fallback=false, prune=Vec::new(), progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        py: Python<'_>,
        corpus: &PyCorpus,
        order: usize,
        smoothing: &str,
        bos_eos: bool,
        k: Option<f64>,
        discount: Option<f64>,
        alpha: Option<f64>,
        discount_fallback: bool,
        prune: Vec<u64>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let smoothing = parse_smoothing(smoothing, k, discount, alpha, discount_fallback)?;
        let pruning = Pruning::new(&prune, order).map_err(to_pyerr)?;
        let model = job::run(py, progress.as_ref(), |job| {
            corpus.with(|c| fit(c, order, bos_eos, smoothing, &pruning, job))
        })?;
        Ok(PyModel::built(model))
    }

    /// Reads an ARPA file (plain, .gz, .xz, .bz2); releases the GIL.
    #[staticmethod]
    #[pyo3(signature = (path, progress=None))]
    fn from_arpa(
        py: Python<'_>,
        path: std::path::PathBuf,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let model = job::run(py, progress.as_ref(), |job| {
            crate::formats::arpa::read_arpa(&path, job)
        })?;
        Ok(PyModel::built(model))
    }

    /// Opens a KenLM binary file (probing or trie) for scoring in place, mapped (see
    /// `formats/kenlm`); releases the GIL.
    #[staticmethod]
    #[pyo3(signature = (path, progress=None))]
    fn from_kenlm_binary(
        py: Python<'_>,
        path: std::path::PathBuf,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let binary = job::run(py, progress.as_ref(), |job| open_kenlm_binary(&path, job))?;
        let inner = match binary {
            KenlmBinary::Probing(m) => Inner::KenlmProbing(Arc::new(m)),
            KenlmBinary::Trie(m) => Inner::KenlmTrie(Arc::new(m)),
        };
        Ok(PyModel { inner })
    }

    /// Writes the model as an ARPA file, compressed by extension; releases the GIL.
    #[pyo3(signature = (path, progress=None))]
    fn to_arpa(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        job::run(py, progress.as_ref(), |job| {
            self.check_before_converting(|| crate::util::compressed::Output::check(&path))?;
            let model = self.ngrams("write an ARPA file", job)?;
            crate::formats::arpa::write_arpa(&model, &path, job)
        })
    }

    /// Writes the model in fastppl's binary format (see `binary.rs`); releases the GIL.
    #[pyo3(signature = (path, progress=None))]
    fn save(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        job::run(py, progress.as_ref(), |job| {
            self.check_before_converting(|| crate::formats::binary::check(&path))?;
            let model = self.ngrams("save in fastppl's format", job)?;
            crate::formats::binary::save(&model, &path, job)
        })
    }

    /// Memory-maps a binary model file; `verify` checks its checksum and every slot. Releases
    /// the GIL.
    #[staticmethod]
    #[pyo3(signature = (path, verify=true, mmap=true, progress=None))]
    fn load(
        py: Python<'_>,
        path: std::path::PathBuf,
        verify: bool,
        mmap: bool,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let model = job::run(py, progress.as_ref(), |job| {
            crate::formats::binary::load(&path, verify, mmap, job)
        })?;
        Ok(PyModel::built(model))
    }

    #[getter]
    fn order(&self) -> usize {
        with_scorer!(&self.inner, m => m.order())
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        with_scorer!(&self.inner, m => Scorer::vocab_size(&**m))
    }

    #[getter]
    fn bos_eos(&self) -> bool {
        with_scorer!(&self.inner, m => m.bos_eos())
    }

    /// The estimator's name; "arpa" for a model read from a file of values.
    #[getter]
    fn smoothing(&self) -> &str {
        match &self.inner {
            Inner::Built(m) => &m.smoothing,
            Inner::KenlmProbing(_) | Inner::KenlmTrie(_) => "arpa",
        }
    }

    #[getter]
    fn normalized(&self) -> bool {
        match &self.inner {
            Inner::Built(m) => m.normalized,
            Inner::KenlmProbing(_) | Inner::KenlmTrie(_) => true,
        }
    }

    /// Discounts (D1, D2, D3+) per order, empty for estimators without discounts.
    #[getter]
    fn discounts(&self) -> Vec<(f64, f64, f64)> {
        match &self.inner {
            Inner::Built(m) => m.discounts.iter().map(|d| (d[0], d[1], d[2])).collect(),
            Inner::KenlmProbing(_) | Inner::KenlmTrie(_) => Vec::new(),
        }
    }

    /// Number of stored n-grams per order (order 1: the predictable vocabulary).
    #[getter]
    fn ngram_counts(&self) -> Vec<usize> {
        let kenlm = |counts: &[u64]| {
            std::iter::once(counts[0] as usize - 1)
                .chain(counts[1..].iter().map(|&c| c as usize))
                .collect()
        };
        match &self.inner {
            Inner::Built(m) => m.ngram_counts(),
            Inner::KenlmProbing(m) => kenlm(m.counts()),
            Inner::KenlmTrie(m) => kenlm(m.counts()),
        }
    }

    /// The vocabulary in id order (`<unk>`, `<s>`, `</s>` first for fastppl's models; KenLM's
    /// id order, `<unk>` first, for a KenLM file, whose words are read from its end).
    fn vocab<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        match &self.inner {
            Inner::Built(m) => PyList::new(py, m.vocab.words()),
            Inner::KenlmProbing(m) => PyList::new(py, m.words().map_err(to_pyerr)?),
            Inner::KenlmTrie(m) => PyList::new(py, m.words().map_err(to_pyerr)?),
        }
    }

    /// Whether `word` is in the vocabulary.
    fn contains(&self, word: &str) -> bool {
        with_scorer!(&self.inner, m => m.contains(word))
    }

    /// ln p(word | context): only the last order-1 context words are used; unknown words are
    /// `<unk>`.
    fn logprob(&self, word: &str, context: Vec<String>) -> PyResult<f64> {
        let logp = with_scorer!(&self.inner, m => {
            let ids: Vec<u32> = context.iter().map(|w| Scorer::id(&**m, w)).collect();
            let mut state = Scorer::state_after(&**m, &ids);
            Scorer::score(&**m, &mut state, Scorer::id(&**m, word))
        });
        refuse_nan(self.inner.source(), [logp].into_iter())?;
        Ok(logp)
    }

    /// ln p of each predicted token of one sentence (`</s>` included when bos_eos).
    fn logprobs<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<String>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out: Vec<f64> = with_scorer!(&self.inner, m => {
            let ids: Vec<u32> = tokens.iter().map(|w| Scorer::id(&**m, w)).collect();
            m.score_sentence_full(&ids, true, true).into_iter().map(|(x, _)| x).collect()
        });
        refuse_nan(self.inner.source(), out.iter().copied())?;
        Ok(out.into_pyarray(py))
    }

    /// Per predicted token of one sentence (`</s>` included when bos_eos): ln p, the length of
    /// the longest stored n-gram ending at it (KenLM's `ngram_length`), and whether it is out
    /// of the vocabulary. `bos`/`eos` as in KenLM: start from `<s>`, end with `</s>`.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (tokens, bos=true, eos=true))]
    fn full_scores<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<String>,
        bos: bool,
        eos: bool,
    ) -> PyResult<(
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<bool>>,
    )> {
        let (ids, full) = with_scorer!(&self.inner, m => {
            let ids: Vec<u32> = tokens.iter().map(|w| Scorer::id(&**m, w)).collect();
            let full = m.score_sentence_full(&ids, bos, eos);
            (ids, full)
        });
        refuse_nan(self.inner.source(), full.iter().map(|&(x, _)| x))?;
        let mut oov: Vec<bool> = ids.iter().map(|&i| i == UNK).collect();
        oov.resize(full.len(), false);
        let logp: Vec<f64> = full.iter().map(|&(x, _)| x).collect();
        let len: Vec<u32> = full.iter().map(|&(_, n)| n as u32).collect();
        Ok((
            logp.into_pyarray(py),
            len.into_pyarray(py),
            oov.into_pyarray(py),
        ))
    }

    /// The kenlm module's `Model.score(text, bos, eos)` in one call, with no arrays: log10 p of
    /// the sentence whose words are `text` split at KenLM's ASCII whitespace (`</s>` included
    /// when `eos`, summed in float64), and its number of words; None when a word is `<s>` or
    /// `</s>`, which `fastppl.kenlm` scores one word at a time, as KenLM does.
    #[pyo3(signature = (text, bos=true, eos=true))]
    fn kenlm_score(&self, text: &str, bos: bool, eos: bool) -> PyResult<Option<(f64, usize)>> {
        Ok(self.kenlm_sentence(text, bos, eos)?.map(|(ids, full)| {
            let log10 = full.iter().map(|&(x, _)| x / LN_10).sum();
            (log10, ids.len())
        }))
    }

    /// The kenlm module's `Model.full_scores(text, bos, eos)` in one call: (log10 p, n-gram
    /// length, out of the vocabulary) of each word of `text` (as [`PyModel::kenlm_score`] splits
    /// it), then of `</s>` when `eos`; None when a word is `<s>` or `</s>`.
    #[pyo3(signature = (text, bos=true, eos=true))]
    fn kenlm_full_scores(
        &self,
        text: &str,
        bos: bool,
        eos: bool,
    ) -> PyResult<Option<Vec<(f64, usize, bool)>>> {
        Ok(self.kenlm_sentence(text, bos, eos)?.map(|(ids, full)| {
            let oov = |i: usize| ids.get(i).is_some_and(|&id| id == UNK);
            full.iter()
                .enumerate()
                .map(|(i, &(x, n))| (x / LN_10, n, oov(i)))
                .collect()
        }))
    }

    /// Raw training count of an n-gram (0 if unseen, and for KenLM tries, which hold no
    /// counts); a probing file, whose n-grams cannot be listed, is refused.
    fn count(&self, ngram: Vec<String>) -> PyResult<u64> {
        match &self.inner {
            Inner::Built(model) => {
                let ids: Option<Vec<u32>> = ngram.iter().map(|w| model.vocab.get(w)).collect();
                Ok(ids.map_or(0, |ids| model.count(&ids)))
            }
            Inner::KenlmTrie(_) => Ok(0),
            Inner::KenlmProbing(_) => self
                .ngrams("count n-grams", &Job::none())
                .map(|_| 0)
                .map_err(to_pyerr),
        }
    }

    /// Scores a corpus: its sentences' scores (and every token's ln p when asked for), with its
    /// documents' sentence offsets. Releases the GIL.
    #[pyo3(signature = (corpus, oov="unk", token_logprobs=false, progress=None))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        corpus: &PyCorpus,
        oov: &str,
        token_logprobs: bool,
        progress: Option<Bound<'py, PyAny>>,
    ) -> PyResult<PyScores> {
        let policy = OovPolicy::parse(oov).map_err(to_pyerr)?;
        let (scores, offsets) = job::run(py, progress.as_ref(), |job| {
            corpus.with(|c| {
                let scores = with_scorer!(
                    &self.inner, m => score_corpus(&**m, c, policy, token_logprobs, job)
                )?;
                Ok((scores, c.document_offsets().to_vec()))
            })
        })?;
        self.scores(scores, offsets)
    }

    /// Scores `texts`, one document each, read as `Corpus.from_texts` reads them (`tokenizer`
    /// "kenlm", "whitespace" or "nltk", `sentences` resolved; `punkt` for NLTK's sentences;
    /// cleaned by `skip_line_prefixes` and `lowercase`), in one call that releases the GIL:
    /// `evaluate`'s scores.
    #[pyo3(signature = (texts, tokenizer, sentences, punkt=None, skip_line_prefixes=Vec::new(), lowercase=false, oov="unk"))]
    #[allow(clippy::too_many_arguments)]
    fn evaluate_texts(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        tokenizer: &str,
        sentences: &str,
        punkt: Option<&Bound<'_, PyPunktModel>>,
        skip_line_prefixes: Vec<String>,
        lowercase: bool,
        oov: &str,
    ) -> PyResult<PyScores> {
        let policy = OovPolicy::parse(oov).map_err(to_pyerr)?;
        let tokenizer = match (tokenizer, sentences) {
            ("kenlm", _) => Tokenizer::Kenlm,
            ("whitespace", mode) if mode != "punkt" => {
                Tokenizer::Whitespace(SentenceMode::parse(mode).map_err(to_pyerr)?)
            }
            (words, grouping) => nltk_tokenizer(punkt, grouping, words)?,
        };
        let reading = Reading {
            tokenizer,
            skip_line_prefixes,
            lowercase,
        };
        let (scores, offsets) = job::run(py, None, |job| {
            let corpus = Corpus::from_documents(&texts, &reading, job)?;
            let scores =
                with_scorer!(&self.inner, m => score_corpus(&**m, &corpus, policy, false, job))?;
            Ok((scores, corpus.document_offsets().to_vec()))
        })?;
        self.scores(scores, offsets)
    }
}
