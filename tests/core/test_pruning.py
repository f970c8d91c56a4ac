"""Pruning (``prune=``, ``fastppl train --prune``), checked against KenLM's lmplz ``--prune``.

lmplz leaves out the n-grams of order m >= 2 seen at most ``prune[m-1]`` times and moves their
mass into their context's backoff weight. fastppl must write the same n-grams with the same
numbers (a fixture made by lmplz, see ``tests/data/README.md``), the same file in memory and
within a memory budget, and distributions that still sum to 1.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from pathlib import Path

import pytest

from fastppl import Corpus, NGramModel, train_arpa
from fastppl.cli import main as cli_main
from fastppl.errors import InvalidArgumentError, InvalidTypeError
from helpers.arpa_text import read_arpa
from helpers.shared_data import fixture_path

FIXTURE = fixture_path("lmplz-machado-small-2500.o4.prune-0-1-2.arpa.xz")
SLICE_SHA256 = "d19bde3412d5c3037be1fe0e4fdc417e8e8a3d9ec4379bc8fd056629074ae114"
TEXT = "a b c a b\nb c d a\na a b c d e\nc d e f\nb c a d\na b c d\n"


@pytest.fixture(scope="module")
def slice_text(machado_train_head_path: Path) -> Path:
    """The first 2,500 lines of machado-small.train.txt, which lmplz pruned for the fixture."""
    data = machado_train_head_path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SLICE_SHA256, "the text of the fixture changed"
    return machado_train_head_path


def assert_same_model(mine: Path, reference: Path) -> None:
    header, grams = read_arpa(reference)
    mine_header, mine_grams = read_arpa(mine)
    assert mine_header == header
    for m in header:
        assert mine_grams[m].keys() == grams[m].keys(), m
        for g, (p, b) in grams[m].items():
            q, c = mine_grams[m][g]
            assert q == pytest.approx(p, abs=1e-5), g
            assert (c or 0.0) == pytest.approx(b or 0.0, abs=1e-5), g


def test_same_model_as_lmplz_prune(slice_text, tmp_path):
    corpus = Corpus.from_file(slice_text, tokenizer="whitespace", sentences="lines")
    in_memory = tmp_path / "fit.arpa"
    NGramModel.fit(corpus, order=4, prune=(0, 1, 2)).to_arpa(in_memory)
    assert_same_model(in_memory, FIXTURE)
    # within a memory budget: the same bytes
    budgeted = tmp_path / "budget.arpa"
    summary = train_arpa(corpus, budgeted, order=4, prune=[0, 1, 2], memory="16M")
    assert budgeted.read_bytes() == in_memory.read_bytes()
    assert summary.ngram_counts == [5979, 4469, 983, 213]
    # and from the command line
    cli = tmp_path / "cli.arpa"
    assert (
        cli_main(
            [
                "train",
                str(slice_text),
                str(cli),
                "-o",
                "4",
                "--prune",
                "0",
                "1",
                "2",
                "--tokenizer",
                "whitespace",
                "--sentences",
                "lines",
                "-q",
            ]
        )
        == 0
    )
    assert cli.read_bytes() == in_memory.read_bytes()


def test_the_fitted_model_scores_as_its_arpa_file(slice_text, machado_test_head_path, tmp_path):
    """A pruned n-gram's slot stays taken (REMOVED), not empty: the kept n-grams stored past it
    in its probe sequence stay reachable, so the model in memory (and saved and loaded) scores
    as its ARPA file and lmplz's, and finds every n-gram lmplz kept. With empty slots, up to a
    fifth of the kept bigrams of this corpus were lost, how many depending on the threads'
    timing (perplexity 291-293 instead of 256.5)."""
    corpus = Corpus.from_file(slice_text, tokenizer="whitespace", sentences="lines")
    test = Corpus.from_file(machado_test_head_path, tokenizer="whitespace", sentences="lines")
    model = NGramModel.fit(corpus, order=4, prune=(0, 1, 2))
    model.to_arpa(tmp_path / "fit.arpa")
    model.save(tmp_path / "fit.fppl")
    expected = NGramModel.from_arpa(FIXTURE).evaluate(test).perplexity
    assert expected == pytest.approx(256.5097, abs=1e-4)
    loaded = [NGramModel.from_arpa(tmp_path / "fit.arpa"), NGramModel.load(tmp_path / "fit.fppl")]
    for m in (model, *loaded):
        assert m.evaluate(test).perplexity == pytest.approx(expected, rel=1e-6)
    _, grams = read_arpa(FIXTURE)
    for order in (2, 3, 4):
        assert all(model.count(g) > 0 for g in grams[order]), order
    words = [w for w in model.vocab() if w != "<s>"]
    for context in [("<s>",), ("de",), ("<s>", "o")]:
        total = sum(model.prob(w, context=context) for w in words)
        assert math.isclose(total, 1.0, rel_tol=1e-9), (context, total)


def test_pruned_ngrams_are_gone_and_kept_ones_have_their_contexts():
    corpus = Corpus.from_sentences([line.split() for line in TEXT.splitlines()])
    full = NGramModel.fit(corpus, order=3, smoothing="modified_kneser_ney", discount_fallback=True)
    pruned = NGramModel.fit(
        corpus, order=3, smoothing="modified_kneser_ney", discount_fallback=True, prune=(0, 1)
    )
    assert pruned.ngram_counts[0] == full.ngram_counts[0]
    assert pruned.ngram_counts[1] < full.ngram_counts[1]
    assert pruned.ngram_counts[2] < full.ngram_counts[2]
    # a singleton trigram is no longer stored: its probability comes from backing off
    assert full.prob("f", context=("d", "e")) != pruned.prob("f", context=("d", "e"))


@pytest.mark.parametrize(
    ("smoothing", "params"),
    [
        ("modified_kneser_ney", {"discount_fallback": True}),
        ("kneser_ney", {}),
        ("absolute_discounting", {"discount": 0.5}),
        ("witten_bell", {}),
    ],
)
@pytest.mark.parametrize("prune", [(0, 1), (0, 1, 2), (0, 0, 1)])
def test_pruned_distributions_sum_to_one(smoothing, params, prune):
    lines = [line.split() for line in TEXT.splitlines()]
    corpus = Corpus.from_sentences(lines + lines[:3])
    model = NGramModel.fit(corpus, order=3, smoothing=smoothing, prune=prune, **params)
    unpruned = NGramModel.fit(corpus, order=3, smoothing=smoothing, **params)
    assert model.ngram_counts[2] < unpruned.ngram_counts[2]
    words = [w for w in model.vocab() if w != "<s>"]
    contexts = [(), ("<s>",), *((a,) for a in words), *itertools.product(["<s>", *words], words)]
    for context in contexts:
        total = sum(model.prob(w, context=context) for w in words)
        assert math.isclose(total, 1.0, rel_tol=1e-9), (context, total)


def test_bad_thresholds():
    corpus = Corpus.from_sentences([line.split() for line in TEXT.splitlines()])
    for prune, match in [
        ((1, 1), "unigram threshold must be 0"),
        ((0, 2, 1), "must not decrease"),
        ((0, 1, 1, 1), "4 thresholds given for a model of order 3"),
        ((0, -1), ">= 0"),
        ((0, 2**64), r"<= 2\*\*64 - 1, got 18446744073709551616"),  # (the core takes u64)
    ]:
        with pytest.raises(InvalidArgumentError, match=match):
            NGramModel.fit(corpus, order=3, prune=prune, discount_fallback=True)
    for prune in ["0 1", 1, (0, 1.5)]:
        with pytest.raises(InvalidTypeError):
            NGramModel.fit(corpus, order=3, prune=prune, discount_fallback=True)
    with pytest.raises(InvalidArgumentError, match="mle cannot prune"):
        NGramModel.fit(corpus, order=3, smoothing="mle", prune=(0, 1))
    # the largest threshold the core takes prunes every n-gram above the unigrams
    everything = NGramModel.fit(corpus, order=3, prune=(0, 2**64 - 1), discount_fallback=True)
    assert everything.ngram_counts[1:] == [0, 0]
    # all zeros: nothing pruned, as lmplz --prune 0
    same = NGramModel.fit(corpus, order=3, prune=(0, 0), discount_fallback=True)
    assert same.ngram_counts == NGramModel.fit(corpus, order=3, discount_fallback=True).ngram_counts
