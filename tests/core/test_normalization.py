"""Every normalized estimator sums to 1 over the vocabulary, for seen and unseen contexts.

Random small corpora (hypothesis) over a five-letter alphabet; contexts sampled from the training
words, an unseen word, ``<unk>``, and with or without a leading ``<s>``. Each probability is also
compared with a brute-force implementation of the conventions' formulas (``ngram_oracle``).
"""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fastppl import Corpus, NGramModel
from fastppl.errors import FastpplError, NotNormalizedError
from helpers.ngram_oracle import BOS, EOS, Oracle

ALPHABET = ["a", "b", "c", "d", "e"]
NORMALIZED = [
    ("mle", {}),
    ("additive", {"k": 0.5}),
    ("laplace", {}),
    ("witten_bell", {}),
    ("absolute_discounting", {}),
    ("absolute_discounting", {"discount": 0.3}),
    ("kneser_ney", {}),
    ("kneser_ney", {"discount": 1.0}),
    ("modified_kneser_ney", {"discount_fallback": True}),
]

sentences_st = st.lists(
    st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=7), min_size=1, max_size=7
).filter(lambda ss: any(ss))
# words of a context: training words, a word never seen ("zz") and the literal <unk>
context_st = st.tuples(
    st.booleans(),
    st.lists(st.sampled_from([*ALPHABET, "zz", "<unk>"]), min_size=0, max_size=4),
)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def predictable(model: NGramModel) -> list[str]:
    """The vocabulary a model predicts: ``vocab()`` minus ``<s>`` (which holds ``</s>`` only
    with bos_eos)."""
    words = [w for w in model.vocab() if w != BOS]
    assert len(words) == model.vocab_size
    return words


def contexts_for(draw_contexts: list[tuple[bool, list[str]]]) -> list[list[str]]:
    out = [[], [BOS]]
    for starts, words in draw_contexts:
        out.append([BOS, *words] if starts else list(words))
    return out


@pytest.mark.parametrize("bos_eos", [True, False], ids=["bos_eos", "plain"])
@pytest.mark.parametrize(("smoothing", "params"), NORMALIZED, ids=lambda x: str(x))
@SETTINGS
@given(
    sentences=sentences_st,
    order=st.integers(1, 4),
    draws=st.lists(context_st, min_size=1, max_size=6),
)
def test_sums_to_one(smoothing, params, bos_eos, sentences, order, draws):
    model = NGramModel.fit(
        Corpus.from_sentences(sentences),
        order=order,
        smoothing=smoothing,
        bos_eos=bos_eos,
        **params,
    )
    # modified KN: the discounts are checked by test_mkn_discounts; here the formulas, with the
    # model's own discounts
    discounts = model.discounts if smoothing == "modified_kneser_ney" else None
    oracle = Oracle(sentences, order, smoothing, bos_eos=bos_eos, discounts=discounts, **params)
    vocab = predictable(model)
    assert sorted(vocab) == oracle.vocab
    for context in contexts_for(draws):
        probs = [model.prob(w, context) for w in vocab]
        expected = [oracle.prob(w, context) for w in vocab]
        for w, p, e in zip(vocab, probs, expected, strict=True):
            assert p == pytest.approx(e, rel=1e-12, abs=1e-15), (w, context)
        total = math.fsum(probs)
        if smoothing == "mle":
            h = oracle.context_of(context)
            seen = oracle.total.get(h, 0) > 0
            assert total == pytest.approx(1.0 if seen else 0.0, abs=1e-9), context
        else:
            assert total == pytest.approx(1.0, abs=1e-9), context


def test_mle_unseen_context_and_seen_context_examples():
    sentences = [["a", "b"], ["a", "c"]]
    m = NGramModel.fit(Corpus.from_sentences(sentences), order=2, smoothing="mle")
    assert m.prob("b", ["a"]) == 0.5
    assert m.prob("a", [BOS]) == 1.0
    assert sum(m.prob(w, ["zz"]) for w in predictable(m)) == 0.0
    assert m.logprob("a", ["zz"]) == -math.inf


@pytest.mark.parametrize("bos_eos", [True, False])
@settings(max_examples=30, deadline=None)
@given(sentences=sentences_st, order=st.integers(1, 4), draws=st.lists(context_st, max_size=5))
def test_stupid_backoff_scores(bos_eos, sentences, order, draws):
    """Scores match S(w|h) of the conventions, lie in [0, 1], and are not probabilities."""
    model = NGramModel.fit(
        Corpus.from_sentences(sentences), order=order, smoothing="stupid_backoff", bos_eos=bos_eos
    )
    oracle = Oracle(sentences, order, "stupid_backoff", bos_eos=bos_eos)
    assert not model.normalized
    for context in contexts_for(draws):
        for w in predictable(model):
            s = model.prob(w, context)
            assert 0.0 <= s <= 1.0
            assert s == pytest.approx(oracle.prob(w, context), rel=1e-12, abs=1e-15)


