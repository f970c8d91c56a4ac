//! The one place where core errors become Python exceptions (classes of `fastppl.errors`).

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError};
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

/// An `OSError` for a file: `ModelFileNotFoundError` when it does not exist, else the `OSError`
/// subclass Python picks from the errno (`PermissionError`...), with `filename` set.
fn io_error(py: Python<'_>, path: &str, source: &std::io::Error) -> PyErr {
    if source.kind() == std::io::ErrorKind::NotFound {
        return raise(
            py,
            "ModelFileNotFoundError",
            (2, "No such file or directory", path.to_string()),
        );
    }
    match source.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, source.to_string(), path.to_string())),
        None => PyOSError::new_err(format!("{path}: {source}")),
    }
}

/// Converts a core error into the matching `fastppl.errors` exception.
pub fn to_pyerr(err: Error) -> PyErr {
    Python::attach(|py| {
        let msg = err.to_string();
        match err {
            Error::InvalidArgument(_) => raise(py, "InvalidArgumentError", (msg,)),
            Error::InvalidItem { index, reason, .. } => {
                raise(py, "InvalidArgumentError", (msg, index, reason))
            }
            Error::EmptyCorpus(_) => raise(py, "EmptyCorpusError", (msg,)),
            Error::OutOfVocabulary {
                word,
                sentence,
                position,
            } => raise(py, "OutOfVocabularyError", (msg, word, sentence, position)),
            Error::Overflow(_) => raise(py, "CountOverflowError", (msg,)),
            Error::ModelFormat { path, line, .. } => {
                raise(py, "ModelFormatError", (msg, path, line))
            }
            Error::PunktData { path, line, .. } => raise(py, "PunktDataError", (msg, path, line)),
            Error::BinaryFormat { path, .. } => {
                raise(py, "ModelFormatError", (msg, path, py.None()))
            }
            Error::Io { path, source } => io_error(py, &path, &source),
            Error::Cancelled => PyKeyboardInterrupt::new_err(msg),
        }
    })
}

/// `fastppl.errors.InvalidTypeError` (a `TypeError`) with `msg`.
pub fn type_error(msg: String) -> PyErr {
    Python::attach(|py| raise(py, "InvalidTypeError", (msg,)))
}

/// `fastppl.errors.InvalidArgumentError` (a `ValueError`) with `msg`.
pub fn invalid_argument(msg: String) -> PyErr {
    Python::attach(|py| raise(py, "InvalidArgumentError", (msg,)))
}
