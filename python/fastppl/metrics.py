"""Model-agnostic perplexity metrics: numpy in, numbers out.

Conventions used throughout:

* Log-probabilities returned by fastppl are natural logs (nats). Inputs may be
  in any base ``b`` (``base="e"``, ``2``, ``10`` or any finite number > 1, the
  same rule as the model API); they are converted with ``log_e(p) = log_b(p) * ln(b)``.
* Cross-entropy ``CE`` is the mean negative log-likelihood per unit:
  ``CE = -sum(log p) / num_units`` in nats, ``CE_bits = CE / ln(2)``.
* ``PPL = exp(CE) = 2 ** CE_bits``. Perplexity does not depend on the log base
  of the inputs, only on the unit it is normalised by.
* The unit is the token unless ``num_units`` is given: pass the number of
  words for word perplexity, of UTF-8 bytes for byte perplexity and bits per
  byte, of characters for character perplexity. The log-likelihood is the same;
  only the denominator changes.
* Several documents: *micro* averaging pools all tokens
  (``exp(-sum_d sum_t log p / sum_d N_d)``); *macro* averaging is the mean of
  the per-document perplexities (``mean_d exp(-sum_t log p_d / N_d)``), which
  weighs short and long documents equally.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from fastppl._checks import LogBase, check_bool, check_int, check_number, log_base_divisor
from fastppl.errors import InvalidArgumentError, InvalidTypeError, ZeroProbabilityWarning
from fastppl.result import LogLikelihood

__all__ = [
    "CorpusResult",
    "LogitsResult",
    "PerplexityResult",
    "bits_per_byte",
    "bits_per_token",
    "corpus_perplexity",
    "cross_entropy",
    "from_logits",
    "perplexity",
    "score",
    "score_corpus",
]

Average = Literal["micro", "macro"]


@dataclass(frozen=True, eq=False, kw_only=True)
class PerplexityResult(LogLikelihood):
    """Log-likelihood of some text and the numbers derived from it.

    Attributes:
        log_prob: Sum of the token log-probabilities, in nats (<= 0).
        num_tokens: Number of scored tokens.
        num_units: Denominator for per-unit numbers (words, bytes,
            characters); ``None`` means per token.
    """

    log_prob: float
    num_tokens: int
    num_units: float | None = None

    @property
    def normalizer(self) -> float:
        """The unit count the metrics are divided by (tokens unless ``num_units``)."""
        return float(self.num_tokens if self.num_units is None else self.num_units)

    def per_unit(self, num_units: float) -> PerplexityResult:
        """The same log-likelihood normalised by another unit count.

        Args:
            num_units: Number of words, bytes or characters of the text.

        Returns:
            A copy whose metrics are per the given unit.

        >>> r = score([-1.0, -1.0, -1.0, -1.0])
        >>> round(r.per_unit(2).cross_entropy, 6)  # 4 tokens, 2 words: nats per word
        2.0
        """
        return dataclasses.replace(self, num_units=_positive_count(num_units, "num_units"))


@dataclass(frozen=True, eq=False, kw_only=True)
class LogitsResult(PerplexityResult):
    """Result of :func:`from_logits`.

    Attributes:
        token_logprobs: Array of ``labels.shape``: log-probability in nats of
            each label, NaN where the label is not scored.
        mask: Boolean array of ``labels.shape``, True where scored.
    """

    token_logprobs: np.ndarray
    mask: np.ndarray


@dataclass(frozen=True, eq=False, kw_only=True)
class CorpusResult(PerplexityResult):
    """Log-likelihood of several documents (see :func:`score_corpus`).

    The inherited metrics (``perplexity``, ``cross_entropy``...) are micro
    averages over all pooled tokens (or units).

    Attributes:
        document_logprobs: Per-document 1-D arrays of token log-probs (nats).
        document_units: Per-document unit counts, or ``None`` for tokens.
    """

    document_logprobs: tuple[np.ndarray, ...]
    document_units: np.ndarray | None = None

    @property
    def document_perplexities(self) -> np.ndarray:
        """Perplexity of each document on its own."""
        totals = np.array([lp.sum() for lp in self.document_logprobs])
        counts = (
            np.array([lp.size for lp in self.document_logprobs], dtype=np.float64)
            if self.document_units is None
            else self.document_units
        )
        with np.errstate(over="ignore"):  # too large for a float: inf, as .perplexity
            return np.exp(-totals / counts)

    @property
    def macro_perplexity(self) -> float:
        """Mean of the per-document perplexities."""
        return float(self.document_perplexities.mean())

    def average(self, how: Average) -> float:
        """Micro or macro perplexity (see the module docstring)."""
        if how == "micro":
            return self.perplexity
        if how == "macro":
            return self.macro_perplexity
        raise InvalidArgumentError(f"average must be 'micro' or 'macro', not {how!r}")


def score(
    logprobs: Any = None,
    *,
    probs: Any = None,
    base: LogBase = "e",
    num_units: float | None = None,
) -> PerplexityResult:
    """Summarise per-token log-probabilities (or probabilities) of one text.

    Args:
        logprobs: Array-like of log-probabilities in ``base`` (all <= 0).
        probs: Array-like of probabilities in (0, 1]; instead of ``logprobs``.
        base: Log base of ``logprobs``: ``"e"`` (default), ``2``, ``10`` or any
            positive number other than 1.
        num_units: Words/bytes/characters to normalise by instead of tokens.

    Returns:
        A :class:`PerplexityResult` (log-likelihood kept in nats).

    Raises:
        InvalidArgumentError: Empty input, a ragged list (rows of different lengths), a
            numpy masked array with masked entries (pass ``.compressed()``), NaN/inf,
            log-probs > 0, probs outside (0, 1], both or neither of ``logprobs``/``probs``,
            bad ``base``.
        InvalidTypeError: Values that are not real numbers (strings, bools,
            complex numbers, objects), ``num_units`` not a number.

    >>> r = score([-0.5, -0.25], base=2)
    >>> r.num_tokens, round(r.cross_entropy_bits, 6), round(r.perplexity, 6)
    (2, 0.375, 1.29684)
    """
    nats = _as_nats(logprobs, probs, base)
    units = None if num_units is None else _positive_count(num_units, "num_units")
    return PerplexityResult(log_prob=float(nats.sum()), num_tokens=nats.size, num_units=units)


def perplexity(
    logprobs: Any = None,
    *,
    probs: Any = None,
    base: LogBase = "e",
    num_units: float | None = None,
) -> float:
    """Perplexity ``exp(-sum(log_e p) / N) = 2 ** (-sum(log_2 p) / N)``.

    ``N`` is the number of tokens, or ``num_units`` (words for word
    perplexity, bytes for byte perplexity, characters, ...).

    Args:
        logprobs: Log-probabilities in ``base``, one per token.
        probs: Probabilities in (0, 1] instead of ``logprobs``.
        base: Log base of ``logprobs`` (``"e"``, ``2``, ``10``, or any finite number > 1).
        num_units: Unit count to normalise by instead of the token count.

    Returns:
        The perplexity (dimensionless, >= 1 for valid probabilities).

    Raises:
        InvalidArgumentError: See :func:`score`.

    >>> perplexity(probs=[0.25, 0.25])
    4.0
    >>> perplexity([-2.0, -2.0], base=2)  # 2 bits per token
    4.0
    >>> round(perplexity([-2.0, -2.0], base=2, num_units=1), 9)  # one two-token word
    16.0
    """
    return score(logprobs, probs=probs, base=base, num_units=num_units).perplexity


def cross_entropy(
    logprobs: Any = None,
    *,
    probs: Any = None,
    base: LogBase = "e",
    num_units: float | None = None,
) -> float:
    """Cross-entropy in nats per token (or per unit): ``-sum(log_e p) / N``.

    Args:
        logprobs: Log-probabilities in ``base``, one per token.
        probs: Probabilities in (0, 1] instead of ``logprobs``.
        base: Log base of ``logprobs``.
        num_units: Unit count to normalise by instead of the token count.

    Returns:
        Nats per unit; ``perplexity == exp(cross_entropy)``.

    >>> round(cross_entropy(probs=[0.5, 0.5]), 6)
    0.693147
    """
    return score(logprobs, probs=probs, base=base, num_units=num_units).cross_entropy


def bits_per_token(logprobs: Any = None, *, probs: Any = None, base: LogBase = "e") -> float:
    """Cross-entropy in bits per token: ``-sum(log_2 p) / N``; ``PPL = 2 ** bpt``.

    Args:
        logprobs: Log-probabilities in ``base``, one per token.
        probs: Probabilities in (0, 1] instead of ``logprobs``.
        base: Log base of ``logprobs``.

    Returns:
        Bits per token.

    >>> bits_per_token(probs=[0.5, 0.25])
    1.5
    """
    return score(logprobs, probs=probs, base=base).cross_entropy_bits


def bits_per_byte(
    logprobs: Any = None, *, num_bytes: int, probs: Any = None, base: LogBase = "e"
) -> float:
    """Bits per byte: total negative log-likelihood in bits over the byte count.

    Args:
        logprobs: Log-probabilities in ``base`` of the tokens covering the text.
        num_bytes: Length of the text in bytes (e.g. ``len(text.encode())``).
        probs: Probabilities in (0, 1] instead of ``logprobs``.
        base: Log base of ``logprobs``.

    Returns:
        Bits per byte; byte perplexity is ``2 ** bits_per_byte``.

    >>> bits_per_byte([-8.0, -8.0], num_bytes=4, base=2)
    4.0
    """
    num_units = _positive_count(num_bytes, "num_bytes")
    return score(logprobs, probs=probs, base=base, num_units=num_units).cross_entropy_bits


def score_corpus(
    per_document_logprobs: Iterable[Any],
    *,
    base: LogBase = "e",
    num_units: Iterable[float] | None = None,
) -> CorpusResult:
    """Log-likelihoods of several documents, for micro and macro averages.

    Args:
        per_document_logprobs: One array-like of log-probs (in ``base``) per
            document (or a 2-D array, one row per document), as a sequence or any
            other iterable; every document must have at least one token.
        base: Log base of the inputs.
        num_units: Optional per-document unit counts (words, bytes, ...).

    Returns:
        A :class:`CorpusResult`; ``.perplexity`` is micro, ``.macro_perplexity``
        macro.

    Raises:
        InvalidArgumentError: No documents, an empty document, a document that is a single
            number instead of an array, invalid values (the message
            names the document, ``per_document_logprobs[2]``), or ``num_units`` of the wrong
            length.
        InvalidTypeError: A document that does not hold real numbers (named the same way),
            ``per_document_logprobs`` or ``num_units`` not iterable (None, a number, a str).

    >>> r = score_corpus([[-1.0], [-3.0, -3.0, -3.0]])
    >>> round(r.cross_entropy, 6), round(r.macro_perplexity, 4)
    (2.5, 11.4019)
    """
    given = _sequence(per_document_logprobs, "per_document_logprobs", "per-document arrays")
    if len(given) == 0 or _is_scalar(given[0]):
        raise InvalidArgumentError(
            "per_document_logprobs must be a non-empty sequence of per-document arrays"
        )
    documents = []
    for index, logprobs in enumerate(given):
        if _is_scalar(logprobs):
            raise InvalidArgumentError(
                f"per_document_logprobs[{index}] is a single value ({logprobs!r}), not an array "
                "of the document's log-probs"
            )
        try:
            documents.append(_as_nats(logprobs, None, base))
        except (InvalidArgumentError, InvalidTypeError) as err:  # naming the document
            raise type(err)(f"per_document_logprobs[{index}]: {err}") from err
    docs = tuple(documents)
    units = None
    if num_units is not None:
        counts = _sequence(num_units, "num_units", "per-document unit counts")
        units = np.array([_positive_count(u, "num_units") for u in counts], dtype=np.float64)
        if units.shape != (len(docs),):
            raise InvalidArgumentError(
                f"num_units has {units.size} entries for {len(docs)} documents"
            )
    return CorpusResult(
        log_prob=float(sum(d.sum() for d in docs)),
        num_tokens=sum(d.size for d in docs),
        num_units=None if units is None else float(units.sum()),
        document_logprobs=docs,
        document_units=units,
    )


def corpus_perplexity(
    per_document_logprobs: Iterable[Any],
    average: Average = "micro",
    *,
    base: LogBase = "e",
    num_units: Iterable[float] | None = None,
) -> float:
    """Perplexity of several documents, micro- or macro-averaged.

    ``"micro"``: ``exp(-sum of all log-probs / total tokens)`` (pooled tokens;
    long documents weigh more). ``"macro"``: mean of per-document perplexities.

    Args:
        per_document_logprobs: One array-like of log-probs per document.
        average: ``"micro"`` (default) or ``"macro"``.
        base: Log base of the inputs.
        num_units: Optional per-document unit counts (words, bytes, ...).

    Returns:
        The averaged perplexity.

    >>> docs = [[-1.0, -1.0], [-3.0, -3.0]]
    >>> round(corpus_perplexity(docs), 4), round(corpus_perplexity(docs, "macro"), 4)
    (7.3891, 11.4019)
    """
    return score_corpus(per_document_logprobs, base=base, num_units=num_units).average(average)


def from_logits(
    logits: Any,
    labels: Any,
    attention_mask: Any = None,
    ignore_index: int = -100,
    *,
    shift: bool = True,
) -> LogitsResult:
    """Perplexity from raw logits and labels, computed in Rust.

    Causal convention (``shift=True``): ``logits[..., t, :]`` predicts
    ``labels[..., t + 1]``, so the first label is never scored, exactly as for
    Hugging Face causal LMs called with ``labels=input_ids``. With
    ``shift=False`` ``logits[..., t, :]`` scores ``labels[..., t]``. A label is
    scored when it is not ``ignore_index`` and (with a mask) both it and the
    position predicting it have ``attention_mask == 1``, so padding on either
    side never counts.

    Each scored row is reduced with a stable log-sum-exp in float64 without a
    softmax copy, rows in parallel, GIL released. ``logits`` may be float32,
    float64, float16, bfloat16 (``ml_dtypes``) numpy arrays or torch tensors
    (any device; bfloat16 is passed as its raw bits, not widened in Python).
    C-contiguous inputs are read in place; others are copied once. A ``-inf``
    logit, as vocabulary masks write, is a probability of 0: the others are
    normalised without it, and a label whose own logit is ``-inf`` gets
    ``-inf`` (the perplexity is then ``inf``, with a
    :class:`~fastppl.errors.ZeroProbabilityWarning`).

    Args:
        logits: ``(..., T, V)`` unnormalised scores.
        labels: ``(..., T)`` integer token ids (int32/int64).
        attention_mask: Optional ``(..., T)`` array of 0/1.
        ignore_index: Label value that is never scored.
        shift: Whether logits at ``t`` predict label ``t + 1``.

    Returns:
        A :class:`LogitsResult` (``perplexity``, ``cross_entropy`` in nats,
        ``cross_entropy_bits``, ``num_tokens``, ``token_logprobs`` in nats).

    Raises:
        InvalidArgumentError: Logits of fewer than 2 dimensions, shape or dtype
            mismatch, a ragged list (rows of different lengths), a masked array with
            masked entries (use ``attention_mask`` or ``ignore_index``), labels outside
            ``[0, V)``, NaN or ``+inf`` in a scored logits row, or one that is all
            ``-inf`` (the message names the logit, ``logits[b, t, v]``, or the row, and the
            label it predicts), or nothing to score.
        InvalidTypeError: ``shift`` not a bool, ``ignore_index`` not an int.

    >>> logits = np.log(np.array([[[0.5, 0.5], [0.25, 0.75], [0.9, 0.1]]]))
    >>> r = from_logits(logits, np.array([[0, 1, 0]]))
    >>> r.num_tokens, round(r.perplexity, 6)  # labels 1, 0 scored: sqrt(1 / (0.5 * 0.25))
    (2, 2.828427)
    """
    shift = check_bool("shift", shift)
    ignore_index = check_int("ignore_index", ignore_index)
    values, half_format = _logits_array(logits)
    if values.ndim < 2:
        raise InvalidArgumentError(
            f"logits must have at least 2 dimensions (..., T, V): one row of V scores per "
            f"label, got shape {values.shape}"
        )
    if values.shape[-1] == 0:
        raise InvalidArgumentError(
            f"logits of shape {values.shape} have an empty vocabulary (V = 0): no label can be "
            "scored"
        )
    label_ids = _as_numpy(labels, "labels")
    if label_ids.shape != values.shape[:-1]:
        raise InvalidArgumentError(
            f"logits of shape {values.shape} need labels of shape {values.shape[:-1]}, "
            f"got {label_ids.shape}"
        )
    if not np.issubdtype(label_ids.dtype, np.integer):
        raise InvalidArgumentError(f"labels must be integers, not {label_ids.dtype}")
    if label_ids.size == 0:
        raise InvalidArgumentError(f"labels of shape {label_ids.shape} hold no token to score")
    scored = label_ids != ignore_index
    if attention_mask is not None:
        mask = _as_numpy(attention_mask, "attention_mask")
        if mask.shape != label_ids.shape:
            raise InvalidArgumentError(
                f"attention_mask has shape {mask.shape}, labels have {label_ids.shape}"
            )
        outside_01 = ~np.isin(mask, (0, 1))
        if outside_01.any():
            where = tuple(int(i) for i in np.argwhere(outside_01)[0])
            raise InvalidArgumentError(
                f"attention_mask{list(where)} is {mask[where].item()!r}: attention_mask must "
                "hold only 0 and 1"
            )
        scored &= mask.astype(bool)
    if shift:
        scored[..., 0] = False
        if attention_mask is not None:
            scored[..., 1:] &= mask[..., :-1].astype(bool)
    # checked in the labels' own dtype: uint64 ids >= 2^63 must not wrap when cast to int64
    vocab_size = values.shape[-1]
    outside = scored & ((label_ids < 0) | (label_ids >= vocab_size))
    if outside.any():
        where = tuple(int(i) for i in np.argwhere(outside)[0])
        raise InvalidArgumentError(
            f"label {label_ids[where]} at {where} is outside the vocabulary [0, {vocab_size}); "
            f"labels must be in [0, {vocab_size}) or equal ignore_index={ignore_index}"
        )
    targets = np.where(scored, label_ids, 0).astype(np.int64)
    targets[~scored] = -1
    if shift:  # logits[t] predicts labels[t + 1]
        targets = np.concatenate([targets[..., 1:], np.full_like(targets[..., :1], -1)], axis=-1)
    num_tokens = int(scored.sum())
    if num_tokens == 0:
        raise InvalidArgumentError("no label is scored (all masked, ignored, or too short)")
    from fastppl import _core

    rows = np.ascontiguousarray(values).reshape(-1, values.shape[-1])
    try:
        per_row = _core.logits_target_logprobs(rows, targets.reshape(-1), half_format)
    except InvalidArgumentError as err:
        if err.index is None:
            raise
        raise _located(err.index, rows, half_format, label_ids.shape, shift) from None
    per_row = per_row.reshape(label_ids.shape)
    _warn_zero_probabilities(per_row)
    if shift:
        per_row = np.concatenate([np.full_like(per_row[..., :1], np.nan), per_row[..., :-1]], -1)
    return LogitsResult(
        log_prob=float(per_row[scored].sum()),
        num_tokens=num_tokens,
        token_logprobs=per_row,
        mask=scored,
    )


def _warn_zero_probabilities(per_row: np.ndarray) -> None:
    """Warns when a scored label has probability 0 (its logit is ``-inf``; unscored ones are
    NaN), as `NGramModel.evaluate` warns of a token of probability 0."""
    zero = int(np.count_nonzero(per_row == -np.inf))
    if zero:
        warnings.warn(
            f"{zero} scored label(s) have probability 0 (a logit of -inf): the perplexity is inf",
            ZeroProbabilityWarning,
            stacklevel=3,
        )


def _located(
    row: int, rows: np.ndarray, half_format: str | None, shape: tuple[int, ...], shift: bool
) -> InvalidArgumentError:
    """The core's refusal of ``rows[row]`` of the ``(rows, V)`` logits (its error's ``index``:
    a scored row holding NaN or +inf, or no finite value) as an :class:`InvalidArgumentError`
    that names a non-finite logit by its index in the caller's ``logits`` (``shape`` is
    ``logits.shape[:-1]``), its value and the label it scores, not by a flat row number."""
    values = _widened(rows[row], half_format)
    position = tuple(int(i) for i in np.unravel_index(row, shape))
    label = (*position[:-1], position[-1] + 1) if shift else position
    bad = np.flatnonzero(np.isnan(values) | (values == np.inf))
    if bad.size == 0:
        return InvalidArgumentError(
            f"logits{list(position)} holds no finite value (every logit is -inf): the label it "
            f"predicts, labels{list(label)}, has no probability"
        )
    column = int(bad[0])
    return InvalidArgumentError(
        f"logits{list((*position, column))} is {values[column]}: the scores predicting "
        f"labels{list(label)} must be finite or -inf"
    )


def _widened(row: np.ndarray, half_format: str | None) -> np.ndarray:
    """One logits row as float64 (from the raw bits of float16 or bfloat16 values)."""
    if half_format == "float16":
        return row.view(np.float16).astype(np.float64)
    if half_format == "bfloat16":  # the high half of a float32
        return (row.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return row.astype(np.float64)


def _as_nats(logprobs: Any, probs: Any, base: LogBase) -> np.ndarray:
    """Validated 1-D float64 log-probabilities in nats."""
    if (logprobs is None) == (probs is None):
        raise InvalidArgumentError("give exactly one of logprobs and probs")
    if logprobs is None:
        p = _float_array(probs, "probs")
        _refuse_first(p, ~((p > 0) & (p <= 1)), "probs", "probs must lie in (0, 1]")
        return np.log(p).reshape(-1)
    lp = _float_array(logprobs, "logprobs")
    infinite = "logprobs contain NaN or infinity (a probability of 0?)"
    _refuse_first(lp, ~np.isfinite(lp), "logprobs", infinite)
    _refuse_first(lp, lp > 0, "logprobs", "logprobs must be <= 0 (probabilities <= 1)")
    return lp.reshape(-1) * log_base_divisor(base)


def _refuse_first(values: np.ndarray, bad: np.ndarray, name: str, why: str) -> None:
    """An :class:`InvalidArgumentError` naming the first of ``values`` where ``bad`` holds, by
    its index in the argument ``name`` and its value (``logprobs[1, 2] is 0.5: {why}``)."""
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        index = f"[{', '.join(map(str, where))}]" if where else ""
        raise InvalidArgumentError(f"{name}{index} is {float(values[where])}: {why}")


def _float_array(values: Any, name: str) -> np.ndarray:
    """``values`` as a float64 array of their own shape: real numbers only (integers, floats of
    any width, ml_dtypes' bfloat16), never strings, bools, complex numbers or objects, which numpy
    would convert (``"-1.0"`` to -1, ``True`` to 1) or truncate (the imaginary part); not empty,
    no NaN."""
    array = _as_numpy(values, name)
    if array.dtype.kind not in "iuf" and array.dtype.name != "bfloat16":
        raise InvalidTypeError(
            f"{name} must hold real numbers (ints or floats), got an array of dtype {array.dtype}"
        )
    array = array.astype(np.float64, copy=False)
    if array.size == 0:
        raise InvalidArgumentError(f"{name} is empty")
    _refuse_first(array, np.isnan(array), name, f"{name} contain NaN")
    return array


def _sequence(values: Any, name: str, items: str) -> list[Any]:
    """The items of ``values`` (a sequence, array or any other iterable, a generator too), or an
    :class:`InvalidTypeError` for a str, bytes, or anything that cannot be iterated."""
    if not isinstance(values, str | bytes):
        try:
            return list(values)
        except TypeError:
            pass
    raise InvalidTypeError(f"{name} must be a sequence of {items}, got {type(values).__name__}")


def _is_scalar(value: Any) -> bool:
    """Whether ``value`` is one number (0-d), not an array-like; a ragged list is not one."""
    try:
        return np.ndim(value) == 0
    except ValueError:  # numpy cannot make an array of a ragged list: _as_numpy says so
        return False


def _positive_count(value: float, name: str) -> float:
    number = check_number(name, value)
    if not (math.isfinite(number) and number > 0):
        raise InvalidArgumentError(f"{name} must be a positive number, not {value!r}")
    return number


def _is_torch_tensor(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _as_numpy(value: Any, name: str) -> np.ndarray:
    """A numpy view of an array-like or (CPU copy of a) torch tensor; one that numpy cannot
    make an array of (a ragged list: rows of different lengths), or a masked array with masked
    entries (numpy would hand over the values under its mask), is an
    :class:`InvalidArgumentError` naming the argument ``name``."""
    if _is_torch_tensor(value):
        return value.detach().cpu().numpy()
    if np.ma.isMaskedArray(value) and np.ma.getmaskarray(value).any():
        masked = np.argwhere(np.ma.getmaskarray(value))
        raise InvalidArgumentError(
            f"{name} is a masked array with {len(masked)} masked entries (the first at "
            f"{tuple(int(i) for i in masked[0])}), whose values would be read as if unmasked: "
            "pass only the values to score (.compressed()), or for from_logits an "
            "attention_mask or ignore_index labels"
        )
    try:
        return np.asarray(value)
    except ValueError as err:
        raise InvalidArgumentError(
            f"{name} is ragged, not a rectangular array of numbers ({err})"
        ) from None


def _logits_array(logits: Any) -> tuple[np.ndarray, str | None]:
    """Logits as float32/float64, or uint16 bits plus their half format."""
    if _is_torch_tensor(logits):
        tensor = logits.detach().cpu()
        name = str(tensor.dtype).removeprefix("torch.")
        if name in ("float16", "bfloat16"):
            import torch

            return tensor.view(torch.int16).numpy().view(np.uint16), name
        array = tensor.numpy()
    else:
        array = _as_numpy(logits, "logits")
    if not array.dtype.isnative:  # big-endian data on a little-endian machine, or the reverse
        array = array.astype(array.dtype.newbyteorder("="))
    name = array.dtype.name
    if name in ("float16", "bfloat16"):
        return array.view(np.uint16), name
    if name not in ("float32", "float64"):
        raise InvalidArgumentError(
            f"logits must be float16, bfloat16, float32 or float64, not {array.dtype}"
        )
    return array, None
