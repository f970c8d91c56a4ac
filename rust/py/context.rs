//! `_core.ContextScorer`: one word at a time after a context, for `fastppl.kenlm`'s `State` API.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::errors::to_pyerr;
use super::model::{refuse_nan, Inner, PyModel, BUILT_SOURCE};
use crate::corpus::vocab::UNK;
use crate::formats::kenlm::{KenlmModel, ProbingModel, Search, TrieModel};
use crate::model::context::Extensions;
use crate::model::scorer::Scorer;
use crate::model::Model;

/// What scores a word after a context: a fastppl model with the marks of which of its n-grams
/// extend, or a KenLM file, whose values carry those marks.
enum Contexts {
    Built(Arc<Model>, Extensions),
    KenlmProbing(Arc<ProbingModel>),
    KenlmTrie(Arc<TrieModel>),
}

/// [`PyContextScorer::score_word`] on a KenLM file.
fn kenlm_score_word<S: Search>(
    model: &KenlmModel<S>,
    context: &[u32],
    word: &str,
) -> PyResult<(f64, usize, bool, Vec<u32>)> {
    let w = model.id(word);
    let (logp, found, after) = model.score_word(context, w).map_err(to_pyerr)?;
    refuse_nan(model.path(), [logp].into_iter())?;
    Ok((logp, found, w == UNK, after))
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
            Inner::KenlmTrie(m) => Contexts::KenlmTrie(Arc::clone(m)),
        };
        Self { contexts }
    }

    /// The context of a sentence start: `<s>` (nothing for a unigram model).
    fn sentence_start(&self) -> Vec<u32> {
        match &self.contexts {
            Contexts::Built(m, _) if m.order > 1 => vec![crate::corpus::vocab::BOS],
            Contexts::Built(..) => Vec::new(),
            Contexts::KenlmProbing(m) => m.sentence_start().context(),
            Contexts::KenlmTrie(m) => m.sentence_start().context(),
        }
    }

    /// (ln p(word | context), matched n-gram length, whether word is out of the vocabulary,
    /// the context after word, as the tuple a `State` holds). Contexts are model ids, oldest
    /// first.
    fn score_word<'py>(
        &self,
        py: Python<'py>,
        context: Vec<u32>,
        word: &str,
    ) -> PyResult<(f64, usize, bool, Bound<'py, PyTuple>)> {
        let (logp, length, oov, after) = match &self.contexts {
            Contexts::Built(model, extensions) => {
                let w = model.id(word);
                let s = extensions
                    .score_word(model, &context, w)
                    .map_err(to_pyerr)?;
                refuse_nan(BUILT_SOURCE, [s.logp].into_iter())?;
                (s.logp, s.ngram_length, w == UNK, s.context)
            }
            Contexts::KenlmProbing(model) => kenlm_score_word(model, &context, word)?,
            Contexts::KenlmTrie(model) => kenlm_score_word(model, &context, word)?,
        };
        Ok((logp, length, oov, PyTuple::new(py, after)?))
    }
}
