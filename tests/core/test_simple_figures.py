"""Textbook figures: a fair die, and a sequence with known per-token probabilities.

``fastppl.metrics`` (perplexity from given probabilities) does not exist yet, so the second figure
is obtained from an n-gram model built so that its probabilities are exactly the given ones.
"""

from __future__ import annotations

import math

import pytest

from fastppl import Corpus, NGramModel

FACES = ["1", "2", "3", "4", "5", "6"]


def test_fair_die_has_perplexity_six():
    rolls = Corpus.from_sentences([FACES * 10])
    model = NGramModel.fit(rolls, order=1, smoothing="mle", bos_eos=False)
    assert model.vocab_size == 7  # six faces and <unk>
    for face in FACES:
        assert model.prob(face) == pytest.approx(1 / 6, rel=1e-15)
    test = Corpus.from_sentences([["3", "1", "6", "6", "2"], ["5"]])
    r = model.evaluate(test)
    assert r.num_tokens == 6
    assert r.perplexity == pytest.approx(6.0, rel=1e-14)
    assert r.cross_entropy_bits == pytest.approx(math.log2(6), rel=1e-14)
    assert r.log_prob == pytest.approx(-6 * math.log(6), rel=1e-14)
    # the same die under Laplace: (10 + 1) / (60 + 7) for a face
    laplace = NGramModel.fit(rolls, order=1, smoothing="laplace", bos_eos=False)
    assert laplace.perplexity(test) == pytest.approx(67 / 11, rel=1e-14)


def test_known_probabilities():
    """p = 0.4, 0.3, 0.2, 0.5, 0.7, 0.6 -> perplexity (prod p)^(-1/6) = 2.41506...

    A bigram MLE model without sentence markers: the first token is scored by the unigram
    distribution, c(a)/N = 60/150 = 0.4 (50 one-word sentences "a" plus 10 "a x" pairs), then each
    conditional by two-word sentences: a->b 3 of 10, b->c 2 of 10, c->d 5 of 10, d->e 7 of 10,
    e->f 6 of 10 (the rest -> z).
    """
    pairs = {"a": ("b", 3), "b": ("c", 2), "c": ("d", 5), "d": ("e", 7), "e": ("f", 6)}
    sentences = [["a"]] * 50
    for h, (w, n) in pairs.items():
        sentences += [[h, w]] * n + [[h, "z"]] * (10 - n)
    model = NGramModel.fit(
        Corpus.from_sentences(sentences), order=2, smoothing="mle", bos_eos=False
    )
    test = ["a", "b", "c", "d", "e", "f"]
    probs = [0.4, 0.3, 0.2, 0.5, 0.7, 0.6]
    assert model.logprobs(test) == pytest.approx([math.log(p) for p in probs], rel=1e-14)
    r = model.evaluate(Corpus.from_sentences([test]))
    expected = math.prod(probs) ** (-1 / 6)
    assert expected == pytest.approx(2.4150617741843954, rel=1e-15)
    assert r.perplexity == pytest.approx(expected, rel=1e-14)


def test_seed_figures_through_metrics():
    """The same two figures from probabilities directly (fastppl.metrics), in every base."""
    from fastppl import metrics

    probs = [0.4, 0.3, 0.2, 0.5, 0.7, 0.6]
    expected = math.exp(-sum(math.log(p) for p in probs) / len(probs))
    assert expected == pytest.approx(2.41506, abs=5e-6)
    assert metrics.perplexity(probs=probs) == pytest.approx(expected, rel=1e-12)
    for base, log in (("e", math.log), (2, math.log2), (10, math.log10)):
        logs = [log(p) for p in probs]
        assert metrics.perplexity(logs, base=base) == pytest.approx(expected, rel=1e-12)
    assert metrics.perplexity(probs=[1 / 6] * 6) == pytest.approx(6.0, rel=1e-12)
