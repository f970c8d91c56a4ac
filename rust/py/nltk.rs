//! `_core.PunktModel` and the NLTK tokenization entry points (`corpus::nltk`).

use std::path::PathBuf;

use pyo3::ffi;
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

    /// NLTK's `sent_tokenize(text)`.
    fn sent_tokenize(&self, py: Python<'_>, text: &str) -> Vec<String> {
        py.detach(|| {
            nltk::sent_tokenize(&self.inner, text)
                .into_iter()
                .map(str::to_string)
                .collect()
        })
    }
}

/// NLTK's `word_tokenize(text)` with `punkt`'s language, or `preserve_line=True` when `punkt`
/// is None, as a list (see [`token_list`]).
#[pyfunction]
#[pyo3(signature = (text, punkt=None, progress=None))]
pub fn nltk_word_tokenize<'py>(
    py: Python<'py>,
    text: &str,
    punkt: Option<&Bound<'_, PyPunktModel>>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let punkt = punkt.map(|p| &p.get().inner);
    let small = text.len() < job::SMALL_TEXT;
    let tokens = job::run_unless_small(py, small, progress.as_ref(), |job| {
        nltk::word_tokenize(punkt, text, job)
    })?;
    token_list(py, &tokens)
}

/// The list of `tokens`: each type of the text (distinct token) becomes one Python `str`, which
/// the list holds as often as the token occurs; the list is filled in place, with no list of
/// references in between.
fn token_list<'py>(py: Python<'py>, tokens: &nltk::Tokens) -> PyResult<Bound<'py, PyList>> {
    let len = ffi::Py_ssize_t::try_from(tokens.len()).expect("fewer tokens than isize::MAX");
    // SAFETY: `PyList_New` gives a new reference to a list of `len` empty slots, or NULL with an
    // exception set, which `from_owned_ptr_or_err` raises.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len))? };
    let strings: Vec<Bound<'py, PyString>> = tokens.types().map(|t| PyString::new(py, t)).collect();
    let mut slot: ffi::Py_ssize_t = 0;
    for (text_types, batch) in tokens.batches() {
        for &t in batch {
            let string = strings[text_types[t as usize] as usize].clone();
            // SAFETY: `list` is a list of `len` slots, the number of tokens of all batches, so
            // `slot < len`; each slot is set once, while empty, and takes over the reference
            // `into_ptr` gives (a valid `str`).
            unsafe { ffi::PyList_SetItem(list.as_ptr(), slot, string.into_ptr()) };
            slot += 1;
        }
    }
    assert_eq!(slot, len, "every slot of the list set");
    // SAFETY: `PyList_New` made a list.
    Ok(unsafe { list.cast_into_unchecked() })
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
