//! `_core.ContextScorer`: one word at a time after a context, for `fastppl.kenlm`'s `State` API.

use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::to_pyerr;
use super::model::PyModel;
use crate::corpus::vocab::{BOS, UNK};
use crate::model::context::Extensions;
use crate::model::Model;

/// A model with the marks of which of its n-grams extend (built once, GIL released).
#[pyclass(name = "ContextScorer", module = "fastppl._core", frozen)]
pub struct PyContextScorer {
    model: Arc<Model>,
    extensions: Extensions,
}

#[pymethods]
impl PyContextScorer {
    #[new]
    fn new(py: Python<'_>, model: &PyModel) -> Self {
        let model = Arc::clone(&model.model);
        let extensions = py.detach(|| Extensions::new(&model));
        Self { model, extensions }
    }

    /// The context of a sentence start: `<s>` (nothing for a unigram model).
    fn sentence_start(&self) -> Vec<u32> {
        if self.model.order > 1 {
            vec![BOS]
        } else {
            Vec::new()
        }
    }

    /// (ln p(word | context), matched n-gram length, whether word is out of the vocabulary,
    /// the context after word). Contexts are model ids, oldest first.
    fn score_word(&self, context: Vec<u32>, word: &str) -> PyResult<(f64, usize, bool, Vec<u32>)> {
        let w = self.model.id(word);
        let s = self
            .extensions
            .score_word(&self.model, &context, w)
            .map_err(to_pyerr)?;
        Ok((s.logp, s.ngram_length, w == UNK, s.context))
    }
}
