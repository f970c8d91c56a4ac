"""`NGramModel.count` equals a brute-force Counter of the windows of the padded sentences.

Conventions: one `<s>` at the start (context only), `</s>` at the end (predicted); each window of
1..N tokens ending at a predicted token and lying inside its padded sentence is counted once.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastppl import Corpus, NGramModel
from helpers.ngram_oracle import BOS, EOS, count_windows

ALPHABET = ["a", "b", "c"]
sentences_st = st.lists(
    st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=9), min_size=1, max_size=8
).filter(lambda ss: any(ss))


@pytest.mark.parametrize("bos_eos", [True, False], ids=["bos_eos", "plain"])
@settings(max_examples=40, deadline=None)
@given(sentences=sentences_st, order=st.integers(1, 6))
def test_counts_match_windows(bos_eos, sentences, order):
    model = NGramModel.fit(
        Corpus.from_sentences(sentences), order=order, smoothing="mle", bos_eos=bos_eos
    )
    expected = count_windows(sentences, order, bos_eos)
    for g, c in expected.items():
        assert model.count(g) == c, g
    # the stored n-grams per order are exactly the counted windows (order 1: |V| instead)
    for m in range(2, order + 1):
        assert model.ngram_counts[m - 1] == sum(1 for g in expected if len(g) == m)
    # every other sequence over the vocabulary has count 0 (exhaustive up to length 3)
    symbols = [*ALPHABET, BOS, EOS, "<unk>", "zz"]
    for m in range(1, min(order, 3) + 1):
        for g in itertools.product(symbols, repeat=m):
            assert model.count(g) == expected.get(g, 0), g
    # beyond the order nothing is stored
    assert model.count([ALPHABET[0]] * (order + 1)) == 0


def test_padding_examples():
    c = Corpus.from_sentences([["a", "b"], ["a"]])
    m = NGramModel.fit(c, order=3, smoothing="mle")
    assert m.count([BOS]) == 0  # <s> is context only, never a unigram
    assert m.count([EOS]) == 2
    assert m.count([BOS, "a"]) == 2
    assert m.count([BOS, "a", "b"]) == 1
    assert m.count([BOS, "a", EOS]) == 1
    assert m.count([BOS, BOS, "a"]) == 0  # KenLM: one <s>, not NLTK's n-1
    assert m.count(["a", "b", EOS]) == 1
    assert m.count(["b", EOS, BOS]) == 0  # n-grams never cross sentences
    assert m.count(["b", "a"]) == 0
    assert m.count(("a",)) == 2 and m.count(["a"]) == 2  # any sequence type
    assert m.ngram_counts == [4, 4, 3]  # |V| = a b </s> <unk>; bigrams <s>a ab b</s> a</s>
    plain = NGramModel.fit(c, order=3, smoothing="mle", bos_eos=False)
    assert plain.count([EOS]) == 0 and plain.count([BOS, "a"]) == 0
    assert plain.count(["a", "b"]) == 1 and plain.count(["a"]) == 2
    assert plain.ngram_counts == [3, 1, 0]  # |V| = a b <unk>


def test_literal_unk_is_the_unknown_word():
    m = NGramModel.fit(Corpus.from_sentences([["<unk>", "a"]]), order=2, smoothing="mle")
    assert m.count(["<unk>"]) == 1
    assert m.count(["<unk>", "a"]) == 1
    assert m.count(["never-seen"]) == 0


def test_count_rejects_non_token_sequences():
    m = NGramModel.fit(Corpus.from_sentences([["a"]]), order=2, smoothing="mle")
    with pytest.raises(TypeError):
        m.count("a")
    with pytest.raises(TypeError):
        m.count([1, 2])
