"""fastppl vs ``nltk.lm`` on real sentences: equal where NLTK is right, pinned where it is not.

NLTK is fitted on exactly fastppl's n-grams: the everygrams of the KenLM-style padded sentences
``["<s>", *s, "</s>"]`` (up to the order), minus the lone ``("<s>",)`` unigram (``<s>`` is context
only, never a predicted token). Each estimator is then

- equal to fastppl within 1e-9 where NLTK computes the textbook formula (MLE, Laplace, Lidstone);
- pinned exactly where it does not: we compute NLTK's number by NLTK's formula from our own counts,
  assert NLTK returns it, compute the conventional number, assert fastppl returns it, and assert
  the identity that links the two.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from fastppl import Corpus, NGramModel
from helpers.ngram_oracle import BOS, EOS, Oracle, count_windows

lm = pytest.importorskip("nltk.lm")
from nltk.lm.preprocessing import everygrams, pad_both_ends  # noqa: E402
from nltk.util import ngrams  # noqa: E402

NUM_TRAIN = 300  # sentences of machado-small.train.txt
TOL = 1e-9


@pytest.fixture(scope="module")
def lines(machado_train_head_path):
    with open(machado_train_head_path, encoding="utf-8") as f:
        return [line.split() for line in itertools.islice(f, NUM_TRAIN + 40)]


@pytest.fixture(scope="module")
def train(lines):
    return lines[:NUM_TRAIN]


@pytest.fixture(scope="module")
def heldout(lines):
    return lines[NUM_TRAIN:]


@pytest.fixture(scope="module")
def corpus(train):
    return Corpus.from_text(
        "\n".join(map(" ".join, train)), tokenizer="whitespace", sentences="lines"
    )


def nltk_fit(model, train, order, with_bos):
    """Fits an NLTK model on fastppl's n-grams; the vocabulary holds the words, ``</s>`` and
    ``<s>`` only if ``with_bos`` (NLTK adds ``<UNK>``)."""
    text = [[g for g in everygrams([BOS, *s, EOS], max_len=order) if g != (BOS,)] for s in train]
    vocab_text = [w for s in train for w in s] + [EOS] + ([BOS] if with_bos else [])
    model.fit(text, vocabulary_text=vocab_text)
    return model


def queries(train, heldout, order, seed=0):
    """(context, word) pairs: every position of some training and held-out sentences with its
    KenLM history (``<s>`` only at the start), plus random pairs (mostly unseen n-grams)."""
    out = []
    for s in train[:25] + heldout[:15]:
        p = [BOS, *s, EOS]
        for i in range(1, len(p)):
            out.append((tuple(p[max(0, i - order + 1) : i]), p[i]))
    rng = random.Random(seed)
    words = sorted({w for s in train for w in s})
    for _ in range(150):
        out.append((tuple(rng.choice(words) for _ in range(order - 1)), rng.choice([*words, EOS])))
    return out


@pytest.fixture(scope="module")
def counts(train):
    return {order: count_windows(train, order, True) for order in (2, 3)}


def test_nltk_sees_the_same_counts(train, corpus, counts):
    model = nltk_fit(lm.MLE(3), train, 3, with_bos=True)
    fast = NGramModel.fit(corpus, order=3, smoothing="mle")
    for g, c in counts[3].items():
        got = model.counts[g[0]] if len(g) == 1 else model.counts[list(g[:-1])][g[-1]]
        assert got == c == fast.count(g), g
    assert model.counts.unigrams.N() == sum(corpus.sentence_lengths() + 1)


# ---- equal ------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [2, 3])
def test_mle_equals_nltk(train, heldout, corpus, order):
    fast = NGramModel.fit(corpus, order=order, smoothing="mle")
    ref = nltk_fit(lm.MLE(order), train, order, with_bos=True)
    n_pos = 0
    for h, w in queries(train, heldout, order):
        p = fast.prob(w, h)
        assert p == pytest.approx(ref.score(w, h), abs=TOL), (h, w)
        n_pos += p > 0
    assert n_pos > 200  # the comparison is not all zeros


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize(
    ("smoothing", "params", "nltk_model"),
    [
        ("laplace", {}, lambda order: lm.Laplace(order)),
        ("additive", {"k": 0.5}, lambda order: lm.Lidstone(0.5, order)),
        ("lidstone", {"k": 0.1}, lambda order: lm.Lidstone(0.1, order)),
    ],
    ids=["laplace", "lidstone-0.5", "lidstone-0.1"],
)
def test_additive_equals_nltk_without_bos_in_its_vocabulary(
    train, heldout, corpus, order, smoothing, params, nltk_model
):
    fast = NGramModel.fit(corpus, order=order, smoothing=smoothing, **params)
    # <s> left out of NLTK's vocabulary so that len(vocab) == |V| (words, </s>, <UNK>); NLTK then
    # looks <s> up as <UNK> both when counting and when scoring: a consistent renaming, as <UNK>
    # occurs nowhere else. An OOV *context* word would also become <UNK> (= <s>) in NLTK: such
    # pairs are left out (an artefact of this setup, not a difference).
    ref = nltk_fit(nltk_model(order), train, order, with_bos=False)
    assert len(ref.vocab) == fast.vocab_size
    vocab = set(fast.vocab())
    compared = 0
    for h, w in queries(train, heldout, order):
        if not set(h) <= vocab:
            continue
        assert fast.prob(w, h) == pytest.approx(ref.score(w, h), abs=TOL), (h, w)
        compared += 1
    assert compared > 500


# ---- pinned differences -----------------------------------------------------------------------
def test_laplace_with_bos_in_nltk_vocabulary(train, corpus, counts):
    # NLTK's usual setup puts <s> in the vocabulary: its Laplace denominator is c(h.) + |V| + 1,
    # fastppl's c(h.) + |V| (<s> is never predicted, so it is not an outcome).
    fast = NGramModel.fit(corpus, order=2, smoothing="laplace")
    ref = nltk_fit(lm.Laplace(2), train, 2, with_bos=True)
    v = fast.vocab_size
    assert len(ref.vocab) == v + 1
    c = counts[2]
    total = sum(n for g, n in c.items() if g[0] == "o" and len(g) == 2)
    for w in ["dia", "que", EOS, "zzz-unseen"]:
        cw = c.get(("o", w), 0)
        assert ref.score(w, ["o"]) == pytest.approx((cw + 1) / (total + v + 1), rel=1e-12)
        assert fast.prob(w, ["o"]) == pytest.approx((cw + 1) / (total + v), rel=1e-12)


def raw_stats(c: Counter, h: tuple[str, ...]) -> tuple[int, int]:
    """c(h.) and N1+(h.) over the raw counts."""
    follow = [n for g, n in c.items() if len(g) == len(h) + 1 and g[:-1] == h]
    return sum(follow), len(follow)


def nltk_interpolated(c: Counter, order: int, kind: str, w: str, h: tuple[str, ...], d: float):
    """NLTK's InterpolatedLanguageModel.unmasked_score by NLTK's formulas, from raw counts.

    Returns (p, Gamma) where Gamma is the product of the interpolation weights down to the
    unigram level: p = (terms above the unigrams) + Gamma * p_unigram(w).
    """
    if not h:
        if kind == "kneser_ney":  # continuation probability N1+(. w) / N1+(. .), no discount
            bigrams = [g for g in c if len(g) == 2]
            return sum(1 for g in bigrams if g[1] == w) / len(bigrams), 1.0
        n = sum(v for g, v in c.items() if len(g) == 1)
        return c.get((w,), 0) / n, 1.0  # unsmoothed MLE: <unk> gets 0
    total, n1p = raw_stats(c, h)
    lower, gamma_lower = nltk_interpolated(c, order, kind, w, h[1:], d)
    if total == 0:
        return lower, gamma_lower
    cw = c.get((*h, w), 0)
    if kind == "witten_bell":
        gamma = n1p / (n1p + total)
        alpha = (1 - gamma) * cw / total
    elif kind == "absolute_discounting" or len(h) + 1 == order:
        alpha, gamma = max(cw - d, 0) / total, d * n1p / total
    else:  # KN below the top order: continuation counts over the order |h|+2
        left = [g for g in c if len(g) == len(h) + 2 and g[1:-1] == h]
        cont, tot = sum(1 for g in left if g[-1] == w), len(left)
        alpha, gamma = max(cont - d, 0) / tot, d * n1p / tot
    return alpha + gamma * lower, gamma * gamma_lower


def fastppl_unigram(c: Counter, kind: str, w: str, vocab_size: int, d: float) -> float:
    """The conventions' lowest level: interpolated with the uniform 1/|V|."""
    if kind == "kneser_ney":
        uni = Counter(g[1] for g in c if len(g) == 2)  # a(w) = N1+(. w)
    else:
        uni = Counter({g[0]: n for g, n in c.items() if len(g) == 1})
    total, n1p, cw = sum(uni.values()), len(uni), uni.get(w, 0)
    if kind == "witten_bell":
        return (cw + n1p / vocab_size) / (total + n1p)
    return max(cw - d, 0) / total + d * n1p / total / vocab_size


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize(
    ("kind", "nltk_model", "d"),
    [
        ("witten_bell", lambda o: lm.WittenBellInterpolated(o), 0.0),
        ("absolute_discounting", lambda o: lm.AbsoluteDiscountingInterpolated(o), 0.75),
        ("kneser_ney", lambda o: lm.KneserNeyInterpolated(o, discount=0.75), 0.75),
    ],
    ids=["witten_bell", "absolute_discounting", "kneser_ney"],
)
def test_interpolated_differ_only_in_the_unigram_level(
    train, heldout, corpus, counts, order, kind, nltk_model, d
):
    """NLTK's interpolated models stop at an unsmoothed unigram level (MLE for Witten-Bell and
    absolute discounting, so <unk> gets 0; the plain continuation probability for Kneser-Ney, no
    discount and no uniform term), where the conventions (and KenLM) interpolate the unigrams with
    the uniform 1/|V|. Above the unigrams both compute the same alpha and gamma, so exactly
    fastppl - NLTK = Gamma(h) * (p_fastppl(w) - p_NLTK(w)), Gamma the product of the weights."""
    params = {"discount": d} if kind != "witten_bell" else {}
    fast = NGramModel.fit(corpus, order=order, smoothing=kind, **params)
    oracle = Oracle(train, order, kind, **params)
    ref = nltk_fit(nltk_model(order), train, order, with_bos=True)
    c = counts[order]
    pairs = queries(train, heldout, order)
    if kind == "kneser_ney":
        # NLTK's KN is O(corpus) per query; a 2-word history is needed at order 3: with one <s>,
        # NLTK computes continuation counts of the context (<s>,) over trigrams (v, <s>, w) that
        # do not exist and divides by zero (see test_nltk_kn_sentence_start_divides_by_zero)
        pairs = [(h, w) for h, w in pairs if len(h) == order - 1][::4]
    differ = 0
    for h, w in pairs:
        mapped = tuple(x if x in ref.vocab else "<UNK>" for x in h)
        p_nltk, gamma = nltk_interpolated(
            c, order, kind, w if w in ref.vocab else "<UNK>", mapped, d
        )
        assert ref.score(w, h) == pytest.approx(p_nltk, rel=1e-12, abs=1e-15), (h, w)
        p_fast = fast.prob(w, h)
        assert p_fast == pytest.approx(oracle.prob(w, h), rel=1e-12), (h, w)
        uni_fast = fastppl_unigram(c, kind, w, fast.vocab_size, d)
        uni_nltk, _ = nltk_interpolated(c, order, kind, w, (), d)
        assert p_fast - p_nltk == pytest.approx(gamma * (uni_fast - uni_nltk), abs=1e-13), (h, w)
        differ += abs(p_fast - p_nltk) > 1e-9
    assert differ > len(pairs) // 2
    # an OOV word: 0 for NLTK's Witten-Bell / absolute discounting / KN, > 0 for fastppl
    h = ("<s>", "o")[-(order - 1) :]
    assert ref.score("zzz-unseen", h) == 0.0
    assert fast.prob("zzz-unseen", h) > 0.0


