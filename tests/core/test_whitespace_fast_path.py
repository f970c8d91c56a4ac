"""The Rust whitespace tokenizer (Corpus.from_text(tokenizer="whitespace")) splits exactly like
the Python definition in fastppl.text: ``str.split()``, lines split on "\\n", terminators."""

from hypothesis import given, settings
from hypothesis import strategies as st

from fastppl import Corpus
from fastppl.text import tokenize_text

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
