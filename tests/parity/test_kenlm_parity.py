"""Modified Kneser-Ney against KenLM's own output (``../shared/arpa``, lmplz/query, 2025).

lmplz was run with its defaults (interpolated unigrams, no pruning) on one sentence per line; the
same text goes through ``Corpus.from_file(..., tokenizer="whitespace", sentences="lines")``.
"""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest

from fastppl import Corpus, NGramModel
from helpers.arpa_text import LMPLZ_MODELS, read_arpa

LN10 = math.log(10.0)

# lmplz's discounts: machado-small o5 orders 1-4 from ../shared/arpa/README.md; order 5 and
# machado o3 from the conventions (fastppl-conventions.md, "Pinned against KenLM lmplz").
# lmplz prints 6 significant digits.
DISCOUNTS = {
    "machado-small": [
        (0.625263, 1.10383, 1.65086),
        (0.791238, 1.13345, 1.42857),
        (0.894525, 1.26581, 1.45066),
        (0.959705, 1.39626, 1.80109),
        (0.984265, 1.57121, 1.59071),
    ],
    "machado": [
        (0.607087, 1.03121, 1.58137),
        (0.767682, 1.14503, 1.33537),
        (0.862339, 1.21114, 1.32376),
    ],
}
MODELS = LMPLZ_MODELS


@pytest.fixture(scope="module", params=MODELS, ids=[f"{n}-o{o}" for n, o in MODELS])
def kenlm(request, shared_dir):
    name, order = request.param
    arpa = shared_dir / "arpa"
    corpus = Corpus.from_file(arpa / f"{name}.train.txt", tokenizer="whitespace", sentences="lines")
    model = NGramModel.fit(corpus, order=order, smoothing="modified_kneser_ney")
    header, grams = read_arpa(arpa / f"{name}.o{order}.arpa.gz")
    summary = {}
    for line in (arpa / f"{name}.o{order}.query-summary.txt").read_text().splitlines():
        key, value = line.split(":\t")
        summary[key] = float(value)
    sentences = []
    for line in (arpa / f"{name}.o{order}.query-sentences.txt").read_text().splitlines():
        m = re.fullmatch(r"Total: (\S+) OOV: (\d+)", line)
        assert m, line
        sentences.append((float(m[1]), int(m[2])))
    return {
        "name": name,
        "order": order,
        "model": model,
        "header": header,
        "grams": grams,
        "summary": summary,
        "sentences": sentences,
    }


@pytest.fixture(scope="module")
def test_corpus(shared_dir):
    path = shared_dir / "arpa" / "machado.test.txt"
    return Corpus.from_file(path, tokenizer="whitespace", sentences="lines")


def test_discounts(kenlm):
    got = kenlm["model"].discounts
    assert len(got) == kenlm["order"]
    for m, (d, ref) in enumerate(zip(got, DISCOUNTS[kenlm["name"]], strict=True), 1):
        assert d == pytest.approx(ref, abs=1e-5), m
        assert all(0 <= d[j] <= j + 1 for j in range(3)), m


def test_ngram_counts(kenlm):
    header, counts = kenlm["header"], kenlm["model"].ngram_counts
    assert len(counts) == kenlm["order"] == len(header)
    # KenLM's unigrams include <s> (log10 prob 0, a context only); fastppl's ngram_counts[0] is
    # |V| = every word, </s> and <unk>, never <s>: one less
    assert counts[0] == header[1] - 1 == kenlm["model"].vocab_size
    assert counts[1:] == [header[m] for m in range(2, kenlm["order"] + 1)]


def test_test_set_perplexity(kenlm, test_corpus):
    model, summary = kenlm["model"], kenlm["summary"]
    incl = model.evaluate(test_corpus, oov="unk")
    excl = model.evaluate(test_corpus, oov="skip")
    assert incl.num_tokens == summary["Tokens"] == 66875  # words + one </s> per sentence
    assert incl.num_oov == excl.num_oov == summary["OOVs"]
    assert excl.num_tokens == summary["Tokens"] - summary["OOVs"]
    # measured relative errors: machado-small o5 -5.3e-8 (incl.) / -3.0e-8 (excl.), machado o3
    # -2.8e-8 / -2.3e-8: KenLM stores float32 probabilities and sums sentences in float32
    assert incl.perplexity == pytest.approx(summary["Perplexity including OOVs"], rel=1e-6)
    assert excl.perplexity == pytest.approx(summary["Perplexity excluding OOVs"], rel=1e-6)


def test_sentence_totals(kenlm, test_corpus):
    model = kenlm["model"]
    incl = model.evaluate(test_corpus, oov="unk")
    excl = model.evaluate(test_corpus, oov="skip")
    ref = np.array([t for t, _ in kenlm["sentences"]])
    ref_oov = np.array([o for _, o in kenlm["sentences"]])
    assert len(ref) == len(test_corpus) == 3404
    got = incl.sentence_log_probs / LN10
    # KenLM prints the float32 sum of float32 log10 probabilities with ~7-8 significant digits;
    # float32 accumulation over a long sentence drifts by ~1e-7 relative (measured: at most
    # 9.0e-5 absolute, 3.1e-7 relative on sentences of |log10 p| up to ~300). rtol 1e-6 covers
    # the float32 sums, atol 1e-5 the printing of short sentences.
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-5)
    # per-sentence OOVs: the tokens left out when excluding OOVs
    np.testing.assert_array_equal(incl.sentence_num_tokens - excl.sentence_num_tokens, ref_oov)


def test_arpa_probabilities_and_backoffs(kenlm):
    """log10 p(w | h) of a sample of ARPA n-grams of every order, and backoff weights.

    The ARPA probability of a lower-order n-gram (h, w) is p(w | h) with h the *short* history,
    which is what ``logprob(w, h)`` computes for a context shorter than order-1 (the model does not
    pad it with <s>). So every order can be checked, not only the top order and the <s>-initial
    n-grams: we check all of them.
    """
    model, grams, order = kenlm["model"], kenlm["grams"], kenlm["order"]
    rng = random.Random(1234)
    checked = 0
    for m in range(1, order + 1):
        sample = rng.sample(sorted(grams[m]), 2000)
        for g in sample:
            log10p, backoff = grams[m][g]
            h, w = list(g[:-1]), g[-1]
            if w == "<s>":
                # ARPA prints log10 p(<s>) = 0 by convention; <s> is never predicted by fastppl
                assert log10p == 0.0 and model.logprob("<s>", h) == -math.inf
                continue
            assert model.logprob(w, h) / LN10 == pytest.approx(log10p, abs=1e-5), g
            if m >= 2:
                assert model.count(g) > 0, g
            if backoff is not None and m < order:
                # log10 gamma(g): p(<unk> | g) = gamma(g) p(<unk> | g[1:]), as <unk> ends no
                # stored n-gram of order >= 2
                step = model.logprob("<unk>", list(g)) - model.logprob("<unk>", list(g[1:]))
                assert step / LN10 == pytest.approx(backoff, abs=1e-5), g
            checked += 1
    assert checked >= 2000 * order - 1


def test_unk_probability(kenlm):
    grams = kenlm["grams"]
    assert kenlm["model"].logprob("<unk>") / LN10 == pytest.approx(
        grams[1][("<unk>",)][0], abs=1e-6
    )
    assert kenlm["model"].logprob("never-seen-word") == kenlm["model"].logprob("<unk>")