def test_nltk_kn_sentence_start_divides_by_zero(train, corpus):
    # order 3, history (<s>,) (the first word of a sentence with KenLM padding): NLTK looks for
    # continuation counts of (<s>,) among trigrams (v, <s>, w), finds none and divides by zero;
    # the conventions keep raw counts for <s>-initial n-grams (KenLM's rule)
    ref = nltk_fit(lm.KneserNeyInterpolated(3, discount=0.75), train[:50], 3, with_bos=True)
    with pytest.raises(ZeroDivisionError):
        ref.score("o", [BOS])
    fast = NGramModel.fit(Corpus.from_sentences(train[:50]), order=3, smoothing="kneser_ney")
    oracle = Oracle(train[:50], 3, "kneser_ney")
    assert fast.prob("o", [BOS]) == pytest.approx(oracle.prob("o", [BOS]), rel=1e-12)


def test_nltk_perplexity_predicts_extra_end_markers(train, corpus):
    # NLTK's usual evaluation pads with n-1 markers on both sides: for a trigram it scores the
    # k words, then </s> and a second </s> (k+2 predictions, the first with history <s> <s>);
    # fastppl (KenLM) predicts k+1 tokens, the first with history <s>.
    order = 3
    fast = NGramModel.fit(corpus, order=order, smoothing="laplace")
    ref = nltk_fit(lm.Laplace(order), train, order, with_bos=False)
    s = train[0]
    grams = list(ngrams(pad_both_ends(s, n=order), order))
    assert len(grams) == len(s) + 2 and grams[-1] == (s[-1], EOS, EOS)
    ppl_nltk = ref.perplexity(grams)
    expected = 2 ** -(sum(math.log2(ref.score(g[-1], g[:-1])) for g in grams) / len(grams))
    assert ppl_nltk == pytest.approx(expected, rel=1e-12)
    result = fast.evaluate(Corpus.from_sentences([s]))
    assert result.num_tokens == len(s) + 1
    kenlm_style = [(tuple([BOS, *s][max(0, i - 2) : i]), w) for i, w in enumerate([*s, EOS], 1)]
    assert result.log_prob == pytest.approx(
        sum(math.log(ref.score(w, h)) for h, w in kenlm_style), rel=1e-12
    )
    assert abs(ppl_nltk / result.perplexity - 1) > 1e-3
