"""The published tutorial's figures on the Machado de Assis corpus (``../shared/corpora``).

The tutorial drops lines starting with ``#``/``%``, lowercases, tokenizes with NLTK's
``word_tokenize``, ends a sentence after any token ``t`` with ``t in ".!?"``, and computes MLE
unigram and bigram perplexities in base 2 over all tokens with no ``<s>``/``</s>``
(``bos_eos=False``). The figures are from ``../shared/corpora/README.md``.
"""

from __future__ import annotations

import gzip
import itertools
import math
from collections import Counter
from decimal import Decimal, getcontext

import pytest

from fastppl import Corpus, NGramModel

LN2 = math.log(2.0)


@pytest.fixture(scope="module")
def tutorial_text(shared_dir):
    """The tutorial's own tokens (NLTK 3.2.5), one per line."""
    path = shared_dir / "corpora" / "machado" / "machado.tokens-nltk3.2.5.txt.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def tutorial_corpus(tutorial_text):
    return Corpus.from_text(tutorial_text, tokenizer="whitespace", sentences="terminators")


def test_token_counts(tutorial_corpus):
    assert tutorial_corpus.num_tokens == 629_885
    counts = tutorial_corpus.token_counts()
    assert counts["dia"] == 776
    assert counts["mulher"] == 380
    m = NGramModel.fit(tutorial_corpus, order=2, smoothing="mle", bos_eos=False)
    assert m.count(["dia"]) == 776 and m.count(["mulher"]) == 380
    assert m.count(["o", "dia"]) == 62
    assert m.count(["a", "mulher"]) == 139


def test_unigram(tutorial_corpus):
    m = NGramModel.fit(tutorial_corpus, order=1, smoothing="mle", bos_eos=False)
    r = m.evaluate(tutorial_corpus)
    assert r.num_tokens == 629_885
    assert r.perplexity == pytest.approx(723.123281725287, rel=1e-12)
    assert r.log_prob / LN2 == pytest.approx(-5982709.342760975, rel=1e-12)
    assert r.log_prob_in(2) == pytest.approx(-5982709.342760975, rel=1e-12)
    assert r.log_prob / LN2 / r.num_tokens == pytest.approx(-9.498097815888574, rel=1e-12)
    assert r.cross_entropy_bits == pytest.approx(9.498097815888574, rel=1e-12)
    assert r.sentence_log_probs[0] / LN2 == pytest.approx(-94.47081343852943, rel=1e-12)
    assert r.sentence_log_probs[1] / LN2 == pytest.approx(-136.40681288913103, rel=1e-12)


def test_correct_bigram(tutorial_corpus):
    m = NGramModel.fit(tutorial_corpus, order=2, smoothing="mle", bos_eos=False)
    r = m.evaluate(tutorial_corpus)
    assert r.perplexity == pytest.approx(73.86009329120165, rel=1e-12)
    assert r.log_prob / LN2 == pytest.approx(-3909521.8300271905, rel=1e-12)


def buggy_tutorial_bigram_log2(tokens: list[str], sentence_lengths) -> tuple[float, list[float]]:
    """The tutorial's bigram function, bug included: it indexes the corpus token list
    (``tokens[0]``, ``tokens[i-1]``, ``tokens[i]``) instead of the sentence, so each sentence is
    scored as the first len(sentence) tokens of the corpus. Its counts are the tutorial's: bigrams
    over the whole token stream (``nltk.bigrams(tokens)``, across sentences) over unigram counts.
    """
    unigrams = Counter(tokens)
    bigrams = Counter(itertools.pairwise(tokens))
    n = len(tokens)
    total, per_sentence = 0.0, []
    for length in sentence_lengths:
        lp = math.log2(unigrams[tokens[0]] / n)
        for i in range(1, length):
            lp += math.log2(bigrams[tokens[i - 1], tokens[i]] / unigrams[tokens[i - 1]])
        total += lp
        per_sentence.append(lp)
    return total, per_sentence


