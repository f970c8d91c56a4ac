"""`EvaluationResult`: the totals of a scored corpus and the perplexities derived from them."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from fastppl._checks import LogBase, log_base_divisor
from fastppl.errors import EmptyCorpusError

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

    Attributes:
        log_prob: sum of ln p over the counted tokens.
        num_tokens: counted tokens (words and one ``</s>`` per sentence with bos_eos; OOVs
            excluded when ``oov="skip"``).
        num_oov: out-of-vocabulary tokens met (counted or not).
        sentence_log_probs: ln p of each sentence (counted tokens only).
        sentence_num_tokens: counted tokens of each sentence.
        document_log_probs: ln p of each document.
        document_num_tokens: counted tokens of each document.
        token_logprobs: ln p of every scored token (OOVs included), when asked for.
        num_zero_probability: sentences holding a token of probability 0.
    """

    log_prob: float
    num_tokens: int
    num_oov: int
    sentence_log_probs: np.ndarray = field(repr=False)
    sentence_num_tokens: np.ndarray = field(repr=False)
    document_log_probs: np.ndarray = field(repr=False)
    document_num_tokens: np.ndarray = field(repr=False)
    token_logprobs: np.ndarray | None = field(default=None, repr=False)
    num_zero_probability: int = 0

    @classmethod
    def from_sentences(
        cls, raw: dict[str, np.ndarray], document_offsets: np.ndarray, skip_oov: bool
    ) -> EvaluationResult:
        """Aggregates the per-sentence arrays returned by the core."""
        oovs = raw["oovs"].astype(np.int64)
        if skip_oov:
            sent_lp = raw["logprob"]
            sent_n = raw["tokens"].astype(np.int64) - oovs
        else:
            sent_lp = raw["logprob"] + raw["oov_logprob"]
            sent_n = raw["tokens"].astype(np.int64)
        num_tokens = int(sent_n.sum())
        if num_tokens == 0:
            raise EmptyCorpusError("nothing to score: the corpus has no (in-vocabulary) token")
        bounds = np.asarray(document_offsets, dtype=np.int64)
        doc_lp = np.array([sent_lp[a:b].sum() for a, b in itertools.pairwise(bounds)])
        doc_n = np.array([sent_n[a:b].sum() for a, b in itertools.pairwise(bounds)], np.int64)
        return cls(
            log_prob=float(sent_lp.sum()),
            num_tokens=num_tokens,
            num_oov=int(oovs.sum()),
            sentence_log_probs=sent_lp,
            sentence_num_tokens=sent_n,
            document_log_probs=doc_lp,
            document_num_tokens=doc_n,
            token_logprobs=raw.get("token_logprobs"),
            num_zero_probability=int(np.isneginf(sent_lp).sum()),
        )

    @property
    def document_perplexities(self) -> np.ndarray:
        """Perplexity of each document (NaN for a document with no counted token)."""
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
