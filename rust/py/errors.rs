//! The one place where core errors become Python exceptions (classes of `fastppl.errors`).

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;

use crate::error::Error;

/// Builds an instance of `fastppl.errors.<class>` with `args`; falls back to `ValueError` if that
/// module cannot be imported (a broken install), so an error is never lost.
fn raise<'py, A>(py: Python<'py>, class: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("fastppl.errors")?.getattr(class)?;
        let exc = cls.call1(args)?;
        Ok(PyErr::from_value(exc))
    })();
    made.unwrap_or_else(|e| e)
}

/// Converts a core error into the matching `fastppl.errors` exception.
pub fn to_pyerr(err: Error) -> PyErr {
    Python::attach(|py| {
        let msg = err.to_string();
        match err {
            Error::InvalidArgument(_) => raise(py, "InvalidArgumentError", (msg,)),
            Error::EmptyCorpus(_) => raise(py, "EmptyCorpusError", (msg,)),
            Error::OutOfVocabulary {
                word,
                sentence,
                position,
            } => raise(py, "OutOfVocabularyError", (msg, word, sentence, position)),
            Error::Overflow(_) => PyOverflowError::new_err(msg),
        }
    })
}

/// `fastppl.errors.InvalidTypeError` (a `TypeError`) with `msg`.
pub fn type_error(msg: String) -> PyErr {
    Python::attach(|py| raise(py, "InvalidTypeError", (msg,)))
}
