"""Pure-Python reference implementation of fastppl's n-gram models.

This module is deliberately plain (dicts, tuples, loops, :class:`collections.Counter`): it is the
oracle the Rust core is tested against and the baseline in benchmarks. It implements the
conventions of ``fastppl-conventions.md`` exactly; where KenLM's ``lmplz`` had to be matched digit
for digit, the conventions pinned against its ARPA output are stated in the docstrings below
(see :class:`ReferenceModel` and :meth:`ReferenceModel.to_arpa_entries`).

It imports nothing from ``fastppl._core`` and can be loaded by path before the package is built.

Units: :meth:`ReferenceModel.prob` is a probability, :meth:`ReferenceModel.logprob` a natural log,
:meth:`ReferenceModel.to_arpa_entries` yields log10 values (the ARPA unit).

>>> m = ReferenceModel([["a", "b"], ["a"]], order=2, smoothing="mle")
>>> m.prob("b", ["a"])
0.5
"""

from __future__ import annotations

import math
import re
import struct
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"

SMOOTHINGS = (
    "mle",
    "additive",
    "laplace",
    "lidstone",
    "witten_bell",
    "absolute_discounting",
    "kneser_ney",
    "modified_kneser_ney",
    "stupid_backoff",
)

INTERPOLATED = ("witten_bell", "absolute_discounting", "kneser_ney", "modified_kneser_ney")

# Chen & Goodman / KenLM --discount_fallback values (D1, D2, D3+).
FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)

Ngram = tuple[str, ...]


class EmptyCorpusError(ValueError):
    """Raised when a corpus used for fitting or evaluation holds no token at all."""


class BadDiscountError(ValueError):
    """Raised when a modified Kneser-Ney discount cannot be computed or lies outside [0, j]."""


# --------------------------------------------------------------------------------------------
# Text pipeline pieces (the same steps the fast path implements natively)
# --------------------------------------------------------------------------------------------

# The ASCII whitespace of Rust's `str::split_ascii_whitespace` (U+000B is *not* in it).
ASCII_WHITESPACE = " \t\n\x0c\r"
TERMINATORS = ".!?"


def drop_lines(text: str, prefixes: Sequence[str] = ("#", "%")) -> str:
    """Drop every line that starts with one of ``prefixes``; the other lines keep their newlines.

    >>> drop_lines("# title\\nsome text\\n% header\\nmore\\n")
    'some text\\nmore\\n'
    """
    return "".join(
        line for line in text.splitlines(keepends=True) if not line.startswith(tuple(prefixes))
    )


def lowercase(text: str) -> str:
    """Lowercase with Python's full Unicode rules (``str.lower``).

    >>> lowercase("Dom Casmurro")
    'dom casmurro'
    """
    return text.lower()


def whitespace_tokenize(text: str) -> list[str]:
    """Split on runs of ASCII whitespace (space, tab, LF, FF, CR), like Rust's
    ``split_ascii_whitespace``; no empty token is ever produced.

    >>> whitespace_tokenize(" a  b\\tc\\n")
    ['a', 'b', 'c']
    """
    tokens: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch in ASCII_WHITESPACE:
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        tokens.append("".join(current))
    return tokens


def is_terminator(token: str) -> bool:
    """The tutorial's sentence-end test, verbatim: ``token in ".!?"`` (a substring test).

    So ".", "!", "?", ".!", "!?" and ".!?" end a sentence, "?!" and "..." do not; the empty
    string would, but tokens are never empty.

    >>> [is_terminator(t) for t in [".", "!?", "?!", "...", "a"]]
    [True, True, False, False, False]
    """
    return token in TERMINATORS


