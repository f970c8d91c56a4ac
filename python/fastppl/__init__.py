"""fastppl: exact and fast perplexity.

An n-gram language-model toolkit with a Rust core (counting, smoothing, scoring; GIL released,
all cores) and a thin Python layer (NLTK tokenization, sentence splitting, the public API).
Log-probabilities are natural logs unless a ``base`` is asked for.

>>> import fastppl
>>> corpus = fastppl.Corpus.from_sentences([["a", "b"], ["a", "c"]])
>>> model = fastppl.NGramModel.fit(corpus, order=2, smoothing="laplace")
>>> round(model.evaluate(corpus).perplexity, 4)
2.9044
"""

import importlib
from types import ModuleType

from fastppl import datasets, errors, reference, text, tokenize
from fastppl._core import MAX_ORDER, __version__
from fastppl.corpus import Corpus
from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    CountOverflowError,
    EmptyCorpusError,
    FastpplError,
    FastpplWarning,
    InvalidArgumentError,
    InvalidTypeError,
    ModelFileNotFoundError,
    ModelFormatError,
    NotNormalizedError,
    OutOfVocabularyError,
    PunktDataError,
    PunktDataNotFoundError,
    ZeroProbabilityWarning,
)
from fastppl.model import NGramModel
from fastppl.result import EvaluationResult, LogLikelihood
from fastppl.text import read_text, tokenize_text
from fastppl.tokenize import sent_tokenize, word_tokenize
from fastppl.training import train_arpa

__all__ = [
    "MAX_ORDER",
    "Corpus",
    "CorpusDecodeError",
    "CorpusFileNotFoundError",
    "CountOverflowError",
    "EmptyCorpusError",
    "EvaluationResult",
    "FastpplError",
    "FastpplWarning",
    "InvalidArgumentError",
    "InvalidTypeError",
    "LogLikelihood",
    "ModelFileNotFoundError",
    "ModelFormatError",
    "NGramModel",
    "NotNormalizedError",
    "OutOfVocabularyError",
    "PunktDataError",
    "PunktDataNotFoundError",
    "ZeroProbabilityWarning",
    "__version__",
    "datasets",
    "errors",
    "read_text",
    "reference",
    "sent_tokenize",
    "text",
    "tokenize",
    "tokenize_text",
    "train_arpa",
    "word_tokenize",
]


_LAZY_SUBMODULES = ("metrics", "lda", "hf", "documents", "kenlm")  # hf imports torch: on demand


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"fastppl.{name}")
    raise AttributeError(f"module 'fastppl' has no attribute {name!r}")
