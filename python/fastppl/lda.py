"""Perplexity of documents under an LDA topic model.

Given document-topic proportions ``theta`` (M x K, rows sum to 1) and
topic-word distributions ``phi`` (K x V, rows sum to 1), the perplexity of
documents ``w_m = (w_m1, ..., w_mN_m)`` is the plug-in (point-estimate)
likelihood per word::

    PPL = exp(-sum_m sum_n log(theta_m . phi[:, w_mn]) / sum_m N_m)

(natural logs; ``PPL = 2 ** bits_per_word``). Only the ``theta_m . phi[:, w]``
entries for words that occur are computed, in bounded-size chunks, so the
M x V matrix ``theta @ phi`` is never formed (10k documents x 50k vocabulary
would be 4 GB in float64).

Relation to the libraries' own numbers (all are per word, but different
quantities):

* gensim ``LdaModel.log_perplexity(corpus)`` returns the *variational lower
  bound* (ELBO) per word, in nats, including the Dirichlet KL terms of theta
  and of the topics (the latter scaled to the training corpus size). gensim
  logs ``2 ** -bound`` as "perplexity estimate": a base-2 exponent applied to
  a natural-log bound. The comparable value is ``exp(-bound)``.
* scikit-learn ``LatentDirichletAllocation.perplexity(X)`` is
  ``exp(-score(X) / N)``, ``score`` being the same kind of ELBO.
* fastppl plugs in the posterior means ``theta = E_q[theta]`` (inferred by the
  model's own E-step for held-out documents) and ``phi = E_q[beta]``. By
  Jensen's inequality (``exp E[log x] <= E[x]``) and because KL terms are
  >= 0, the ELBO is below this plug-in log-likelihood, so on the same
  documents ``fastppl <= exp(-gensim bound) `` and ``fastppl <= sklearn``.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from fastppl._checks import check_bool, check_number
from fastppl.errors import InvalidArgumentError, InvalidTypeError
from fastppl.metrics import PerplexityResult

__all__ = ["model_parameters", "model_perplexity", "perplexity", "score"]

#: Upper bound on the temporary memory of one chunk of (theta, phi) gathers.
_CHUNK_BYTES = 64 * 2**20


def score(
    theta: Any, phi: Any, docs: Any, *, normalize: bool = False, atol: float = 1e-5
) -> PerplexityResult:
    """Log-likelihood of documents under LDA parameters (see the module docstring).

    Args:
        theta: ``(M, K)`` document-topic proportions, rows summing to 1.
        phi: ``(K, V)`` topic-word probabilities, rows summing to 1.
        docs: The M documents: a scipy.sparse ``(M, V)`` document-term count
            matrix, or a sequence whose items are either token-id sequences
            or gensim bags of words (``(token_id, count)`` pairs).
        normalize: Rescale rows of ``theta`` and ``phi`` to sum to 1 instead
            of rejecting rows that do not.
        atol: Tolerance on the row sums when ``normalize`` is False.

    Returns:
        A :class:`fastppl.metrics.PerplexityResult`; ``log_prob`` is in
        nats and ``num_tokens`` is the total word count. A word of
        probability 0 gives ``log_prob = -inf`` and infinite perplexity; a
        word counted 0 times (in a bag of words or a sparse matrix) adds
        nothing, whatever its probability.

    Raises:
        InvalidArgumentError: Inconsistent shapes, negative or non-finite
            values, rows not summing to 1, token ids outside ``[0, V)``, no
            words at all, or an ``atol`` that is not a finite number >= 0.
        InvalidTypeError: ``normalize`` is not a bool, ``atol`` not a
            number, or ``theta``/``phi`` not real numbers (strings, complex).

    >>> theta = np.array([[1.0, 0.0], [0.5, 0.5]])
    >>> phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    >>> r = score(theta, phi, [[0, 1], [2]])
    >>> r.num_tokens, round(r.perplexity, 6)  # (0.5 * 0.5 * 0.5) ** (-1 / 3)
    (3, 2.0)
    """
    normalize = check_bool("normalize", normalize)
    atol = check_number("atol", atol)
    if not (math.isfinite(atol) and atol >= 0):
        raise InvalidArgumentError(f"atol must be a finite number >= 0, got {atol!r}")
    theta = _distributions(theta, "theta", normalize, atol)
    phi = _distributions(phi, "phi", normalize, atol)
    if theta.shape[1] != phi.shape[0]:
        raise InvalidArgumentError(f"theta has {theta.shape[1]} topics but phi has {phi.shape[0]}")
    rows, words, counts = _doc_term_entries(docs, theta.shape[0], phi.shape[1])
    if counts.sum() <= 0:
        raise InvalidArgumentError("the documents contain no words")
    occurs = counts > 0  # a zero count adds nothing (its 0 * log 0 would be NaN)
    rows, words, counts = rows[occurs], words[occurs], counts[occurs]
    phi_by_word = np.ascontiguousarray(phi.T)
    chunk = max(1, _CHUNK_BYTES // (16 * theta.shape[1]))
    total = 0.0
    with np.errstate(divide="ignore"):
        for start in range(0, rows.size, chunk):
            part = slice(start, start + chunk)
            word_probs = np.einsum("ij,ij->i", theta[rows[part]], phi_by_word[words[part]])
            total += float(counts[part] @ np.log(word_probs))
    return PerplexityResult(log_prob=total, num_tokens=int(counts.sum()))


def perplexity(
    theta: Any, phi: Any, docs: Any, *, normalize: bool = False, atol: float = 1e-5
) -> float:
    """Per-word perplexity ``exp(-sum log(theta_m . phi[:, w]) / N)`` of LDA documents.

    Args:
        theta: ``(M, K)`` document-topic proportions.
        phi: ``(K, V)`` topic-word probabilities.
        docs: Token-id sequences, gensim bags of words, or a sparse ``(M, V)``
            count matrix (see :func:`score`).
        normalize: Rescale rows to sum to 1 instead of rejecting them.
        atol: Tolerance on the row sums.

    Returns:
        The perplexity per word.

    Raises:
        InvalidArgumentError: As :func:`score`.
        InvalidTypeError: As :func:`score`.

    >>> perplexity(np.array([[1.0]]), np.array([[0.25, 0.75]]), [[0, 0]])
    4.0
    """
    return score(theta, phi, docs, normalize=normalize, atol=atol).perplexity


def model_parameters(model: Any, docs: Any) -> tuple[np.ndarray, np.ndarray]:
    """``theta`` inferred for ``docs`` by the model's own E-step, and ``phi``.

    Supports a trained gensim ``LdaModel`` (``theta`` = normalised
    ``model.inference(bow)`` gamma, ``phi = model.get_topics()``) and a
    scikit-learn ``LatentDirichletAllocation`` (``theta = model.transform(X)``,
    ``phi`` = normalised ``components_``). Both inferences start from random
    initial values, so repeated calls differ slightly.

    Args:
        model: A fitted gensim or scikit-learn LDA model.
        docs: Documents as accepted by :func:`score`.

    Returns:
        ``(theta, phi)`` as float64 arrays.

    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> lda = LatentDirichletAllocation(2, random_state=0).fit(np.eye(4, dtype=int))
    >>> [a.shape for a in model_parameters(lda, [[0, 1], [3]])]
    [(2, 2), (2, 4)]
    """
    if hasattr(model, "components_") and hasattr(model, "transform"):
        vocab = model.components_.shape[1]
        theta = model.transform(_sparse_counts(docs, vocab))
        phi = model.components_ / model.components_.sum(axis=1, keepdims=True)
    elif hasattr(model, "get_topics") and hasattr(model, "inference"):
        phi = model.get_topics()
        gamma, _ = model.inference(_bags_of_words(docs, phi.shape[1]))
        theta = gamma / gamma.sum(axis=1, keepdims=True)
    else:
        raise InvalidArgumentError(
            f"expected a gensim LdaModel or a scikit-learn LatentDirichletAllocation, "
            f"got {type(model).__name__}"
        )
    return np.asarray(theta, dtype=np.float64), np.asarray(phi, dtype=np.float64)


def model_perplexity(model: Any, docs: Any) -> float:
    """Plug-in per-word perplexity of (held-out) documents under a trained LDA model.

    Args:
        model: A fitted gensim ``LdaModel`` or scikit-learn
            ``LatentDirichletAllocation``.
        docs: Documents as accepted by :func:`score`.

    Returns:
        ``perplexity(*model_parameters(model, docs), docs)``; see the module
        docstring for how it relates to the libraries' own perplexities.

    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> lda = LatentDirichletAllocation(2, random_state=0).fit(np.eye(4, dtype=int))
    >>> 1 < model_perplexity(lda, [[0, 1], [3]]) < 4
    True
    """
    theta, phi = model_parameters(model, docs)
    return perplexity(theta, phi, docs, normalize=True)


def _distributions(values: Any, name: str, normalize: bool, atol: float) -> np.ndarray:
    """A validated 2-D float64 array of probability rows."""
    try:
        array = np.asarray(values)
    except ValueError as err:  # ragged rows
        raise InvalidArgumentError(
            f"{name} must be a rectangular array of numbers ({err})"
        ) from None
    if array.dtype.kind not in "biuf" and array.dtype.name != "bfloat16":
        # numpy would read "0.5" as 0.5 and drop the imaginary part of a complex number
        raise InvalidTypeError(
            f"{name} must hold real numbers (ints or floats), got an array of dtype {array.dtype}"
        )
    array = array.astype(np.float64)
    if array.ndim != 2 or 0 in array.shape:
        raise InvalidArgumentError(f"{name} must be a non-empty 2-D array, got {array.shape}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise InvalidArgumentError(f"{name} must be finite and non-negative")
    if normalize:
        # divided by its largest value first: the sum of a row of huge values would overflow to
        # inf and the row become all zeros
        peaks = array.max(axis=1, keepdims=True)
        if (peaks == 0).any():
            raise InvalidArgumentError(f"{name} has an all-zero row")
        array = array / peaks
        return array / array.sum(axis=1, keepdims=True)
    sums = array.sum(axis=1, keepdims=True)
    bad = np.flatnonzero(np.abs(sums[:, 0] - 1) > atol)
    if bad.size:
        raise InvalidArgumentError(
            f"rows of {name} must sum to 1 (row {bad[0]} sums to {sums[bad[0], 0]:.6g}); "
            "pass normalize=True to rescale them"
        )
    return array


def _doc_term_entries(
    docs: Any, num_docs: int, vocab: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(document, word, count) triples of the corpus, validated."""
    if hasattr(docs, "tocoo"):
        coo = docs.tocoo()
        if coo.shape != (num_docs, vocab):
            raise InvalidArgumentError(
                f"document-term matrix has shape {coo.shape}, expected {(num_docs, vocab)}"
            )
        rows, words, counts = coo.row, coo.col, np.asarray(coo.data, dtype=np.float64)
    else:
        if isinstance(docs, str | bytes) or not isinstance(docs, Sequence | np.ndarray):
            raise InvalidArgumentError("docs must be a sequence of documents or a sparse matrix")
        if len(docs) != num_docs:
            raise InvalidArgumentError(f"{len(docs)} documents given for {num_docs} rows of theta")
        pairs = [_document_pairs(doc, index) for index, doc in enumerate(docs)]
        rows = np.repeat(np.arange(num_docs), [ids.size for ids, _ in pairs])
        words = np.concatenate([ids for ids, _ in pairs] + [np.zeros(0, np.int64)])
        counts = np.concatenate([c for _, c in pairs] + [np.zeros(0)])
    outside = (words < 0) | (words >= vocab)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise InvalidArgumentError(
            f"token id {words[first]} of document {rows[first]} is outside the vocabulary: "
            f"token ids must lie in [0, {vocab})"
        )
    with np.errstate(invalid="ignore"):  # np.round(nan)
        wrong = ~np.isfinite(counts) | (counts < 0) | (counts != np.round(counts))
    if wrong.any():
        first = int(np.flatnonzero(wrong)[0])
        raise InvalidArgumentError(
            f"count {counts[first]} of token id {words[first]} in document {rows[first]}: "
            "word counts must be non-negative integers"
        )
    return rows.astype(np.intp), words.astype(np.intp), counts


