//! The one error type of the core. The Python bindings map each variant to an exception of
//! `fastppl.errors` (see `py/errors.rs`); nothing in the core panics on user input.

use std::path::Path;

use thiserror::Error;

/// Everything that can go wrong in the core, with enough context to name the culprit.
#[derive(Debug, Error)]
pub enum Error {
    /// A parameter is out of range or inconsistent (order, discount, smoothing name...).
    #[error("{0}")]
    InvalidArgument(String),
    /// An argument is invalid at one of its items: the `index`-th (from 0) of those `item` names
    /// ("sentence", "logits row"), with `reason` saying what is wrong with it. The bindings raise
    /// it with `index` and `reason` as attributes, for the Python layer to name the item in the
    /// caller's terms without reading the message.
    #[error("{item} {index} {reason}")]
    InvalidItem {
        item: &'static str,
        index: usize,
        reason: String,
    },
    /// A corpus (or the part of it that is needed) holds no token.
    #[error("{0}")]
    EmptyCorpus(String),
    /// A token outside the model's vocabulary was met with `oov="error"`.
    #[error("out-of-vocabulary token {word:?} in sentence {sentence} at position {position}")]
    OutOfVocabulary {
        word: String,
        sentence: usize,
        position: usize,
    },
    /// A count overflowed its integer type.
    #[error("{0}")]
    Overflow(String),
    /// A model file is malformed; `line` is 1-based (0 when no line applies).
    #[error("{path}, line {line}: {message}")]
    ModelFormat {
        path: String,
        line: usize,
        message: String,
    },
    /// A file of Punkt parameters (`punkt_tab/<language>/`) is malformed; `line` is 1-based.
    #[error("{path}, line {line}: {message}")]
    PunktData {
        path: String,
        line: usize,
        message: String,
    },
    /// A binary model file (see `binary.rs`) is malformed, truncated or corrupt; or a model
    /// file is compressed in a format fastppl does not read (see `util/compressed.rs`).
    #[error("{path}: {message}")]
    BinaryFormat { path: String, message: String },
    /// The call was cancelled (Ctrl-C, SIGTERM) through its [`crate::util::job::Job`]; nothing was
    /// written.
    #[error("interrupted")]
    Cancelled,
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Result alias used throughout the core.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }

    /// Builds [`Error::Io`] for a failure on `path`, as `.map_err(Error::io(path))`; the path is
    /// formatted only when an error occurs.
    ///
    /// ```
    /// use fastppl::error::Error;
    /// let err = std::fs::File::open("/no/such/file").map_err(Error::io("/no/such/file"));
    /// assert!(err.unwrap_err().to_string().starts_with("/no/such/file: "));
    /// ```
    pub fn io<P: AsRef<Path> + ?Sized>(path: &P) -> impl Fn(std::io::Error) -> Error + Copy + '_ {
        move |source| Error::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }

    /// `path` is a directory where a file was to be read or written: the I/O error `EISDIR`
    /// (Python's `IsADirectoryError`, with `filename` set), as opening it would give.
    pub fn is_a_directory(path: &Path) -> Self {
        Error::io(path)(std::io::Error::from_raw_os_error(libc::EISDIR))
    }
}
