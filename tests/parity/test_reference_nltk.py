"""The reference vs ``nltk.lm`` (NLTK 3.10) on real text.

NLTK is fed exactly the reference's n-grams (``count_ngrams``: one ``<s>``, one ``</s>``, every
window that ends at a predicted token) through ``NgramCounter.update``, with a vocabulary of the
training tokens plus ``</s>`` (NLTK's unk label set to ``<unk>``), and queried with
``unmasked_score`` after the reference's own OOV masking. Then MLE, Laplace and Lidstone agree to
1e-12, and so does each interpolation step (``alpha_gamma``) of Witten-Bell, absolute
discounting and Kneser-Ney. Where NLTK's numbers differ, the test computes NLTK's number by
NLTK's own formula, asserts equality to it, and asserts that it differs from the reference.
"""

from __future__ import annotations

import lzma
import math
import random
from functools import cache

import pytest
from nltk.lm import (
    MLE,
    AbsoluteDiscountingInterpolated,
    KneserNeyInterpolated,
    Laplace,
    Lidstone,
    Vocabulary,
    WittenBellInterpolated,
)
from nltk.lm.preprocessing import pad_both_ends, padded_everygram_pipeline
from nltk.util import ngrams

from helpers.reference_loader import reference as ref
from helpers.shared_data import fixture_path

BOS, EOS, UNK = ref.BOS, ref.EOS, ref.UNK


@cache
def corpus(n_train: int = 300, n_test: int = 60) -> tuple[list[list[str]], list[list[str]]]:
    with lzma.open(
        fixture_path("machado-small.train.head-2500.txt.xz"), "rt", encoding="utf-8"
    ) as f:
        lines = [line.split() for line in f]
    return lines[:n_train], lines[n_train : n_train + n_test]


def kenlm_style_ngram_text(sentences, order):
    """Per sentence, the reference's n-grams (every order), as NLTK's counter expects them."""
    for s in sentences:
        padded = ref.pad(s)
        yield [
            padded[i - m + 1 : i + 1]
            for i in range(1, len(padded))
            for m in range(1, order + 1)
            if i - m + 1 >= 0
        ]


def nltk_model(cls, sentences, order, *args, vocab_extra=(), **kwargs):
    words = [w for s in sentences for w in s] + [EOS, *vocab_extra]
    vocab = Vocabulary(words, unk_cutoff=1, unk_label=UNK)
    lm = cls(*args, order=order, vocabulary=vocab, **kwargs)
    lm.counts.update(kenlm_style_ngram_text(sentences, order))
    return lm


def queries(model, sentences, order, limit=None):
    """(word, context) for every predicted token of ``sentences``, OOVs masked as ``<unk>``."""
    out = []
    for s in sentences:
        padded = [t if t in model.vocab or t == BOS else UNK for t in ref.pad(s)]
        for i in range(1, len(padded)):
            out.append((padded[i], tuple(padded[max(0, i - order + 1) : i])))
    if limit is not None:
        out = random.Random(0).sample(out, min(limit, len(out)))
    return out


ORDERS = [1, 2, 3]


# ------------------------------------------------------------------ equal to NLTK


@pytest.mark.parametrize("order", ORDERS)
def test_counts_match_nltk_counter(order):
    train, _ = corpus()
    m = ref.ReferenceModel(train, order=order, smoothing="mle")
    lm = nltk_model(MLE, train, order)
    for n in range(1, order + 1):
        if n == 1:
            nltk_counts = dict(lm.counts.unigrams)
            mine = {g[0]: c for g, c in m.counts[0].items()}
        else:
            nltk_counts = {
                (*ctx, w): c for ctx, fd in lm.counts[n].items() for w, c in fd.items() if c
            }
            mine = dict(m.counts[n - 1])
        assert nltk_counts == mine


@pytest.mark.parametrize("order", ORDERS)
def test_mle_equals_nltk(order):
    train, test = corpus()
    m = ref.ReferenceModel(train, order=order, smoothing="mle")
    lm = nltk_model(MLE, train, order)
    qs = queries(m, train[:40] + test, order)
    for word, context in qs:
        assert m.prob(word, context) == pytest.approx(lm.unmasked_score(word, context), abs=1e-12)
    # an OOV has MLE probability 0 in both: the perplexity is inf
    assert m.prob("palavra-que-nao-existe", ("<s>",)[: order - 1]) == 0.0
    assert lm.score("palavra-que-nao-existe") == 0.0
    with pytest.warns(UserWarning):
        assert m.perplexity(test) == math.inf


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("k", [1.0, 0.1, 2.5])
def test_additive_equals_nltk_lidstone_and_laplace(order, k):
    train, test = corpus()
    m = ref.ReferenceModel(train, order=order, smoothing="additive", k=k)
    lm = nltk_model(Lidstone, train, order, k) if k != 1.0 else nltk_model(Laplace, train, order)
    assert len(lm.vocab) == m.vocab_size  # <unk> counted once, <s> not at all
    for word, context in queries(m, train[:40] + test, order):
        assert m.prob(word, context) == pytest.approx(lm.unmasked_score(word, context), abs=1e-12)