def split_by_terminators(tokens: Iterable[str]) -> list[list[str]]:
    """Split a token stream into sentences, each ending after a terminator token
    (:func:`is_terminator`); trailing tokens without a terminator form a last sentence.

    >>> split_by_terminators(["a", ".", "b", "!?", "c"])
    [['a', '.'], ['b', '!?'], ['c']]
    """
    sentences: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        current.append(token)
        if is_terminator(token):
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def text_to_sentences(
    text: str,
    split: str = "lines",
    *,
    drop_prefixes: Sequence[str] = (),
    lower: bool = False,
) -> list[list[str]]:
    """The text pipeline: drop lines by prefix, lowercase, tokenize on whitespace, segment.

    Args:
        text: the raw text.
        split: ``"lines"`` (one sentence per line, KenLM's input format), ``"terminators"``
            (:func:`split_by_terminators` over the whole token stream) or ``"none"`` (the whole
            text is one sentence).
        drop_prefixes: lines starting with any of these are dropped first.
        lower: lowercase the text.

    Returns:
        The sentences, empty ones dropped.

    >>> text_to_sentences("A b .\\n# x\\nc ! d\\n", "terminators", drop_prefixes="#", lower=True)
    [['a', 'b', '.'], ['c', '!'], ['d']]
    """
    if drop_prefixes:
        text = drop_lines(text, tuple(drop_prefixes))
    if lower:
        text = lowercase(text)
    if split == "lines":
        sentences = [whitespace_tokenize(line) for line in text.split("\n")]
    elif split == "terminators":
        sentences = split_by_terminators(whitespace_tokenize(text))
    elif split == "none":
        sentences = [whitespace_tokenize(text)]
    else:
        raise ValueError(f"split must be 'lines', 'terminators' or 'none', not {split!r}")
    return [s for s in sentences if s]


# --------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------


def pad(sentence: Sequence[str], bos_eos: bool = True) -> Ngram:
    """``<s> w1 ... wk </s>`` when ``bos_eos`` (one ``<s>``, never N-1 of them), else ``w1 ... wk``.

    >>> pad(["a", "b"])
    ('<s>', 'a', 'b', '</s>')
    """
    return (BOS, *sentence, EOS) if bos_eos else tuple(sentence)


def count_ngrams(
    sentences: Iterable[Sequence[str]], order: int, bos_eos: bool = True
) -> list[Counter[Ngram]]:
    """Raw n-gram counts of orders 1..``order``.

    For each predicted position of a padded sentence (every position but the leading ``<s>``) and
    each m, the window of m tokens ending there is counted if it lies inside the padded sentence:
    ``<s> a`` is a bigram, ``<s> <s> a`` does not exist, ``<s>`` is never a unigram, n-grams never
    cross sentences. Empty sentences are skipped.

    Returns:
        A list whose element m-1 is the Counter of m-grams (keys: tuples of str).

    >>> c = count_ngrams([["a", "b"]], 2)
    >>> sorted(c[1].items())
    [(('<s>', 'a'), 1), (('a', 'b'), 1), (('b', '</s>'), 1)]
    """
    if order < 1:
        raise ValueError("order must be >= 1")
    counts: list[Counter[Ngram]] = [Counter() for _ in range(order)]
    first = 1 if bos_eos else 0
    for sentence in sentences:
        if not sentence:
            continue
        padded = pad(sentence, bos_eos)
        for i in range(first, len(padded)):
            for m in range(1, order + 1):
                start = i - m + 1
                if start < 0:
                    break
                counts[m - 1][padded[start : i + 1]] += 1
    return counts


def adjusted_counts(counts: list[Counter[Ngram]]) -> list[Counter[Ngram]]:
    """Kneser-Ney adjusted counts, KenLM's rule (``lm/builder/adjust_counts.cc``).

    The highest order keeps its raw counts. Below it, a(g) = N1+(. g): the number of distinct
    tokens v (``<s>`` included) with c(v g) > 0 at order |g|+1; but an n-gram that starts with
    ``<s>`` has no left extension and keeps its raw count. An n-gram with no left extension
    (only possible when bos_eos=False, at a sentence start) gets a(g) = 0 and stays in the table.

    >>> a = adjusted_counts(count_ngrams([["a", "a"]], 2))
    >>> sorted(a[0].items())
    [(('</s>',), 1), (('a',), 2)]
    """
    order = len(counts)
    adjusted: list[Counter[Ngram]] = [Counter() for _ in range(order)]
    adjusted[order - 1] = Counter(counts[order - 1])
    for m in range(1, order):  # m = order of g; extensions live in counts[m] (order m+1)
        continuation: Counter[Ngram] = Counter()
        for longer in counts[m]:
            continuation[longer[1:]] += 1
        table: Counter[Ngram] = Counter()
        for gram, raw in counts[m - 1].items():
            table[gram] = raw if gram[0] == BOS else continuation[gram]
        adjusted[m - 1] = table
    return adjusted


def to_float32(x: float) -> float:
    """Round a Python float to the nearest IEEE float32 (returned as a float).

    >>> to_float32(0.1)
    0.10000000149011612
    """
    return struct.unpack("f", struct.pack("f", x))[0]


