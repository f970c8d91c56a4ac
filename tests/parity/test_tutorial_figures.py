"""The published Machado tutorial's figures, from its own token stream.

``../shared/corpora/machado/machado.tokens-nltk3.2.5.txt.gz`` holds the tutorial's tokens (NLTK
3.2.5 ``word_tokenize``), one per line. Sentences end after a token ``t`` with ``t in ".!?"``;
no ``<s>``/``</s>`` (bos_eos=False); base-2 logs, divided by the total token count.

The tutorial's bigram formula (pinned here to 1e-12): a sentence s_0 ... s_{L-1} has
log2 P = log2(c(s_0)/N) + sum_{i>=1} log2(c(s_{i-1} s_i)/c(s_{i-1})), c(.) unigram counts,
c(a b) bigram counts over the whole flat token list (crossing sentence ends), N = 629,885. On
this corpus that equals fastppl's bigram MLE with bos_eos=False exactly: every token used as a
context is followed inside its sentence (only terminators end a sentence, and the corpus ends
with one), so c(a) = c(a .) and no cross-sentence bigram is ever queried.
"""

from __future__ import annotations

import gzip
import math
from collections import Counter
from functools import cache
from itertools import pairwise

import pytest

from helpers.reference_loader import reference as ref
from helpers.shared_data import shared_path

pytestmark = pytest.mark.shared  # every test reads the shared folder

N_TOKENS = 629_885


@cache
def tokens() -> list[str]:
    path = shared_path("corpora", "machado", "machado.tokens-nltk3.2.5.txt.gz")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


@cache
def sentences() -> list[list[str]]:
    return ref.split_by_terminators(tokens())


def test_counts():
    toks = tokens()
    assert len(toks) == N_TOKENS
    counts = ref.count_ngrams(sentences(), 2, bos_eos=False)
    assert counts[0][("dia",)] == 776
    assert counts[0][("mulher",)] == 380
    assert counts[1][("o", "dia")] == 62
    assert counts[1][("a", "mulher")] == 139
    assert sum(counts[0].values()) == N_TOKENS
    # the same counts computed another way
    assert Counter(toks)["dia"] == 776
    assert Counter(pairwise(toks))[("a", "mulher")] == 139


def test_unigram_perplexity():
    m = ref.ReferenceModel(sentences(), order=1, smoothing="mle", bos_eos=False)
    log_prob, n, n_oov = m.evaluate(sentences())
    assert (n, n_oov) == (N_TOKENS, 0)
    log2_p = log_prob / math.log(2)
    assert log2_p == pytest.approx(-5982709.342760975, rel=1e-12)
    assert log2_p / n == pytest.approx(-9.498097815888574, rel=1e-12)
    assert m.perplexity(sentences()) == pytest.approx(723.123281725287, rel=1e-12)
    first, second = (m.sentence_logprob(s) / math.log(2) for s in sentences()[:2])
    assert first == pytest.approx(-94.47081343852943, rel=1e-12)
    assert second == pytest.approx(-136.40681288913103, rel=1e-12)


def _tutorial_bigram_scores(toks: list[str], sents: list[list[str]], buggy: bool) -> list[float]:
    """log2 P of each sentence by the tutorial's bigram formula (see the module docstring).

    buggy=True re-implements the tutorial's bug: it indexes the corpus token list instead of
    the sentence (tokens[0], tokens[i-1], tokens[i]), so every sentence of length L is scored
    as the first L tokens of the corpus."""
    unigram = Counter(toks)
    bigram = Counter(pairwise(toks))
    n = len(toks)
    scores = []
    for sentence in sents:
        seq = toks if buggy else sentence
        log2_p = math.log2(unigram[seq[0]] / n)
        for i in range(1, len(sentence)):
            log2_p += math.log2(bigram[(seq[i - 1], seq[i])] / unigram[seq[i - 1]])
        scores.append(log2_p)
    return scores


def test_tutorial_buggy_bigram():
    scores = _tutorial_bigram_scores(tokens(), sentences(), buggy=True)
    total = sum(scores)
    assert total == pytest.approx(-3664774.817399596, rel=1e-12)
    assert 2 ** (-total / N_TOKENS) == pytest.approx(56.421179878762686, rel=1e-12)
    assert scores[0] == pytest.approx(-55.62808216458857, rel=1e-12)
    assert scores[1] == pytest.approx(-83.96472522394838, rel=1e-12)


def test_correct_bigram_perplexity():
    sents = sentences()
    scores = _tutorial_bigram_scores(tokens(), sents, buggy=False)
    assert sum(scores) == pytest.approx(-3909521.8300271905, rel=1e-12)
    m = ref.ReferenceModel(sents, order=2, smoothing="mle", bos_eos=False)
    log_prob, n, _ = m.evaluate(sents)
    assert n == N_TOKENS
    assert log_prob / math.log(2) == pytest.approx(-3909521.8300271905, rel=1e-12)
    ppl = m.perplexity(sents)
    assert ppl == pytest.approx(73.86009329120165, rel=1e-12)
    assert ppl != pytest.approx(56.421179878762686, rel=1e-3)  # the buggy figure is wrong
    for sentence, tutorial in zip(sents[:50], scores[:50], strict=True):
        assert m.sentence_logprob(sentence) / math.log(2) == pytest.approx(tutorial, rel=1e-12)
