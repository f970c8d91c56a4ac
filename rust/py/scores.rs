//! `_core.Scores`: an evaluation's per-sentence scores, kept in Rust. Its totals are numbers and
//! its arrays are made only when asked for, so that an evaluation whose caller wants a perplexity
//! never loads NumPy (whose import takes most of `import fastppl`'s time, and whose BLAS threads,
//! started then, spin on the cores for a while).

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::model::score::{document_sums, CorpusScores, Totals};

/// The scores of an evaluation's sentences and its documents' sentence offsets.
#[pyclass(name = "Scores", module = "fastppl._core", frozen)]
pub struct PyScores {
    scores: CorpusScores,
    document_offsets: Vec<usize>,
}

impl PyScores {
    pub fn new(scores: CorpusScores, document_offsets: Vec<usize>) -> Self {
        PyScores {
            scores,
            document_offsets,
        }
    }
}

#[pymethods]
impl PyScores {
    /// `(log_prob, num_tokens, num_oov, num_zero_probability)` by the OOV policy (`skip_oov`:
    /// OOVs neither scored nor counted), summed as `numpy.sum` sums the per-sentence arrays.
    fn totals(&self, skip_oov: bool) -> (f64, i64, i64, usize) {
        let t = Totals::of(&self.scores, skip_oov);
        (t.log_prob, t.num_tokens, t.num_oov, t.num_zero_probability)
    }

    /// The NumPy arrays `sentence_log_probs`, `sentence_num_tokens`, `document_log_probs`,
    /// `document_num_tokens` and, when the tokens were scored, `token_logprobs`.
    fn arrays<'py>(&self, py: Python<'py>, skip_oov: bool) -> PyResult<Bound<'py, PyDict>> {
        let log_probs = self.scores.sentence_log_probs(skip_oov);
        let num_tokens = self.scores.sentence_num_tokens(skip_oov);
        let (doc_log_probs, doc_num_tokens) =
            document_sums(&log_probs, &num_tokens, &self.document_offsets);
        let out = PyDict::new(py);
        out.set_item("sentence_log_probs", log_probs.into_pyarray(py))?;
        out.set_item("sentence_num_tokens", num_tokens.into_pyarray(py))?;
        out.set_item("document_log_probs", doc_log_probs.into_pyarray(py))?;
        out.set_item("document_num_tokens", doc_num_tokens.into_pyarray(py))?;
        if let Some(t) = &self.scores.token_logprobs {
            out.set_item("token_logprobs", t.clone().into_pyarray(py))?;
        }
        Ok(out)
    }
}
