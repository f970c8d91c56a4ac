//! `_core.ContextScorer`: one word at a time after a context, for `fastppl.kenlm`'s `State` API.

use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::to_pyerr;
use super::model::{Inner, PyModel};
use crate::corpus::vocab::UNK;
use crate::error::Error;
use crate::formats::kenlm::ProbingModel;
use crate::model::context::Extensions;
use crate::model::scorer::Scorer;
use crate::model::Model;

/// What scores a word after a context: a fastppl model with the marks of which of its n-grams
/// extend, or a KenLM probing file, whose values carry those marks.
enum Contexts {
    Built(Arc<Model>, Extensions),
    KenlmProbing(Arc<ProbingModel>),
}

/// A model ready to score words after contexts (built once, GIL released).
#[pyclass(name = "ContextScorer", module = "fastppl._core", frozen)]
pub struct PyContextScorer {
    contexts: Contexts,
}

#[pymethods]
impl PyContextScorer {
    #[new]
    fn new(py: Python<'_>, model: &PyModel) -> Self {
        let contexts = match &model.inner {
            Inner::Built(m) => {
                let model = Arc::clone(m);
                let extensions = py.detach(|| Extensions::new(&model));
                Contexts::Built(model, extensions)
            }
            Inner::KenlmProbing(m) => Contexts::KenlmProbing(Arc::clone(m)),
        };
        Self { contexts }
    }

    /// The context of a sentence start: `<s>` (nothing for a unigram model).
    fn sentence_start(&self) -> Vec<u32> {
        match &self.contexts {
            Contexts::Built(m, _) if m.order > 1 => vec![crate::corpus::vocab::BOS],
            Contexts::Built(..) => Vec::new(),
            Contexts::KenlmProbing(m) => m.sentence_start().context(),
        }
    }

    /// (ln p(word | context), matched n-gram length, whether word is out of the vocabulary,
    /// the context after word). Contexts are model ids, oldest first.
    fn score_word(&self, context: Vec<u32>, word: &str) -> PyResult<(f64, usize, bool, Vec<u32>)> {
        match &self.contexts {
            Contexts::Built(model, extensions) => {
                let w = model.id(word);
                let s = extensions
                    .score_word(model, &context, w)
                    .map_err(to_pyerr)?;
                Ok((s.logp, s.ngram_length, w == UNK, s.context))
            }
            Contexts::KenlmProbing(model) => {
                let size = model.counts()[0];
                if let Some(&bad) = context.iter().find(|&&id| u64::from(id) >= size) {
                    return Err(to_pyerr(Error::invalid(format!(
                        "word id {bad} is not in this model's vocabulary of {size} words: the \
                         state was written by another model"
                    ))));
                }
                let w = model.id(word);
                let (logp, found, after) = model.score_word(&context, w);
                Ok((logp, found, w == UNK, after))
            }
        }
    }
}