def count_of_counts(table: Counter[Ngram], upto: int = 4) -> list[int]:
    """[n0, n1, ..., n_upto]: how many n-grams of ``table`` have count exactly j.

    >>> count_of_counts(Counter({("a",): 1, ("b",): 1, ("c",): 3}))
    [0, 2, 0, 1, 0]
    """
    n = [0] * (upto + 1)
    for c in table.values():
        if c <= upto:
            n[c] += 1
    return n


def mkn_discounts(n: Sequence[int]) -> tuple[float, float, float]:
    """Modified Kneser-Ney discounts (D1, D2, D3+) from count-of-counts n[1..4], as lmplz does.

    Y = n1 / (n1 + 2 n2) and Dj = j - (j+1) Y n_{j+1} / n_j (Chen & Goodman eq. 26), every
    operation in float32 (n1 + 2 n2 is formed in float64 first, then rounded, like lmplz).

    Raises:
        BadDiscountError: if some n_j (j = 1..3) is 0 or a discount lies outside [0, j].

    >>> [round(d, 6) for d in mkn_discounts([0, 100, 40, 20, 10])]
    [0.555556, 1.166667, 1.888889]
    """
    f = to_float32
    for j in (1, 2, 3):
        if n[j] == 0:
            raise BadDiscountError(f"no n-gram with adjusted count {j}; cannot compute discounts")
    y = f(f(n[1]) / f(n[1] + 2.0 * n[2]))
    discounts = []
    for j in (1, 2, 3):
        # float32: j - (((j+1) * y) * n_{j+1}) / n_j, rounding after every operation.
        d = f(f(j) - f(f(f(f(j + 1) * y) * f(n[j + 1])) / f(n[j])))
        if not 0.0 <= d <= j:
            raise BadDiscountError(f"discount D{j} = {d} out of range [0, {j}]")
        discounts.append(d)
    return (discounts[0], discounts[1], discounts[2])


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