def test_stupid_backoff_refuses_perplexity():
    corpus = Corpus.from_sentences([["a", "b", "a"], ["b", "b"]])
    model = NGramModel.fit(corpus, order=2, smoothing="stupid_backoff", alpha=0.4)
    # S(a|<s>) = 1, S(b|<s>) = 1/2... the scores after <s> sum to more than 1: not a distribution
    assert math.fsum(model.prob(w, [BOS]) for w in predictable(model)) > 1.0
    with pytest.raises(NotNormalizedError, match="allow_unnormalized") as info:
        model.evaluate(corpus)
    assert isinstance(info.value, FastpplError)
    with pytest.raises(NotNormalizedError):
        model.perplexity(corpus)
    with pytest.warns(UserWarning, match="not normalized"):
        result = model.evaluate(corpus, allow_unnormalized=True)
    assert math.isfinite(result.perplexity) and result.perplexity > 0
    # the 'perplexity' is exp of minus the mean log score, exactly as for a probability model
    tokens = [["a", "b", "a", EOS], ["b", "b", EOS]]
    ctx_tokens = [[BOS, "a", "b", "a", EOS], [BOS, "b", "b", EOS]]
    total = 0.0
    for sent in ctx_tokens:
        for i in range(1, len(sent)):
            total += model.logprob(sent[i], sent[:i])
    n = sum(map(len, tokens))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert result.log_prob == pytest.approx(total, rel=1e-12)
    assert result.num_tokens == n
    assert result.perplexity == pytest.approx(math.exp(-total / n), rel=1e-12)


@pytest.mark.parametrize("bos_eos", [True, False], ids=["bos_eos", "plain"])
@settings(max_examples=100, deadline=None)
@given(
    sentences=st.lists(
        st.lists(st.sampled_from(ALPHABET[:3]), min_size=1, max_size=12), min_size=4, max_size=16
    ).map(lambda ss: ss + ss[: len(ss) // 2] * 3),  # repeats: every count-of-count occurs
    order=st.integers(1, 4),
)
def test_mkn_discounts(bos_eos, sentences, order):
    """Discounts per order from the (adjusted) count-of-counts, or the fallback, as lmplz.

    Only corpora where every order has n4 > 0 are compared here; n4 = 0 (legal for lmplz: D3+ =
    3) is pinned by test_mkn_discounts_when_no_count_is_four.
    """
    oracle = Oracle(
        sentences, order, "modified_kneser_ney", bos_eos=bos_eos, discount_fallback=True
    )
    corpus = Corpus.from_sentences(sentences)
    model = NGramModel.fit(
        corpus,
        order=order,
        smoothing="modified_kneser_ney",
        bos_eos=bos_eos,
        discount_fallback=True,
    )
    compared, all_n4 = 0, True
    for m in range(1, order + 1):
        n4 = sum(1 for g, c in oracle.eff.items() if len(g) == m and c == 4)
        if n4 == 0:  # see test_mkn_discounts_when_no_count_is_four
            all_n4 = False
            d = model.discounts[m - 1]
            assert all(0 <= d[j] <= j + 1 for j in range(3))
            continue
        # exact: the same float32 steps as lmplz
        assert tuple(model.discounts[m - 1]) == oracle.discounts[m - 1], m
        compared += 1
    event(f"orders compared: {compared}")
    strict_ok = all_n4 and all(d != (0.5, 1.0, 1.5) for d in oracle.discounts)
    if strict_ok:
        strict = NGramModel.fit(
            corpus, order=order, smoothing="modified_kneser_ney", bos_eos=bos_eos
        )
        assert strict.discounts == model.discounts


def test_mkn_discounts_when_no_count_is_four():
    # unigram counts a:3, b:1, </s>:2 -> n1 = n2 = n3 = 1, n4 = 0; Y = 1/3,
    # D1 = 1 - 2Y = 1/3, D2 = 2 - 3Y = 1, D3+ = 3 - 4Y*0 = 3: all in range, no error in lmplz
    corpus = Corpus.from_sentences([["a", "a"], ["a", "b"]])
    model = NGramModel.fit(corpus, order=1, smoothing="modified_kneser_ney")
    assert list(model.discounts[0]) == pytest.approx([1 / 3, 1.0, 3.0], rel=1e-7)
