"""Exceptions and warnings raised by fastppl.

Every exception derives from :class:`FastpplError`, and also from the builtin exception whose
meaning fits (``ValueError``, ``KeyError``, ``FileNotFoundError``), so ``except ValueError`` code
keeps working. The Rust core raises these same classes.
"""

from __future__ import annotations


class FastpplError(Exception):
    """Base class of every fastppl error."""


class InvalidArgumentError(FastpplError, ValueError):
    """A parameter is out of range or inconsistent (order, smoothing, discount, option name)."""


class InvalidTypeError(FastpplError, TypeError):
    """An argument has the wrong type (a str where a list of tokens is expected, ...)."""


class EmptyCorpusError(FastpplError, ValueError):
    """A corpus holds no token where tokens are needed (fitting, evaluating)."""


class CorpusDecodeError(FastpplError, ValueError):
    """A text file is not valid in its encoding (``errors="strict"``).

    Attributes:
        path: the file.
        byte_offset: offset of the first invalid byte in the (decompressed) file.
        line: 1-based line of that byte.
    """

    def __init__(self, message: str, path: str, byte_offset: int, line: int) -> None:
        super().__init__(message)
        self.path = path
        self.byte_offset = byte_offset
        self.line = line


class CorpusFileNotFoundError(FastpplError, FileNotFoundError):
    """A corpus file does not exist."""


class OutOfVocabularyError(FastpplError, KeyError):
    """A token outside the model's vocabulary was met with ``oov="error"``.

    Attributes:
        word: the token.
        sentence_index: 0-based index of its sentence in the corpus.
        position: 0-based position of the token in its sentence.
    """

    def __init__(self, message: str, word: str, sentence_index: int, position: int) -> None:
        super().__init__(message)
        self.word = word
        self.sentence_index = sentence_index
        self.position = position

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class NotNormalizedError(FastpplError, ValueError):
    """A model whose scores are not probabilities (stupid backoff) was asked for a perplexity."""


class ModelFormatError(FastpplError, ValueError):
    """A model file (ARPA) is malformed.

    Attributes:
        path: the file.
        line: the 1-based line number of the problem (0 when no single line is to blame).
    """

    def __init__(self, message: str, path: str, line: int) -> None:
        super().__init__(message)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        return str(self.args[0])


class ModelFileNotFoundError(FastpplError, FileNotFoundError):
    """A model file does not exist (also a :class:`FileNotFoundError`)."""


class FastpplWarning(UserWarning):
    """Base class of fastppl warnings."""


class ZeroProbabilityWarning(FastpplWarning):
    """A token got probability 0 (e.g. an unseen word under MLE): the perplexity is infinite."""


class PunktMissingWarning(FastpplWarning):
    """NLTK's Punkt sentence models are not installed; a documented fallback is used."""