class ReferenceModel:
    """An n-gram model estimated from sentences, one estimator of fastppl's spec.

    Conventions pinned against KenLM lmplz (modified_kneser_ney reproduces its ARPA files to
    1e-5 in log10):

    * Counts: KenLM pads a sentence with N-1 ``<s>``, but n-grams with ``<s>`` beyond their first
      position are dropped before output and before the count-of-counts, so the counted n-grams
      are exactly those of :func:`count_ngrams` (one ``<s>``). Adjusted counts:
      :func:`adjusted_counts` (``<s>``-initial n-grams keep raw counts at every order).
    * Count-of-counts of order m (for the discounts) are over every counted m-gram with its
      adjusted count (raw at the top order), ``<s>``-initial n-grams included. ``<s>`` and
      ``<unk>`` are unigrams of lmplz with adjusted count 0, so they never enter n1..n4.
    * Discounts: :func:`mkn_discounts` (float32), one triple per order.
    * p(w|h) = (a(hw) - D(a(hw)))/a(h.) + gamma(h) p(w|h') for a(hw) > 0, gamma(h) p(w|h')
      otherwise; gamma(h) = (D1 N1(h.) + D2 N2(h.) + D3+ N3+(h.))/a(h.); a(h.) = sum_w a(hw)
      over the adjusted counts of order |h|+1 (for h = (): all unigrams, ``</s>`` included).
      An unseen context (a(h.) = 0) gives p(w|h'). The unigrams end in the uniform 1/|V|, |V|
      counting ``<unk>`` and ``</s>``, not ``<s>``: p(<unk>) = gamma(())/|V|.
    * ``<s>`` is never predicted: :meth:`prob` refuses it; in ARPA it has log10 prob 0.

    Args:
        sentences: training sentences (lists of str tokens); empty ones are skipped.
        order: N >= 1.
        smoothing: one of :data:`SMOOTHINGS`.
        bos_eos: pad with ``<s>``/``</s>`` (see :func:`pad`).
        k: additive constant (``additive`` and its synonym ``lidstone``; ``laplace`` forces 1).
        discount: D for ``absolute_discounting`` and ``kneser_ney`` (0 < D <= 1).
        alpha: back-off factor of ``stupid_backoff``.
        discount_fallback: on bad modified-KN discounts use (0.5, 1, 1.5) instead of raising.

    >>> m = ReferenceModel([["a", "b", "a"]], order=2, smoothing="laplace")
    >>> sorted(m.vocab)
    ['</s>', '<unk>', 'a', 'b']
    >>> m.prob("b", ["a"])  # (1 + 1) / (2 + 4)
    0.3333333333333333
    """

    def __init__(
        self,
        sentences: Iterable[Sequence[str]],
        order: int = 3,
        smoothing: str = "modified_kneser_ney",
        bos_eos: bool = True,
        *,
        k: float = 1.0,
        discount: float = 0.75,
        alpha: float = 0.4,
        discount_fallback: bool = False,
    ) -> None:
        if smoothing not in SMOOTHINGS:
            raise ValueError(f"unknown smoothing {smoothing!r}; expected one of {SMOOTHINGS}")
        if order < 1:
            raise ValueError("order must be >= 1")
        if smoothing in ("additive", "lidstone") and not k > 0:
            raise ValueError("k must be > 0")
        if smoothing in ("absolute_discounting", "kneser_ney") and not 0 < discount <= 1:
            raise ValueError("discount must be in (0, 1]")
        self.order = order
        self.smoothing = smoothing
        self.bos_eos = bos_eos
        self.k = 1.0 if smoothing == "laplace" else k
        self.discount = discount
        self.alpha = alpha
        self.discount_fallback = discount_fallback

        sentences = [list(s) for s in sentences if len(s) > 0]
        if not sentences:
            raise EmptyCorpusError("the training corpus holds no token")
        if bos_eos:
            for s in sentences:
                if BOS in s or EOS in s:
                    raise ValueError(f"{BOS} and {EOS} are reserved when bos_eos=True")

        #: raw counts, element m-1 = m-grams
        self.counts: list[Counter[Ngram]] = count_ngrams(sentences, order, bos_eos)
        #: the counts the estimator uses (adjusted below the top order for (modified) KN)
        if smoothing in ("kneser_ney", "modified_kneser_ney"):
            self.model_counts = adjusted_counts(self.counts)
        else:
            self.model_counts = self.counts

        self.vocab: set[str] = {g[0] for g in self.counts[0]} | {UNK}
        if bos_eos:
            self.vocab.add(EOS)
        self.vocab_size = len(self.vocab)
        self.num_tokens = sum(self.counts[0].values())

        # Context statistics per order m (index m-1): h -> [c(h.), N1, N2, N3+, N1+].
        self._context_stats: list[dict[Ngram, list[int]]] = []
        for table in self.model_counts:
            stats: dict[Ngram, list[int]] = {}
            for gram, c in table.items():
                s = stats.setdefault(gram[:-1], [0, 0, 0, 0, 0])
                s[0] += c
                if c > 0:
                    s[min(c, 3)] += 1
                    s[4] += 1
            self._context_stats.append(stats)

        #: modified KN: (D1, D2, D3+) per order (index m-1); KN / abs. discounting: (D, D, D)
        self.discounts: list[tuple[float, float, float]] = []
        if smoothing == "modified_kneser_ney":
            for m, table in enumerate(self.model_counts, start=1):
                try:
                    self.discounts.append(mkn_discounts(count_of_counts(table)))
                except BadDiscountError as err:
                    if not discount_fallback:
                        raise BadDiscountError(f"order {m}: {err}") from err
                    self.discounts.append(FALLBACK_DISCOUNTS)
        elif smoothing in ("kneser_ney", "absolute_discounting"):
            self.discounts = [(discount, discount, discount)] * order

    # ---------------------------------------------------------------- probabilities

    def _clip(self, context: Sequence[str]) -> Ngram:
        """The last N-1 tokens of ``context``, OOV tokens mapped to ``<unk>``."""
        tail = tuple(context)[max(0, len(context) - (self.order - 1)) :] if self.order > 1 else ()
        return tuple(t if t in self.vocab or t == BOS else UNK for t in tail)

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """p(word | context) (a probability; a score for ``stupid_backoff``).

        The context is clipped to its last N-1 tokens; OOV tokens (word or context) are mapped to
        ``<unk>``. ``<s>`` cannot be predicted.

        >>> ReferenceModel([["a", "b"]], order=2, smoothing="mle").prob("b", ["<s>", "a"])
        1.0
        """
        if word == BOS:
            raise ValueError(f"{BOS} is context only and is never predicted")
        if word not in self.vocab:
            word = UNK
        return self._prob(word, self._clip(context))

    def logprob(self, word: str, context: Sequence[str] = ()) -> float:
        """Natural log of :meth:`prob` (``-inf`` for probability 0).

        >>> ReferenceModel([["a"]], order=1, smoothing="mle").logprob("a")
        -0.6931471805599453
        """
        p = self.prob(word, context)
        return math.log(p) if p > 0 else -math.inf

    def _stats(self, context: Ngram) -> list[int]:
        return self._context_stats[len(context)].get(context, [0, 0, 0, 0, 0])

    def _prob(self, word: str, context: Ngram) -> float:
        """p(word | context) for an in-vocabulary word and a clipped context."""
        s = self.smoothing
        m = len(context) + 1
        c = self.model_counts[m - 1].get((*context, word), 0)
        stats = self._stats(context)
        total = stats[0]
        if s == "mle":
            return c / total if total > 0 else 0.0
        if s in ("additive", "laplace", "lidstone"):
            return (c + self.k) / (total + self.k * self.vocab_size)
        if s == "stupid_backoff":
            if c > 0:
                return c / total
            if not context:
                return 0.0
            return self.alpha * self._prob(word, context[1:])
        # The interpolated family: recursion ending in the uniform distribution.
        lower = self._prob(word, context[1:]) if context else 1.0 / self.vocab_size
        if total == 0:
            return lower
        n1plus = stats[4]
        if s == "witten_bell":
            return (c + n1plus * lower) / (total + n1plus)
        d1, d2, d3 = self.discounts[m - 1]
        discounted = max(c - (d1, d2, d3)[min(c, 3) - 1], 0.0) if c > 0 else 0.0
        if s == "modified_kneser_ney":
            gamma = (d1 * stats[1] + d2 * stats[2] + d3 * stats[3]) / total
        else:  # absolute_discounting, kneser_ney: one discount D
            gamma = d1 * n1plus / total
        return discounted / total + gamma * lower

    def gamma(self, context: Sequence[str]) -> float:
        """The interpolation weight of the lower order for ``context`` (KenLM's ARPA backoff).

        0 ... 1 for a seen context; 1.0 for an unseen one (its mass all goes to the lower order).
        Defined for the interpolated estimators.

        >>> m = ReferenceModel([["a", "b"]], order=2, smoothing="witten_bell")
        >>> m.gamma(["a"])  # N1+(a.) / (c(a.) + N1+(a.))
        0.5
        """
        context = tuple(context)
        stats = self._stats(context)
        total = stats[0]
        if total == 0:
            return 1.0
        if self.smoothing == "witten_bell":
            return stats[4] / (total + stats[4])
        if self.smoothing == "modified_kneser_ney":
            d1, d2, d3 = self.discounts[len(context)]
            return (d1 * stats[1] + d2 * stats[2] + d3 * stats[3]) / total
        if self.smoothing in ("absolute_discounting", "kneser_ney"):
            return self.discounts[len(context)][0] * stats[4] / total
        raise ValueError(f"gamma is not defined for {self.smoothing}")

    # ---------------------------------------------------------------- ARPA view

    def to_arpa_entries(self) -> Iterator[tuple[Ngram, float, float | None]]:
        """Yield (n-gram, log10 probability, log10 backoff) as lmplz writes them in ARPA.

        The n-grams are every counted n-gram (:func:`count_ngrams`), plus the unigrams
        ``<unk>`` (first) and ``<s>``. The probability of (h, w) is the interpolated p(w|h); the
        backoff of g is log10 gamma(g) when g is a context at order |g|+1, 0.0 for the other
        n-grams below the top order (those ending in ``</s>``; ``<unk>``), and None at the top
        order. ``<s>`` gets log10 probability 0 (probability 1, lmplz's convention; SRILM writes
        -99). Like lmplz, a log10 probability is clipped to at most 0.

        >>> m = ReferenceModel([["a"]], order=2, smoothing="modified_kneser_ney",
        ...                    discount_fallback=True)
        >>> [e[0] for e in m.to_arpa_entries()][:2]
        [('<unk>',), ('<s>',)]
        """
        if self.smoothing not in INTERPOLATED:
            raise ValueError("to_arpa_entries needs an interpolated estimator")
        top = self.order

        def backoff(gram: Ngram) -> float | None:
            if len(gram) == top:
                return None
            if gram in self._context_stats[len(gram)]:
                return math.log10(self.gamma(gram))
            return 0.0

        yield (UNK,), math.log10(self._prob(UNK, ())), backoff((UNK,))
        if self.bos_eos:
            yield (BOS,), 0.0, backoff((BOS,))
        lower: dict[Ngram, float] = {}
        for m in range(1, top + 1):
            current: dict[Ngram, float] = {}
            for gram in self.counts[m - 1]:
                context = gram[:-1]
                # Bottom-up version of _prob: the suffix's probability is already known.
                stats = self._stats(context)
                c = self.model_counts[m - 1][gram]
                below = lower[gram[1:]] if m > 1 else 1.0 / self.vocab_size
                if self.smoothing == "witten_bell":
                    p = (c + stats[4] * below) / (stats[0] + stats[4])
                else:
                    d = self.discounts[m - 1]
                    discounted = max(c - d[min(c, 3) - 1], 0.0) if c > 0 else 0.0
                    p = discounted / stats[0] + self.gamma(context) * below
                current[gram] = p
                yield gram, min(0.0, math.log10(p)), backoff(gram)
            lower = current

    # ---------------------------------------------------------------- evaluation

    def sentence_logprob(self, sentence: Sequence[str]) -> float:
        """Natural-log probability of a sentence (``</s>`` included when bos_eos; OOVs as
        ``<unk>``).

        >>> m = ReferenceModel([["a", "b"]], order=2, smoothing="mle")
        >>> m.sentence_logprob(["a", "b"])
        0.0
        """
        return self.evaluate([sentence], oov="unk")[0]

    def evaluate(
        self,
        sentences: Iterable[Sequence[str]],
        oov: str = "unk",
        *,
        allow_unnormalized: bool = False,
    ) -> tuple[float, int, int]:
        """Score sentences: (log_prob in natural log, num_tokens, num_oov).

        Tokens counted: every predicted token (one ``</s>`` per sentence when bos_eos, never
        ``<s>``). ``oov="unk"``: an OOV is scored as ``<unk>`` and counted; ``"skip"``: its
        probability and the token are left out, but ``<unk>`` stays in the history of the next
        tokens (KenLM's "excluding OOVs"); ``"error"``: raise KeyError naming the word and where.
        num_oov counts the OOV tokens in both "unk" and "skip" modes. The natural-log
        probabilities are summed exactly (``math.fsum``, correctly rounded): a plain float64 sum
        over 630k tokens drifts by ~5e-12 relative in the perplexity.

        >>> m = ReferenceModel([["a", "b"]], order=2, smoothing="laplace")
        >>> m.evaluate([["a", "z"]], oov="skip")[1:]
        (2, 1)
        """
        if oov not in ("unk", "skip", "error"):
            raise ValueError("oov must be 'unk', 'skip' or 'error'")
        if self.smoothing == "stupid_backoff" and not allow_unnormalized:
            raise ValueError(
                "stupid_backoff gives a score, not a probability: pass allow_unnormalized=True"
            )
        log_probs: list[float] = []  # summed exactly (math.fsum) at the end
        num_tokens = 0
        num_oov = 0
        first = 1 if self.bos_eos else 0
        for s_index, sentence in enumerate(sentences):
            if not sentence:
                continue
            padded = pad(sentence, self.bos_eos)
            mapped = tuple(
                t if (t in self.vocab and t != UNK) or (i < first) else UNK
                for i, t in enumerate(padded)
            )
            for i in range(first, len(padded)):
                is_oov = mapped[i] == UNK
                if is_oov:
                    num_oov += 1
                    if oov == "error":
                        raise KeyError(
                            f"out-of-vocabulary word {padded[i]!r} in sentence {s_index}, "
                            f"token {i - first}"
                        )
                    if oov == "skip":
                        continue
                context = mapped[max(0, i - self.order + 1) : i]
                p = self._prob(mapped[i], context)
                log_probs.append(math.log(p) if p > 0 else -math.inf)
                num_tokens += 1
        if num_tokens == 0 and num_oov == 0:
            raise EmptyCorpusError("the evaluation corpus holds no token")
        return math.fsum(log_probs), num_tokens, num_oov

    def perplexity(self, sentences: Iterable[Sequence[str]], oov: str = "unk") -> float:
        """exp(-log_prob / num_tokens) of :meth:`evaluate`; ``inf`` (with a warning) when some
        token has probability 0.

        >>> m = ReferenceModel([["a", "b"]], order=1, smoothing="mle")
        >>> round(m.perplexity([["a", "b"]]), 12)
        3.0
        """
        log_prob, num_tokens, _ = self.evaluate(sentences, oov)
        return perplexity_from_logprob(log_prob, num_tokens)


