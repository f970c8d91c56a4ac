//! `_core.PunktModel` and the NLTK tokenization entry points (`corpus::nltk`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::corpus::PyCorpus;
use super::errors::{invalid_argument, to_pyerr};
use super::job;
use crate::corpus::documents::Tokenizer;
use crate::corpus::nltk::{self, Grouping, Punkt, PunktParams, WordRule};

/// Punkt's parameters for one language, loaded from a `punkt_tab/<language>/` folder.
#[pyclass(name = "PunktModel", module = "fastppl._core", frozen)]
pub struct PyPunktModel {
    inner: Punkt,
}

#[pymethods]
impl PyPunktModel {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let params = py.detach(|| PunktParams::load(&path)).map_err(to_pyerr)?;
        Ok(PyPunktModel {
            inner: Punkt::new(params),
        })
    }

    /// NLTK's `sent_tokenize(text)`: each sentence becomes a `str` straight from the text.
    fn sent_tokenize<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let sentences = py.detach(|| nltk::sent_tokenize(&self.inner, text));
        PyList::new(py, sentences)
    }
}

/// NLTK's `word_tokenize(text)` with `punkt`'s language, or `preserve_line=True` when `punkt`
/// is None, as a list; `words="whitespace"` splits each sentence by `str.split()` instead of
/// NLTK's word rules (the benchmark's measure of what a call costs besides those rules). Each
/// type of the text (distinct token) becomes one Python `str`, made on this thread while the
/// text is tokenized on the others, batch after batch; the list, which holds each type as often
/// as the token occurs, is made once at the end at its final size, from the tokens' type ids
/// (instead of growing by appends batch after batch).
#[pyfunction]
#[pyo3(signature = (text, punkt=None, progress=None, words="nltk"))]
pub fn nltk_word_tokenize<'py>(
    py: Python<'py>,
    text: &str,
    punkt: Option<&Bound<'_, PyPunktModel>>,
    progress: Option<Bound<'_, PyAny>>,
    words: &str,
) -> PyResult<Bound<'py, PyList>> {
    let rule = word_rule(words)?;
    let punkt = punkt.map(|p| &p.get().inner);
    let small = text.len() < job::SMALL_TEXT;
    let mut types: Vec<Bound<'py, PyString>> = Vec::new();
    // room made up front, so that the ids seldom move as batches come (growing by doubling
    // copied them about twice over)
    let mut tokens: Vec<u32> = Vec::with_capacity(nltk::token_room(text.len()));
    job::run_streaming_unless_small(
        py,
        small,
        progress.as_ref(),
        |job, emit| nltk::word_tokenize(punkt, text, rule, job, emit),
        |batch: nltk::TokenBatch| {
            types.extend(batch.new_types().map(|t| PyString::new(py, t)));
            tokens.extend(batch.tokens());
            Ok(())
        },
    )?;
    PyList::new(py, tokens.iter().map(|&t| &types[t as usize]))
}

/// The word rule named `words` (`"nltk"` or `"whitespace"`).
pub fn word_rule(words: &str) -> PyResult<WordRule> {
    match words {
        "nltk" => Ok(WordRule::Nltk),
        "whitespace" => Ok(WordRule::Whitespace),
        other => Err(invalid_argument(format!(
            "words={other:?} is not valid; expected 'nltk' or 'whitespace'"
        ))),
    }
}

/// Appends `text` to `corpus` tokenized as NLTK does (see `Corpus.add_nltk_text`).
/// NLTK's tokenizer as a batch reads it: `words` on each Punkt sentence of `punkt`, grouped by
/// `sentences` (see [`add_nltk_text`]).
pub fn nltk_tokenizer<'p>(
    punkt: Option<&'p Bound<'_, PyPunktModel>>,
    sentences: &str,
    words: &str,
) -> PyResult<Tokenizer<'p>> {
    Ok(Tokenizer::Nltk {
        punkt: punkt.map(|p| &p.get().inner),
        grouping: Grouping::parse(sentences).map_err(to_pyerr)?,
        rule: word_rule(words)?,
    })
}

pub fn add_nltk_text(
    py: Python<'_>,
    corpus: &PyCorpus,
    text: &str,
    punkt: Option<&Bound<'_, PyPunktModel>>,
    sentences: &str,
    words: &str,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<()> {
    let grouping = Grouping::parse(sentences).map_err(to_pyerr)?;
    let rule = word_rule(words)?;
    let punkt = punkt.map(|p| &p.get().inner);
    let small = text.len() < job::SMALL_TEXT;
    job::run_unless_small(py, small, progress.as_ref(), |job| {
        corpus.with_mut(|c| c.push_nltk_text(text, punkt, grouping, rule, job))
    })
}
