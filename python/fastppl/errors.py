"""Exceptions and warnings raised by fastppl (placeholder; full hierarchy pending)."""


class FastpplError(Exception):
    """Base class of every fastppl error."""


class InvalidArgumentError(FastpplError, ValueError):
    """A parameter is out of range or inconsistent."""


class EmptyCorpusError(FastpplError, ValueError):
    """A corpus holds no token where tokens are needed."""


class OutOfVocabularyError(FastpplError, KeyError):
    """A token outside the model's vocabulary was met with ``oov="error"``."""

    def __init__(self, message: str, word: str, sentence_index: int, position: int) -> None:
        super().__init__(message)
        self.word = word
        self.sentence_index = sentence_index
        self.position = position

    def __str__(self) -> str:
        return str(self.args[0])


class NotNormalizedError(FastpplError, ValueError):
    """A model whose scores are not probabilities was asked for a perplexity."""


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
    """A token got probability 0, so the perplexity is infinite."""
