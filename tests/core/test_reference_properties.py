"""Property tests of the reference (hypothesis) and exact perplexity figures."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.reference_loader import reference as ref

WORDS = ["a", "b", "c", "d", "e", "."]
NORMALIZED = [s for s in ref.SMOOTHINGS if s != "stupid_backoff"]

sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)
corpus = st.lists(sentence, min_size=1, max_size=10)
context_token = st.sampled_from([*WORDS, "zz", ref.BOS])  # "zz" is never a training word

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_model(sentences, order, smoothing, bos_eos, **kwargs):
    kwargs.setdefault("discount_fallback", True)
    return ref.ReferenceModel(sentences, order, smoothing, bos_eos, **kwargs)


@SETTINGS
@given(
    sentences=corpus,
    order=st.integers(1, 4),
    smoothing=st.sampled_from(NORMALIZED),
    bos_eos=st.booleans(),
    contexts=st.lists(st.lists(context_token, max_size=4), min_size=1, max_size=4),
    k=st.floats(0.01, 3.0),
    discount=st.floats(0.05, 1.0),
)
def test_probabilities_sum_to_one(sentences, order, smoothing, bos_eos, contexts, k, discount):
    m = make_model(sentences, order, smoothing, bos_eos, k=k, discount=discount)
    for context in contexts:
        total = math.fsum(m.prob(w, context) for w in m.vocab)
        clipped = tuple(context)[max(0, len(context) - (order - 1)) :] if order > 1 else ()
        clipped = tuple(t if t in m.vocab or t == ref.BOS else ref.UNK for t in clipped)
        seen = any(g[:-1] == clipped for g in m.counts[len(clipped)])
        if smoothing == "mle" and not seen:
            assert total == 0.0  # MLE: an unseen context gives every word probability 0
        else:
            assert total == pytest.approx(1.0, abs=1e-9), (smoothing, context)


def independent_counts(sentences, order, bos_eos):
    """Counts by zipping shifted copies of each padded sentence (not the reference's loop)."""
    counts = [Counter() for _ in range(order)]
    for s in sentences:
        padded = ["<s>", *s, "</s>"] if bos_eos else list(s)
        for m in range(1, order + 1):
            grams = zip(*(padded[j:] for j in range(m)), strict=False)
            counts[m - 1].update(g for g in grams if g != ("<s>",))
    return counts


@SETTINGS
@given(sentences=corpus, order=st.integers(1, 5), bos_eos=st.booleans())
def test_counts_equal_counter(sentences, order, bos_eos):
    assert ref.count_ngrams(sentences, order, bos_eos) == independent_counts(
        sentences, order, bos_eos
    )


@SETTINGS
@given(sentences=corpus, order=st.integers(2, 4))
def test_adjusted_counts_are_continuation_counts(sentences, order):
    counts = ref.count_ngrams(sentences, order)
    adjusted = ref.adjusted_counts(counts)
    assert adjusted[-1] == counts[-1]
    for m in range(1, order):
        for gram, a in adjusted[m - 1].items():
            if gram[0] == ref.BOS:
                assert a == counts[m - 1][gram]
            else:
                assert a == len({g[0] for g in counts[m] if g[1:] == gram})


@SETTINGS
@given(
    sentences=corpus,
    order=st.integers(1, 4),
    smoothing=st.sampled_from(["witten_bell", "absolute_discounting", "kneser_ney"]),
    test=corpus,
)
def test_arpa_backoff_form_equals_interpolated_form(sentences, order, smoothing, test):
    """Scoring the ARPA view with backoffs (KenLM's FullScore) gives the interpolated p."""
    m = make_model(sentences, order, smoothing, True)
    entries = {g: (p, b) for g, p, b in m.to_arpa_entries()}
    for s in test:
        padded = [t if t in m.vocab else ref.UNK for t in ref.pad(s)]
        for i in range(1, len(padded)):
            history = tuple(padded[max(0, i - order + 1) : i])
            log10_p = 0.0
            for start in range(len(history) + 1):
                gram = (*history[start:], padded[i])
                if gram in entries:
                    log10_p += entries[gram][0]
                    break
                log10_p += entries.get(history[start:], (0.0, 0.0))[1] or 0.0
            assert log10_p == pytest.approx(math.log10(m.prob(padded[i], history)), abs=1e-9)


@SETTINGS
@given(sentences=corpus, test=corpus, order=st.integers(1, 3))
def test_oov_skip_leaves_unk_in_history(sentences, test, order):
    m = make_model(sentences, order, "modified_kneser_ney", True)
    known = [[w for w in s if w in m.vocab] for s in test]
    test = [[*s, "zz", *s] for s in known]  # exactly one OOV per sentence
    lp_unk, n_unk, oov_unk = m.evaluate(test, oov="unk")
    lp_skip, n_skip, oov_skip = m.evaluate(test, oov="skip")
    assert oov_unk == oov_skip == len(test)
    assert n_skip == n_unk - oov_unk
    # the skipped terms are exactly the <unk> terms of the "unk" evaluation
    skipped = 0.0
    for s in test:
        padded = ref.pad(s)
        i = padded.index("zz")
        skipped += m.logprob("zz", padded[max(0, i - order + 1) : i])
    assert lp_unk == pytest.approx(lp_skip + skipped, abs=1e-9)
    with pytest.raises(KeyError, match="'zz'"):
        m.evaluate(test, oov="error")


def test_die_has_perplexity_six():
    faces = [["1", "2", "3", "4", "5", "6"]]
    m = ref.ReferenceModel(faces, order=1, smoothing="mle", bos_eos=False)
    rolls = [["3", "1", "6", "6", "2", "5", "4", "4", "1"]]
    assert m.perplexity(rolls) == pytest.approx(6.0, rel=1e-15)
    assert ref.perplexity_of_probs([1 / 6] * 100) == pytest.approx(6.0, rel=1e-15)


def test_perplexity_of_given_probabilities():
    probs = [0.4, 0.3, 0.2, 0.5, 0.7, 0.6]
    product = math.prod(Fraction(str(p)) for p in probs)
    assert product == Fraction(504, 100000)
    exact = float(Fraction(100000, 504)) ** (1 / 6)  # (1 / prod p) ** (1/N)
    assert ref.perplexity_of_probs(probs) == pytest.approx(exact, rel=1e-15)
    assert str(ref.perplexity_of_probs(probs)).startswith("2.41506")


def test_zero_probability_gives_inf_with_warning():
    with pytest.warns(UserWarning, match="inf"):
        assert ref.perplexity_of_probs([0.5, 0.0]) == math.inf


def test_text_pipeline_pieces():
    text = "% header\n# Capítulo I\nEla disse: Não! E ele?! Sim.\n\nFim\n"
    kept = ref.drop_lines(text, ("#", "%"))
    assert kept == "Ela disse: Não! E ele?! Sim.\n\nFim\n"
    tokens = ref.whitespace_tokenize(ref.lowercase(kept).replace("!", " !").replace(".", " ."))
    assert tokens == ["ela", "disse:", "não", "!", "e", "ele?", "!", "sim", ".", "fim"]
    assert ref.split_by_terminators(["a", "!?", "b", "?!", "c", "...", "d", ".!?"]) == [
        ["a", "!?"],
        ["b", "?!", "c", "...", "d", ".!?"],
    ]
    assert ref.text_to_sentences("a b\n\n c \n", "lines") == [["a", "b"], ["c"]]
    assert ref.text_to_sentences("a . b\nc", "none") == [["a", ".", "b", "c"]]
    assert ref.whitespace_tokenize("a\x0bb c\x0cd") == ["a\x0bb", "c", "d"]


def test_empty_corpus_is_an_error():
    with pytest.raises(ref.EmptyCorpusError):
        ref.ReferenceModel([[], []], order=2)
    m = ref.ReferenceModel([["a"]], order=2, smoothing="laplace")
    with pytest.raises(ref.EmptyCorpusError):
        m.evaluate([[]])


def test_stupid_backoff_is_refused_without_allow_unnormalized():
    m = ref.ReferenceModel([["a", "b"], ["b"]], order=2, smoothing="stupid_backoff")
    assert m.prob("b", ["a"]) == 1.0
    assert m.prob("a", ["b"]) == pytest.approx(0.4 * 1 / 5)  # alpha * c(a)/N
    with pytest.raises(ValueError, match="allow_unnormalized"):
        m.evaluate([["a"]])
    assert m.evaluate([["a"]], allow_unnormalized=True)[1] == 2


def test_bad_discounts_raise_without_fallback():
    with pytest.raises(ref.BadDiscountError):
        ref.ReferenceModel([["a", "b"]], order=2, smoothing="modified_kneser_ney")
    m = ref.ReferenceModel(
        [["a", "b"]], order=2, smoothing="modified_kneser_ney", discount_fallback=True
    )
    assert m.discounts == [ref.FALLBACK_DISCOUNTS] * 2


def test_reference_docstring_examples():
    import doctest

    result = doctest.testmod(ref, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20
    assert result.failed == 0