def perplexity_from_logprob(log_prob: float, num_tokens: int) -> float:
    """exp(-log_prob / num_tokens), ``log_prob`` a natural log; ``inf`` (with a warning) if
    ``log_prob`` is ``-inf``.

    >>> round(perplexity_from_logprob(-3 * math.log(6), 3), 12)
    6.0
    """
    if num_tokens <= 0:
        raise EmptyCorpusError("no token to compute a perplexity over")
    if log_prob == -math.inf:
        warnings.warn("a token has probability 0: perplexity is inf", stacklevel=2)
        return math.inf
    return math.exp(-log_prob / num_tokens)


def perplexity_of_probs(probs: Iterable[float]) -> float:
    """Perplexity of a sequence of per-token probabilities: exp(-mean ln p).

    >>> round(perplexity_of_probs([1 / 6] * 10), 12)
    6.0
    """
    probs = list(probs)
    log_prob = sum(math.log(p) if p > 0 else -math.inf for p in probs)
    return perplexity_from_logprob(log_prob, len(probs))


#: CCNet's Unicode punctuation map (``cc_net/text_normalizer.py``), character by character.
CCNET_PUNCT = {
    "\uff0c": ",", "\u3002": ".", "\u3001": ",", "\u201e": '"', "\u201d": '"', "\u201c": '"',
    "\u00ab": '"', "\u00bb": '"', "\uff11": '"', "\u300d": '"', "\u300c": '"', "\u300a": '"',
    "\u300b": '"', "\u00b4": "'", "\u2236": ":", "\uff1a": ":", "\uff1f": "?", "\uff01": "!",
    "\uff08": "(", "\uff09": ")", "\uff1b": ";", "\u2013": "-", "\u2014": " - ", "\uff0e": ". ",
    "\uff5e": "~", "\u2019": "'", "\u2026": "...", "\u2501": "-", "\u3008": "<", "\u3009": ">",
    "\u3010": "[", "\u3011": "]", "\uff05": "%", "\u25ba": "-",
}  # fmt: skip
_CCNET_DIGIT = re.compile(r"\d")
_CCNET_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def ccnet_normalize(
    line: str, accent: bool = True, case: bool = True, numbers: bool = True, punct: int = 1
) -> str:
    """CCNet's line normalizer, one step after the other as CCNet runs them (the oracle of
    ``fastppl.documents.normalize``, and the baseline of its benchmark).

    >>> ccnet_normalize(" Ação 12 — fim\\x07 ")
    'acao 00  -  fim'
    """
    line = line.strip()
    if not line:
        return line
    if case:
        line = line.lower()
    if accent:
        nfd = unicodedata.normalize("NFD", line)
        line = "".join(c for c in nfd if unicodedata.category(c) != "Mn")
    if numbers:
        line = _CCNET_DIGIT.sub("0", line)
    if punct == 1:
        line = "".join(CCNET_PUNCT.get(c, c) for c in line)
    elif punct == 2:
        line = "".join(c for c in line if c not in CCNET_PUNCT)
    return _CCNET_CONTROL.sub("", line)


def ccnet_document_perplexities(
    model: object, documents: Iterable[str], sp: object = None, normalize: bool = True
) -> list[float]:
    """CCNet's ``DocLM`` loop: each line of each document normalized, cut into SentencePiece
    pieces when ``sp`` is given, scored by ``model.score(line)`` (the ``kenlm`` module's API,
    log10); ``10 ** (-sum log10 p / sum(words + 1))`` per document.

    >>> class Uniform:  # log10 p = -1 for every word and </s>
    ...     def score(self, line):
    ...         return -1.0 * (len(line.split()) + 1)
    >>> ccnet_document_perplexities(Uniform(), ["a b\\nc"])
    [10.0]
    """
    out = []
    for document in documents:
        log_score, length = 0.0, 0
        for line in document.split("\n"):
            if normalize:
                line = ccnet_normalize(line)
            if sp is not None:
                line = " ".join(sp.encode_as_pieces(line))  # type: ignore[attr-defined]
            log_score += model.score(line)  # type: ignore[attr-defined]
            length += len(line.split()) + 1
        out.append(10.0 ** (-log_score / length))
    return out
