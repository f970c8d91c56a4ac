"""`EvaluationResult`: the totals of a scored corpus and the perplexities derived from them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from fastppl._checks import LogBase, log_base_divisor
from fastppl.errors import EmptyCorpusError

if TYPE_CHECKING:
    import numpy as np

    from fastppl._core import Scores

LN2 = math.log(2.0)


class LogLikelihood:
    """The one base of fastppl's results: a total log-likelihood and what derives from it.

    Subclasses are frozen dataclasses with a ``log_prob`` field (sum of the natural-log
    probabilities of the counted tokens, <= 0) and a ``num_tokens`` field; :attr:`normalizer` is
    the unit count the per-unit figures divide by (tokens, unless a subclass counts words or
    bytes instead).
    """

    log_prob: float
    num_tokens: int

    @property
    def normalizer(self) -> float:
        """The unit count the per-unit figures divide by: the number of tokens."""
        return float(self.num_tokens)

    @property
    def cross_entropy(self) -> float:
        """Cross-entropy in nats per unit: ``-log_prob / normalizer``."""
        return -self.log_prob / self.normalizer

    @property
    def cross_entropy_bits(self) -> float:
        """Cross-entropy in bits per unit (``perplexity == 2 ** cross_entropy_bits``)."""
        return self.cross_entropy / LN2

    @property
    def perplexity(self) -> float:
        """``exp(cross_entropy)``; inf when the probability is 0 or the value overflows a float."""
        return exp_or_inf(self.cross_entropy)

    def log_prob_in(self, base: LogBase) -> float:
        """The total log probability in another base (2, 10, ...).

        >>> from fastppl.metrics import score
        >>> round(score([-1.0, -1.0]).log_prob_in(2), 6)
        -2.88539
        """
        return self.log_prob / log_base_divisor(base)


@dataclass(frozen=True)
class EvaluationResult(LogLikelihood):
    """Totals of a scored corpus. Logs are natural logs.

    ``perplexity = exp(-log_prob / num_tokens) = 2 ** cross_entropy_bits`` over the pooled tokens
    of all documents (micro average); :attr:`macro_perplexity` is the mean of the per-document
    perplexities instead, which weighs short documents as much as long ones.

    The totals are numbers; the per-sentence and per-document arrays are made (as NumPy arrays)
    when first read, so that a caller who wants a perplexity never waits for NumPy's import.
    The totals equal NumPy's sums of those arrays, bit for bit.

    Attributes:
        log_prob: sum of ln p over the counted tokens.
        num_tokens: counted tokens (words and one ``</s>`` per sentence with bos_eos; OOVs
            excluded when ``oov="skip"``).
        num_oov: out-of-vocabulary tokens met (counted or not).
        num_zero_probability: sentences holding a token of probability 0.
        sentence_log_probs: ln p of each sentence (counted tokens only).
        sentence_num_tokens: counted tokens of each sentence.
        document_log_probs: ln p of each document.
        document_num_tokens: counted tokens of each document.
        token_logprobs: ln p of every scored token (OOVs included), when asked for.
    """

    log_prob: float
    num_tokens: int
    num_oov: int
    num_zero_probability: int
    #: the arrays, or the core's scores that make them (by the OOV policy ``_skip_oov``)
    _arrays_source: Scores | dict[str, np.ndarray] = field(repr=False, compare=False)
    _skip_oov: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def from_scores(cls, scores: Scores, skip_oov: bool) -> EvaluationResult:
        """The result of the core's scores; ``skip_oov``: OOVs neither scored nor counted."""
        log_prob, num_tokens, num_oov, num_zero = scores.totals(skip_oov)
        if num_tokens == 0:
            raise EmptyCorpusError("nothing to score: the corpus has no (in-vocabulary) token")
        return cls(log_prob, num_tokens, num_oov, num_zero, scores, skip_oov)

    @cached_property
    def _arrays(self) -> dict[str, np.ndarray]:
        source = self._arrays_source
        return source if isinstance(source, dict) else source.arrays(self._skip_oov)

    @property
    def sentence_log_probs(self) -> np.ndarray:
        """ln p of each sentence (counted tokens only; float64)."""
        return self._arrays["sentence_log_probs"]

    @property
    def sentence_num_tokens(self) -> np.ndarray:
        """Counted tokens of each sentence (int64)."""
        return self._arrays["sentence_num_tokens"]

    @property
    def document_log_probs(self) -> np.ndarray:
        """ln p of each document (float64)."""
        return self._arrays["document_log_probs"]

    @property
    def document_num_tokens(self) -> np.ndarray:
        """Counted tokens of each document (int64)."""
        return self._arrays["document_num_tokens"]

    @property
    def token_logprobs(self) -> np.ndarray | None:
        """ln p of every scored token (OOVs included), when asked for; else None."""
        return self._arrays.get("token_logprobs")

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled with its arrays (the core's scores are not picklable)
        return (
            type(self),
            (self.log_prob, self.num_tokens, self.num_oov, self.num_zero_probability, self._arrays),
        )

    @property
    def document_perplexities(self) -> np.ndarray:
        """Perplexity of each document (NaN for a document with no counted token)."""
        import numpy as np

        with np.errstate(divide="ignore", invalid="ignore"):
            return np.exp(-self.document_log_probs / self.document_num_tokens)

    @property
    def macro_perplexity(self) -> float:
        """Mean of the per-document perplexities (documents with no counted token left out)."""
        per_doc = self.document_perplexities[self.document_num_tokens > 0]
        return float(per_doc.mean())


def exp_or_inf(x: float) -> float:
    """exp that overflows to inf instead of raising (a perplexity too large for a float)."""
    return math.inf if x > 709.0 else math.exp(x)
