"""Exceptions and warnings raised by fastppl.

Every exception derives from :class:`FastpplError`, and also from the builtin exception whose
meaning fits (``ValueError``, ``KeyError``, ``FileNotFoundError``), so that ``except ValueError``
code written for other libraries keeps working. The Rust core raises these classes by name: keep
the names and the positional signatures stable.

Every constructor takes the message first; it may be ``None`` for the classes that carry
attributes, and a message is then built from them. For example:

>>> err = OutOfVocabularyError(None, word="mulher", sentence_index=3, position=7)
>>> str(err)
"word 'mulher' (sentence 3, position 7) is not in the model's vocabulary"
>>> isinstance(err, KeyError) and isinstance(err, FastpplError)
True
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from os import PathLike

__all__ = [
    "CorpusDecodeError",
    "CorpusFileNotFoundError",
    "CountOverflowError",
    "DistributedTaskError",
    "EmptyCorpusError",
    "FastpplError",
    "FastpplWarning",
    "InvalidArgumentError",
    "InvalidTypeError",
    "ModelFileNotFoundError",
    "ModelFormatError",
    "NotNormalizedError",
    "OutOfVocabularyError",
    "PunktDataError",
    "PunktDataNotFoundError",
    "ZeroProbabilityWarning",
]

StrPath = str | PathLike[str]


def _path_str(path: StrPath | None) -> str | None:
    return None if path is None else str(path)


class FastpplError(Exception):
    """Base class of every exception raised by fastppl.

    Catch this to handle any fastppl failure; each subclass also derives from the builtin exception
    that matches its meaning.
    """


class InvalidArgumentError(FastpplError, ValueError):
    """An argument has an invalid value.

    Raised for an unknown option (estimator, tokenizer, sentence mode, ``errors=`` ...), an order
    below 1, a discount outside its range, a negative smoothing constant, and the like. The message
    names the argument, the value received and the accepted values.

    Attributes:
        index: Where the core located the fault, when it did: the index (0-based) of the invalid
            item among those the call read (a sentence of a corpus, a row of logits); for
            :func:`fastppl.documents.perplexity`, the document; else ``None``.
        reason: What is wrong with that item: the message without the item's name
            (``holds the reserved token "<s>": ...``); for
            :func:`fastppl.documents.perplexity`, the message after ``documents[3]``, as it
            reads there (``, line 2, holds ...``, `` holds a lone surrogate ...``), for a
            caller to name the document its own way; ``None`` when ``index`` is.
    """

    def __init__(self, message: str, index: int | None = None, reason: str | None = None) -> None:
        self.index = index
        self.reason = reason
        self.message = message
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.message, self.index, self.reason))


class InvalidTypeError(FastpplError, TypeError):
    """An argument has the wrong type (a str where a list of tokens is expected, a float order,
    a non-bool flag...)."""


class EmptyCorpusError(FastpplError, ValueError):
    """A corpus holds no token at all.

    Raised when a model is fitted on, or evaluated on, a corpus in which every sentence is empty
    (for instance an empty file, or a file whose lines are all skipped).
    """


class CorpusDecodeError(FastpplError, ValueError):
    """A corpus file is not valid text in the requested encoding.

    Raised when reading with ``errors="strict"`` (the default) meets bytes that do not decode.
    Pass ``errors="replace"`` or ``errors="ignore"`` to read such a file anyway. Also raised,
    whatever ``errors``, for a file that cannot be decompressed: a corrupt gzip, xz or bzip2
    file (or an empty one named ``.gz``, ``.xz`` or ``.bz2``), or one compressed in a format
    fastppl does not read (zstd, lz4, zip, 7-Zip, lzip, compress), told by its first bytes; then
    ``byte_offset`` and ``line`` are None.

    Attributes:
        path: The file, as a string (``None`` if unknown).
        byte_offset: Offset (0-based) of the first undecodable byte, counted in the *decompressed*
            bytes for compressed files.
        line: Line number (1-based) of that byte.
    """

    def __init__(
        self,
        message: str | None = None,
        path: StrPath | None = None,
        byte_offset: int | None = None,
        line: int | None = None,
    ) -> None:
        self.path = _path_str(path)
        self.byte_offset = byte_offset
        self.line = line
        if message is None:
            message = (
                f"{self.path!r} is not valid text: undecodable byte at byte offset "
                f"{byte_offset} (line {line})"
            )
        self.message = message
        super().__init__(message)

    def __reduce__(self):  # keeps pickling exact (Rust may construct it positionally)
        return (type(self), (self.message, self.path, self.byte_offset, self.line))


class CorpusFileNotFoundError(FastpplError, FileNotFoundError):
    """A corpus file, or another text file read as input (a vocabulary file), does not exist.

    ``errno`` is ``ENOENT`` and ``filename`` the path, as for a builtin ``FileNotFoundError``.

    Attributes:
        path: The missing file, as a string.
    """

    def __init__(self, message: str | None = None, path: StrPath | None = None) -> None:
        self.path = _path_str(path)
        if message is None:
            message = f"corpus file not found: {self.path!r}"
        self.message = message
        super().__init__(message)
        self.errno = errno.ENOENT
        self.strerror = message
        self.filename = self.path

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.path))


class OutOfVocabularyError(FastpplError, KeyError):
    """A token is not in the model's vocabulary and ``oov="error"`` was asked for.

    ``str()`` gives the plain message (a bare ``KeyError`` would quote it).

    Attributes:
        word: The out-of-vocabulary token.
        sentence_index: Index (0-based) of its sentence in the evaluated corpus, if known.
        position: Index (0-based) of the token in its sentence (``<s>`` not counted), if known.
    """

    def __init__(
        self,
        message: str | None = None,
        word: str | None = None,
        sentence_index: int | None = None,
        position: int | None = None,
    ) -> None:
        self.word = word
        self.sentence_index = sentence_index
        self.position = position
        if message is None:
            where = []
            if sentence_index is not None:
                where.append(f"sentence {sentence_index}")
            if position is not None:
                where.append(f"position {position}")
            loc = f" ({', '.join(where)})" if where else ""
            message = f"word {word!r}{loc} is not in the model's vocabulary"
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.word, self.sentence_index, self.position))


class ModelFormatError(FastpplError, ValueError):
    """A model file (ARPA or fastppl's own format) is malformed.

    Raised when loading a model whose header, section or n-gram line cannot be parsed.

    Attributes:
        path: The file, as a string (``None`` if unknown).
        line: Line number (1-based) of the offending line (``None`` if unknown).
    """

    def __init__(
        self,
        message: str | None = None,
        path: StrPath | None = None,
        line: int | None = None,
    ) -> None:
        self.path = _path_str(path)
        self.line = line
        if message is None:
            message = f"malformed model file {self.path!r} at line {line}"
        self.message = message
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.message, self.path, self.line))


class PunktDataError(FastpplError, ValueError):
    """A file of Punkt parameters (``punkt_tab/<language>/``) is malformed or unreadable.

    Attributes:
        path: The file, as a string.
        line: Line number (1-based) of the offending line.
    """

    def __init__(self, message: str, path: StrPath | None = None, line: int | None = None) -> None:
        self.path = _path_str(path)
        self.line = line
        self.message = message
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.message, self.path, self.line))


class PunktDataNotFoundError(FastpplError, LookupError):
    """No Punkt parameters (``punkt_tab/<language>/``) for a language: not bundled with fastppl
    (English and Portuguese are) and not on NLTK's data path.

    Attributes:
        language: The language asked for.
        searched: The NLTK data folders looked in.
        available: The languages that have parameters (bundled or on NLTK's data path).
    """

    def __init__(
        self,
        message: str | None = None,
        language: str | None = None,
        searched: Sequence[str] = (),
        available: Sequence[str] = (),
    ) -> None:
        self.language = language
        self.searched = list(searched)
        self.available = list(available)
        if message is None:
            hint = ""
            if isinstance(language, str) and language.lower() in self.available:
                hint = f" (NLTK's language names are lowercase: did you mean {language.lower()!r}?)"
            message = (
                f"no Punkt parameters for language {language!r}{hint}: the languages available "
                f"are {', '.join(map(repr, self.available)) or 'none'} (fastppl bundles 'english' "
                f"and 'portuguese'), and tokenizers/punkt_tab/{language}/ is not in NLTK's data "
                f"path ({', '.join(self.searched) or 'empty'}); get it with "
                f"`python -m nltk.downloader punkt_tab` or set NLTK_DATA to a folder that holds it"
            )
        self.message = message
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.message, self.language, self.searched, self.available))


class ModelFileNotFoundError(FastpplError, FileNotFoundError):
    """A model file does not exist (also a :class:`FileNotFoundError`)."""


class NotNormalizedError(FastpplError, ValueError):
    """A score that is not a probability was used where a probability is needed.

    Raised by ``evaluate()``/``perplexity()`` on a ``stupid_backoff`` model (its scores do not
    sum to 1) unless ``allow_unnormalized=True`` is passed.
    """


class CountOverflowError(FastpplError, OverflowError):
    """A count outgrew its integer type (an n-gram seen more than 2^32 - 1 times).

    Raised while counting or estimating on a corpus too large for 32-bit n-gram counts.
    """


class DistributedTaskError(FastpplError, RuntimeError):
    """A task of a distributed job (``fastppl.ray``) failed for good.

    Raised when a worker died more often than the task's retries allow, or a task failed with
    an error that is not fastppl's (fastppl's own errors, such as a missing input file, are
    raised as they are). The message names the task; no output file is left behind.
    """


class FastpplWarning(UserWarning):
    """Base class of every warning issued by fastppl."""


class ZeroProbabilityWarning(FastpplWarning):
    """A predicted token got probability 0, so the perplexity is infinite.

    Issued by unsmoothed estimators (``mle``) when the evaluated text holds an n-gram never seen in
    training; the result is ``inf``, never ``NaN``.
    """
