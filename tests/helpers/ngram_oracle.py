"""A brute-force, dictionary-based implementation of the conventions, for property tests.

Deliberately naive (every statistic recomputed from a ``collections.Counter`` of windows) and
written from ``fastppl-conventions.md`` only, so that it shares no code or shortcut with the core.
Probabilities are linear (not logs) and computed in float64.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


def padded(sentence: Sequence[str], bos_eos: bool) -> list[str]:
    """The sentence as the model sees it: ``<s> w1 .. wk </s>`` or ``w1 .. wk``."""
    return [BOS, *sentence, EOS] if bos_eos else list(sentence)


def count_windows(
    sentences: Sequence[Sequence[str]], order: int, bos_eos: bool
) -> Counter[tuple[str, ...]]:
    """Every window of 1..order tokens ending at a predicted token, inside its padded sentence."""
    counts: Counter[tuple[str, ...]] = Counter()
    first = 1 if bos_eos else 0
    for sentence in sentences:
        if not sentence:
            continue
        p = padded(sentence, bos_eos)
        for i in range(first, len(p)):
            for m in range(1, order + 1):
                if i - m + 1 < 0:
                    break
                counts[tuple(p[i - m + 1 : i + 1])] += 1
    return counts


def mkn_discounts(n: Sequence[int]) -> tuple[float, float, float] | None:
    """lmplz's discounts from count-of-counts ``n[1..4]`` in float32; None when out of range."""
    f32 = np.float32
    if any(n[j] == 0 for j in (1, 2, 3)):
        return None
    y = f32(n[1]) / f32(float(n[1]) + 2.0 * float(n[2]))
    out = []
    for j in (1, 2, 3):
        d = f32(j) - f32(j + 1) * y * f32(n[j + 1]) / f32(n[j])
        if not (0.0 <= d <= j):
            return None
        out.append(float(d))
    return (out[0], out[1], out[2])


class Oracle:
    """p(w | h) for the estimators of the conventions, straight from the formulas."""

    def __init__(
        self,
        sentences: Sequence[Sequence[str]],
        order: int,
        smoothing: str,
        bos_eos: bool = True,
        k: float = 1.0,
        discount: float = 0.75,
        alpha: float = 0.4,
        discount_fallback: bool = False,
        discounts: Sequence[tuple[float, float, float]] | None = None,
    ) -> None:
        self.order, self.smoothing, self.bos_eos = order, smoothing, bos_eos
        self.k = 1.0 if smoothing == "laplace" else k
        self.discount, self.alpha = discount, alpha
        sentences = [list(s) for s in sentences if s]
        self.counts = count_windows(sentences, order, bos_eos)
        words = {w for s in sentences for w in s}
        self.vocab = sorted(words | {UNK} | ({EOS} if bos_eos else set()))
        self.vocab_size = len(self.vocab)
        self.num_predicted = sum(c for g, c in self.counts.items() if len(g) == 1)
        kn = smoothing in ("kneser_ney", "modified_kneser_ney")
        self.eff: dict[tuple[str, ...], int] = dict(self.counts)
        if kn:
            left = Counter(g[1:] for g in self.counts if len(g) >= 2)
            for g in self.counts:
                if len(g) < order and g[0] != BOS:
                    self.eff[g] = left[g]
        # statistics of each context over the effective counts
        self.total: dict[tuple[str, ...], int] = defaultdict(int)
        self.nk: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for g, c in self.eff.items():
            h = g[:-1]
            self.total[h] += c
            if c > 0:
                self.nk[h][min(c, 3)] += 1
                self.nk[h][0] += 1  # N1+
        self.discounts: list[tuple[float, float, float]] = []
        if discounts is not None:  # imposed (to test the formulas apart from the discounts)
            self.discounts = [tuple(d) for d in discounts]
        elif smoothing == "modified_kneser_ney":
            for m in range(1, order + 1):
                n = [0] * 5
                for g, c in self.eff.items():
                    if len(g) == m and 1 <= c <= 4:
                        n[c] += 1
                d = mkn_discounts(n)
                if d is None:
                    if not discount_fallback:
                        raise ValueError(f"discounts of order {m} out of range: {n}")
                    d = (0.5, 1.0, 1.5)
                self.discounts.append(d)

    def context_of(self, context: Sequence[str]) -> tuple[str, ...]:
        """The last order-1 tokens of ``context``, OOVs mapped to ``<unk>``."""
        known = set(self.vocab) | {BOS}
        h = tuple(w if w in known else UNK for w in context)
        return h[max(0, len(h) - (self.order - 1)) :] if self.order > 1 else ()

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        w = word if word in self.vocab else UNK
        return self._p(w, self.context_of(context))

    def _p(self, w: str, h: tuple[str, ...]) -> float:
        s = self.smoothing
        c, total = self.eff.get((*h, w), 0), self.total.get(h, 0)
        if s == "mle":
            return c / total if total else 0.0
        if s in ("additive", "laplace"):
            if not total:
                return 1.0 / self.vocab_size
            return (c + self.k) / (total + self.k * self.vocab_size)
        if s == "stupid_backoff":
            if not h:
                return self.counts.get((w,), 0) / self.num_predicted
            if c > 0:
                return c / total
            return self.alpha * self._p(w, h[1:])
        lower = 1.0 / self.vocab_size if not h else self._p(w, h[1:])
        if total == 0:
            return lower
        n1p = self.nk[h][0]
        if s == "witten_bell":
            return (c + n1p * lower) / (total + n1p)
        if s in ("absolute_discounting", "kneser_ney"):
            d = self.discount
            return max(c - d, 0.0) / total + d * n1p / total * lower
        if s == "modified_kneser_ney":
            d1, d2, d3 = self.discounts[len(h)]
            dc = 0.0 if c == 0 else (d1, d2, d3)[min(c, 3) - 1]
            _, n1, n2, n3 = self.nk[h]
            gamma = (d1 * n1 + d2 * n2 + d3 * n3) / total
            return (c - dc) / total + gamma * lower
        raise ValueError(s)