def _seen_contexts(m, order, limit=300):
    """Seen contexts of every length 1..order-1 and a few words to query with each."""
    rng = random.Random(1)
    out = []
    for n in range(2, order + 1):
        grams = sorted(m.counts[n - 1])
        for gram in rng.sample(grams, min(limit, len(grams))):
            out.append((gram[-1], gram[:-1]))
            out.append((rng.choice(sorted(m.vocab - {UNK})), gram[:-1]))
    return out


@pytest.mark.parametrize(
    ("smoothing", "cls", "args"),
    [
        ("witten_bell", WittenBellInterpolated, ()),
        ("absolute_discounting", AbsoluteDiscountingInterpolated, ()),
        ("kneser_ney", KneserNeyInterpolated, ()),
    ],
)
@pytest.mark.parametrize("order", [2, 3])
def test_interpolation_step_equals_nltk_alpha_gamma(smoothing, cls, args, order):
    """p(w|h) = alpha(w, h) + gamma(h) p(w|h'): NLTK's alpha and gamma equal the reference's for
    every seen context (for KN: contexts not starting with <s>, see the test below)."""
    train, _ = corpus(120)
    discount = 0.75
    m = ref.ReferenceModel(train, order=order, smoothing=smoothing, discount=discount)
    kwargs = {"discount": discount} if smoothing != "witten_bell" else {}
    lm = nltk_model(cls, train, order, *args, **kwargs)
    limit = 40 if smoothing == "kneser_ney" else 300  # NLTK's KN is O(corpus) per query
    checked = 0
    for word, context in _seen_contexts(m, order, limit):
        if smoothing == "kneser_ney" and context[0] == BOS and len(context) + 1 < order:
            continue
        alpha, gamma = lm.estimator.alpha_gamma(word, context)
        mine_gamma = m.gamma(context)
        mine_alpha = m.prob(word, context) - mine_gamma * m.prob(word, context[1:])
        assert gamma == pytest.approx(mine_gamma, abs=1e-12)
        assert alpha == pytest.approx(mine_alpha, abs=1e-12)
        checked += 1
    assert checked > 20


# ------------------------------------------------------------------ where NLTK differs


def test_nltk_vocabulary_with_bos_changes_laplace_denominator():
    """padded_everygram_pipeline puts <s> in NLTK's vocabulary (and fit() masks every n-gram
    through the vocabulary, so <s> must be in it), so |V| is one larger than fastppl's |V|
    (<s> is never predicted): NLTK's Laplace p = (c+1)/(c(h.) + |V| + 1). A different
    convention, not a bug: but its distribution over the predictable words sums to < 1."""
    train, test = corpus()
    m = ref.ReferenceModel(train, order=2, smoothing="laplace")
    lm = nltk_model(Laplace, train, 2, vocab_extra=[BOS])
    assert len(lm.vocab) == m.vocab_size + 1
    for word, context in queries(m, test[:10], 2):
        c = m.counts[1].get((*context, word), 0)
        total = sum(v for g, v in m.counts[1].items() if g[:-1] == context)
        nltk_formula = (c + 1) / (total + m.vocab_size + 1)
        assert lm.unmasked_score(word, context) == pytest.approx(nltk_formula, abs=1e-15)
        assert nltk_formula != pytest.approx(m.prob(word, context), rel=1e-9)
        assert m.prob(word, context) == pytest.approx((c + 1) / (total + m.vocab_size), abs=1e-15)
    context = ("a",)
    assert sum(lm.unmasked_score(w, context) for w in m.vocab) == pytest.approx(
        1 - lm.unmasked_score(BOS, context), abs=1e-12
    )


def test_nltk_padding_predicts_extra_end_of_sentence():
    """NLTK pads with n-1 <s> and n-1 </s>: a trigram model scores len(s)+2 trigrams per
    sentence, the last being (w_k, </s>, </s>): an extra prediction of </s> after </s>, which
    inflates the token count and (being near-certain) lowers the perplexity. fastppl/KenLM
    predict len(s)+1 tokens, one </s>, and the first history is just <s>."""
    train, _ = corpus()
    s = train[0]
    nltk_trigrams = list(ngrams(pad_both_ends(s, n=3), 3))
    assert len(nltk_trigrams) == len(s) + 2
    assert nltk_trigrams[0] == (BOS, BOS, s[0])
    assert nltk_trigrams[-1] == (s[-1], EOS, EOS)
    m = ref.ReferenceModel(train, order=3, smoothing="mle")
    assert m.evaluate([s])[1] == len(s) + 1
    # in NLTK's counts </s> is a unigram twice per sentence, in fastppl's once
    text, vocab = padded_everygram_pipeline(3, train)
    lm = MLE(3)
    lm.fit(text, vocab)
    assert lm.counts.unigrams[EOS] == 2 * len(train)
    assert m.counts[0][(EOS,)] == len(train)
    assert lm.counts.unigrams[BOS] == 2 * len(train)  # <s> counted as a unigram too
    assert (BOS,) not in m.counts[0]


