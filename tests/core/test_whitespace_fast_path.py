"""The Rust whitespace tokenizer (Corpus.from_text(tokenizer="whitespace")) splits exactly like
the Python definition in fastppl.text: ``str.split()``, lines split on "\\n", terminators; and
so does ``_core.nltk_word_tokenize(..., words="whitespace")``, which the tokenizer benchmark
times as the cost of a call besides NLTK's word rules."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastppl import Corpus, _core
from fastppl.errors import InvalidArgumentError
from fastppl.text import tokenize_text
from fastppl.tokenize import punkt_model, sent_tokenize

# every character Python's str.split() treats as whitespace, plus a few that it does not
SPACES = [c for c in map(chr, range(0x3001)) if c.isspace()]
NOT_SPACES = ["\u200b", "\ufeff", "\u180e"]
ALPHABET = st.sampled_from(["a", "b", "é", ".", "!", "?", "!?", "<unk>", *SPACES, *NOT_SPACES])


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(ALPHABET, max_size=40), mode=st.sampled_from(["lines", "terminators", "none"])
)
def test_rust_split_equals_python_split(pieces, mode):
    text = "".join(pieces)
    expected = tokenize_text(text, tokenizer="whitespace", sentences=mode)
    assert list(Corpus.from_text(text, tokenizer="whitespace", sentences=mode)) == expected


def test_the_python_whitespace_set_is_what_we_think():
    assert "\x1c" in SPACES and "\x85" in SPACES and "\u3000" in SPACES
    assert not any(c.isspace() for c in NOT_SPACES)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(ALPHABET, max_size=40))
def test_word_tokenize_whitespace_rule_is_str_split(pieces):
    text = "".join(pieces)
    assert _core.nltk_word_tokenize(text, None, words="whitespace") == text.split()
    by_sentence = [t for s in sent_tokenize(text) for t in s.split()]
    assert _core.nltk_word_tokenize(text, punkt_model(), words="whitespace") == by_sentence


def test_word_tokenize_whitespace_rule_on_a_text_cut_for_the_threads():
    # 400 KB of one line: cut into parts tokenized in parallel, each cut at a space
    words = ["um", "dois.", "\u00e9", "tr\u00eas!", "x\u3000y", "\x1cz", "--", "a\u200bb"]
    text = " ".join(words[i % len(words)] + str(i % 7) for i in range(80_000))
    assert len(text) > 300_000
    assert _core.nltk_word_tokenize(text, None, words="whitespace") == text.split()


def test_word_tokenize_unknown_word_rule():
    with pytest.raises(InvalidArgumentError, match='words="spaces" is not valid'):
        _core.nltk_word_tokenize("a b", None, words="spaces")