#: What a document of a list of them must be.
DOCUMENT_FORM = (
    "each document must be a sequence of integer token ids or of (token_id, count) pairs"
)


def _document_pairs(doc: Any, index: int) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and counts of ``docs[index]`` (token-id list or bag of words): integer ids, or
    whole floats of the int64 range; numbers only, else an :class:`InvalidArgumentError` naming
    the document."""
    try:
        array = np.asarray(doc)
    except ValueError:  # pairs of different lengths
        raise InvalidArgumentError(f"docs[{index}]: {DOCUMENT_FORM}") from None
    if array.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    if array.ndim == 1 and np.issubdtype(array.dtype, np.integer):
        return array.astype(np.int64), np.ones(array.size)
    # numbers only: np.round of a str or None raised a bare TypeError, a complex count lost
    # its imaginary part
    if array.ndim == 2 and array.shape[1] == 2 and array.dtype.kind in "iuf":
        ids = array[:, 0]
        whole = np.isfinite(ids) & (ids == np.round(ids)) & (np.abs(ids) < 2.0**63)
        if whole.all():
            return ids.astype(np.int64), array[:, 1].astype(np.float64)
    raise InvalidArgumentError(
        f"docs[{index}]: {DOCUMENT_FORM}, got {reprlib.repr(doc)} (an array of dtype "
        f"{array.dtype} and shape {array.shape})"
    )


def _sparse_counts(docs: Any, vocab: int) -> Any:
    """Documents as a scipy CSR count matrix (for scikit-learn)."""
    if hasattr(docs, "tocsr"):
        return docs.tocsr()
    from scipy.sparse import csr_matrix

    rows, words, counts = _doc_term_entries(docs, len(docs), vocab)
    return csr_matrix((counts, (rows, words)), shape=(len(docs), vocab))


def _bags_of_words(docs: Any, vocab: int) -> list[list[tuple[int, float]]]:
    """Documents as gensim bags of words."""
    num_docs = docs.shape[0] if hasattr(docs, "tocoo") else len(docs)
    rows, words, counts = _doc_term_entries(docs, num_docs, vocab)
    bags: list[list[tuple[int, float]]] = [[] for _ in range(num_docs)]
    for row, word, count in zip(rows.tolist(), words.tolist(), counts.tolist(), strict=True):
        bags[row].append((word, count))
    return bags
