"""fastppl: exact and fast perplexity."""

from fastppl._core import MAX_ORDER, __version__
from fastppl.corpus import Corpus
from fastppl.errors import FastpplError
from fastppl.model import NGramModel
from fastppl.result import EvaluationResult

__all__ = ["MAX_ORDER", "Corpus", "EvaluationResult", "FastpplError", "NGramModel", "__version__"]