def _nltk_interpolated(m, word, context, step, base):
    """NLTK's interpolated recursion: alpha + gamma * lower, an unseen context giving the lower
    order, down to NLTK's ``base`` unigram score (not interpolated with the uniform)."""
    if not context:
        return base(word)
    total = sum(c for g, c in m.model_counts[len(context)].items() if g[:-1] == context)
    lower = _nltk_interpolated(m, word, context[1:], step, base)
    if total == 0:
        return lower
    alpha, gamma = step(word, context)
    return alpha + gamma * lower


def _differences_from_nltk(m, lm, sentences, base):
    """Checks that NLTK's scores follow `_nltk_interpolated` on the queries of ``sentences`` and
    returns how many of them differ from the reference's (fastppl's) probabilities."""
    differing = 0
    for word, context in queries(m, sentences, 2):
        nltk_formula = _nltk_interpolated(m, word, context, lm.estimator.alpha_gamma, base)
        assert lm.unmasked_score(word, context) == pytest.approx(nltk_formula, abs=1e-12)
        if abs(nltk_formula - m.prob(word, context)) > 1e-9:
            differing += 1
    return differing


@pytest.mark.parametrize("smoothing", ["witten_bell", "absolute_discounting"])
def test_nltk_lowest_order_is_mle_unigram(smoothing):
    """NLTK's WittenBellInterpolated and AbsoluteDiscountingInterpolated end the recursion in the
    MLE unigram c(w)/N: unigrams are not smoothed (no discount, no Witten-Bell mass) and not
    interpolated with the uniform 1/|V|, so an OOV gets probability 0 and the perplexity of any
    text with an OOV is inf. fastppl applies the same estimator at the unigram level too and
    ends in 1/|V|: every word of V, <unk> included, gets probability > 0."""
    train, test = corpus(150)
    cls = WittenBellInterpolated if smoothing == "witten_bell" else AbsoluteDiscountingInterpolated
    m = ref.ReferenceModel(train, order=2, smoothing=smoothing)
    lm = nltk_model(cls, train, 2)
    n_tokens = m.num_tokens

    def base(w):
        return m.counts[0].get((w,), 0) / n_tokens

    assert _differences_from_nltk(m, lm, test[:15], base) > 0
    assert lm.unmasked_score(UNK, ("a",)) == 0.0
    assert m.prob(UNK, ("a",)) > 0
    assert lm.unmasked_score("a") == pytest.approx(base("a"), abs=1e-15)
    assert lm.unmasked_score("a") != pytest.approx(m.prob("a"), rel=1e-9)


def test_nltk_kneser_ney_base_and_oov():
    """NLTK's KneserNeyInterpolated ends in the continuation unigram N1+(. w) / N1+(. .)
    (undiscounted, not interpolated with 1/|V|) and therefore gives an OOV probability 0 (inf
    perplexity); fastppl (like KenLM) discounts the unigram continuation counts too and
    interpolates with 1/|V|, so p(<unk>) = gamma(())/|V| > 0. NLTK's default discount is 0.1."""
    train, test = corpus(80)
    m = ref.ReferenceModel(train, order=2, smoothing="kneser_ney", discount=0.75)
    lm = nltk_model(KneserNeyInterpolated, train, 2, discount=0.75)
    assert KneserNeyInterpolated(2).estimator.discount == 0.1
    adjusted = m.model_counts[0]  # a(w) = N1+(. w)
    n_bigram_types = len(m.counts[1])

    def base(w):
        return adjusted.get((w,), 0) / n_bigram_types

    assert sum(adjusted.values()) == n_bigram_types
    assert _differences_from_nltk(m, lm, test[:6], base) > 0
    assert lm.unmasked_score(UNK, ("a",)) == 0.0
    assert m.prob(UNK, ("a",)) == pytest.approx(m.gamma(("a",)) * m.gamma(()) / m.vocab_size)


def test_nltk_kneser_ney_has_no_bos_rule():
    """Below the top order NLTK's KN always uses continuation counts N1+(. h w). An n-gram that
    starts with <s> has no left extension (one <s>, KenLM-style), so for a context starting with
    <s> NLTK divides by N1+(. h .) = 0. (With NLTK's own n-1 padding the only extension is
    another <s>, so every such count collapses to 1.) KenLM and fastppl keep the raw count of
    <s>-initial n-grams instead: p(w | <s>) = (c(<s> w) - D)/c(<s> .) + gamma(<s>) p(w)."""
    train, _ = corpus(80)
    m = ref.ReferenceModel(train, order=3, smoothing="kneser_ney", discount=0.75)
    lm = nltk_model(KneserNeyInterpolated, train, 3, discount=0.75)
    word = train[0][0]
    with pytest.raises(ZeroDivisionError):
        lm.unmasked_score(word, (BOS,))
    raw = m.counts[1][(BOS, word)]
    assert m.model_counts[1][(BOS, word)] == raw  # raw count kept
    total = sum(c for g, c in m.counts[1].items() if g[0] == BOS)
    n1plus = sum(1 for g in m.counts[1] if g[0] == BOS)
    expected = (raw - 0.75) / total + 0.75 * n1plus / total * m.prob(word)
    assert m.prob(word, (BOS,)) == pytest.approx(expected, abs=1e-15)