def test_buggy_bigram_is_not_the_library(tutorial_text, tutorial_corpus):
    tokens = tutorial_text.split()
    total, per_sentence = buggy_tutorial_bigram_log2(tokens, tutorial_corpus.sentence_lengths())
    assert total == pytest.approx(-3664774.817399596, rel=1e-12)
    assert per_sentence[0] == pytest.approx(-55.62808216458857, rel=1e-12)
    assert per_sentence[1] == pytest.approx(-83.96472522394838, rel=1e-12)
    buggy = 2 ** (-total / len(tokens))
    assert buggy == pytest.approx(56.421179878762686, rel=1e-12)
    m = NGramModel.fit(tutorial_corpus, order=2, smoothing="mle", bos_eos=False)
    r = m.evaluate(tutorial_corpus)
    # the first sentence is the same either way; the second already differs
    assert r.sentence_log_probs[0] / LN2 == pytest.approx(per_sentence[0], rel=1e-12)
    assert r.sentence_log_probs[1] / LN2 != pytest.approx(per_sentence[1], rel=1e-3)
    assert r.perplexity == pytest.approx(73.86009329120165, rel=1e-12)
    assert abs(r.perplexity - buggy) > 17


def test_from_file_reads_gzip(shared_dir):
    path = shared_dir / "corpora" / "machado" / "machado.tokens-nltk3.2.5.txt.gz"
    c = Corpus.from_file(path, tokenizer="whitespace", sentences="terminators")
    assert c.num_tokens == 629_885


def exact_unigram_perplexity(counts: dict[str, int]) -> float:
    """exp(-sum_w c(w) ln(c(w)/N) / N) in 50-digit decimal arithmetic."""
    getcontext().prec = 50
    n = Decimal(sum(counts.values()))
    s = sum(Decimal(c) * (Decimal(c) / n).ln() for c in counts.values())
    return float((-s / n).exp())


@pytest.mark.parametrize("engine", ["native", "python"])
def test_raw_corpus_through_nltk(engine, monkeypatch, tmp_path):
    """The seed figures from the bundled corpus and the bundled Punkt parameters alone (no NLTK
    data anywhere), natively and through NLTK's own code."""
    import nltk.data

    import fastppl

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    corpus = Corpus.from_file(
        fastppl.datasets.machado(),
        engine=engine,
        tokenizer="nltk",
        sentences="terminators",
        lowercase=True,
        skip_line_prefixes=("#", "%"),
    )
    assert corpus.num_tokens == 629_335
    counts = corpus.token_counts()
    assert (counts["dia"], counts["mulher"]) == (776, 380)
    uni = NGramModel.fit(corpus, order=1, smoothing="mle", bos_eos=False)
    ppl1 = uni.perplexity(corpus)
    # README: 723.5364178694385. The exact value of these counts (50-digit arithmetic) is
    # 723.53641787121062..., which fastppl reproduces to the last bit; the README's figure is
    # 2.4e-12 relative off (accumulated rounding of a naive sum of 629,335 log2 terms)
    assert ppl1 == pytest.approx(exact_unigram_perplexity(counts), rel=1e-14)
    assert ppl1 == pytest.approx(723.5364178694385, rel=1e-11)
    bi = NGramModel.fit(corpus, order=2, smoothing="mle", bos_eos=False)
    assert bi.count(["o", "dia"]) == 62 and bi.count(["a", "mulher"]) == 139
    assert bi.perplexity(corpus) == pytest.approx(74.00051433152129, rel=1e-12)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("lines", [["Hello", "there", ".", "How", "are", "you"], ["fine", "thanks"]]),
        ("none", [["Hello", "there", ".", "How", "are", "you", "fine", "thanks"]]),
    ],
)
def test_nltk_tokenizer_honours_sentence_mode(mode, expected, nltk_data_dir):
    text = "Hello there. How are you\nfine thanks"
    assert list(Corpus.from_text(text, tokenizer="nltk", sentences=mode)) == expected
