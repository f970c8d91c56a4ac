"""The Rust core against the pure-Python reference (``fastppl.reference``), an independent
implementation of the same conventions, on the bundled Machado de Assis corpus."""

from __future__ import annotations

import contextlib
import math
import random

import pytest

import fastppl
from fastppl import datasets, reference
from fastppl.text import read_text

ESTIMATORS = [
    ("mle", {}),
    ("additive", {"k": 0.1}),
    ("laplace", {}),
    ("witten_bell", {}),
    ("absolute_discounting", {"discount": 0.6}),
    ("kneser_ney", {"discount": 0.8}),
    ("modified_kneser_ney", {}),
    ("stupid_backoff", {"alpha": 0.4}),
]


@pytest.fixture(scope="module")
def machado_sentences():
    """The bundled corpus (``#``/``%`` lines dropped, lowercased) split on whitespace, cut into
    sentences after the tokens ``.``, ``!`` and ``?``."""
    text = read_text(
        datasets.machado(), skip_line_prefixes=datasets.MACHADO_SKIP_LINE_PREFIXES, lowercase=True
    )
    return reference.split_by_terminators(text.split())


@pytest.fixture(scope="module")
def split(machado_sentences):
    test = machado_sentences[::10]
    train = [s for i, s in enumerate(machado_sentences) if i % 10]
    return train, test


def _contexts(sentences, order, rng, n=60):
    """Histories that occur in the text plus unseen and sentence-start ones."""
    out = [(), ("<s>",), ("nunca-visto",), ("<s>", "nunca-visto")]
    for _ in range(n):
        s = rng.choice(sentences)
        i = rng.randrange(len(s))
        out.append(tuple(["<s>", *s][max(0, i + 1 - (order - 1)) : i + 1]))
    return out


@pytest.mark.parametrize(("smoothing", "params"), ESTIMATORS)
def test_every_estimator_matches_reference_at_order_3(split, smoothing, params):
    train, test = split
    ref = reference.ReferenceModel(train[:3000], order=3, smoothing=smoothing, **params)
    fast = fastppl.NGramModel.fit(
        fastppl.Corpus.from_sentences(train[:3000]), order=3, smoothing=smoothing, **params
    )
    assert fast.vocab_size == ref.vocab_size
    rng = random.Random(7)
    words = [*sorted(ref.vocab)[:300], "</s>", "<unk>", "nunca-visto"]
    for context in _contexts(train[:3000], 3, rng):
        for word in rng.sample(words, 40):
            expected = ref.prob(word, context)
            got = fast.prob(word, context)
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-300), (word, context)
    if smoothing == "stupid_backoff":
        return
    ref_lp, ref_n, ref_oov = ref.evaluate(test[:500], oov="unk")
    with contextlib.ExitStack() as stack:
        if smoothing == "mle":
            stack.enter_context(pytest.warns(fastppl.errors.ZeroProbabilityWarning))
        res = fast.evaluate(fastppl.Corpus.from_sentences(test[:500]), oov="unk")
    assert (res.num_tokens, res.num_oov) == (ref_n, ref_oov)
    if math.isinf(ref_lp):
        assert math.isinf(res.log_prob) and res.perplexity == math.inf
    else:
        assert res.log_prob == pytest.approx(ref_lp, rel=1e-11)


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_modified_kneser_ney_orders_1_to_5_on_machado(split, order):
    train, test = split
    ref = reference.ReferenceModel(train, order=order, smoothing="modified_kneser_ney")
    fast = fastppl.NGramModel.fit(
        fastppl.Corpus.from_sentences(train), order=order, smoothing="modified_kneser_ney"
    )
    assert [d for t in fast.discounts for d in t] == pytest.approx(
        [d for t in ref.discounts for d in t], rel=1e-12
    )
    assert fast.ngram_counts[1:] == [len(c) for c in ref.counts[1:]]
    test_corpus = fastppl.Corpus.from_sentences(test)
    for oov in ("unk", "skip"):
        ref_lp, ref_n, ref_oov = ref.evaluate(test, oov=oov)
        res = fast.evaluate(test_corpus, oov=oov)
        assert (res.num_tokens, res.num_oov) == (ref_n, ref_oov)
        assert res.log_prob == pytest.approx(ref_lp, rel=1e-11)
    ref_sentences = [ref.sentence_logprob(s) for s in test[:200]]
    fast_sentences = fast.evaluate(fastppl.Corpus.from_sentences(test[:200])).sentence_log_probs
    assert list(fast_sentences) == pytest.approx(ref_sentences, rel=1e-11)


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_counts_match_reference_on_machado(machado_sentences, order):
    sentences = machado_sentences[:5000]
    ref = reference.count_ngrams(sentences, order)
    fast = fastppl.NGramModel.fit(
        fastppl.Corpus.from_sentences(sentences), order=order, smoothing="mle"
    )
    assert fastppl._core.count_ngrams(fastppl.Corpus.from_sentences(sentences)._inner, order) == [
        len(c) for c in ref
    ]
    rng = random.Random(order)
    for table in ref:
        for gram in rng.sample(sorted(table), min(300, len(table))):
            assert fast.count(gram) == table[gram]
