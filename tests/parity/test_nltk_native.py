# ruff: noqa: RUF001  (the confusable quotes, dashes and letters are the point of these tests)
"""The native NLTK tokenizer (``engine="native"``, rust/corpus/nltk) against NLTK 3.10.4 itself
(``engine="python"``: NLTK's ``PunktSentenceTokenizer`` and ``NLTKWordTokenizer`` with the same
Punkt parameters), sentence for sentence and token for token: the bundled Machado corpus, Gutenberg
samples (need ../shared), and generated text full of the cases the rules treat specially."""

from __future__ import annotations

import lzma
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastppl
from fastppl import _core
from fastppl.errors import (
    CorpusDecodeError,
    FastpplError,
    InvalidArgumentError,
    InvalidTypeError,
    PunktDataError,
)
from fastppl.text import read_text, tokenize_text
from fastppl.tokenize import NLTK_REFERENCE, punkt_model, sent_tokenize, word_tokenize

LANGUAGES = ("english", "portuguese")


def test_reference_version():
    import nltk

    assert nltk.__version__ == NLTK_REFERENCE


def assert_same(text: str, language: str) -> None:
    """Both engines agree on sent_tokenize, word_tokenize and preserve_line=True."""
    native = sent_tokenize(text, language)
    python = sent_tokenize(text, language, engine="python")
    assert native == python
    for preserve_line in (False, True):
        a = word_tokenize(text, language, preserve_line)
        b = word_tokenize(text, language, preserve_line, engine="python")
        assert a == b, (preserve_line, text)


def assert_same_tokens_per_sentence(sentences: list[str], language: str) -> None:
    """`word_tokenize` of each sentence, as NLTK's `word_tokenize` applies it."""
    for s in sentences:
        a = word_tokenize(s, language, preserve_line=True)
        b = word_tokenize(s, language, preserve_line=True, engine="python")
        assert a == b, s


# ---------------------------------------------------------------------------------------------
# Real text


@pytest.fixture(scope="module")
def machado() -> str:
    return read_text(fastppl.datasets.machado(), skip_line_prefixes=("#", "%"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_machado_sentence_for_sentence_and_token_for_token(machado, language):
    native = sent_tokenize(machado, language)
    python = sent_tokenize(machado, language, engine="python")
    assert len(native) > 34_000
    assert native == python
    assert word_tokenize(machado, language) == [
        t for s in python for t in word_tokenize(s, language, True, engine="python")
    ]


def test_machado_lowercased_tutorial_tokens(machado):
    """The seed tutorial's tokens (lowercased text, English Punkt), as NLTK gives them."""
    text = machado.lower()
    tokens = word_tokenize(text)
    assert len(tokens) == 629_335
    assert tokens == word_tokenize(text, engine="python")


@pytest.mark.parametrize("shard", [0, 3])
def test_gutenberg_sample(gutenberg_dir, shard):
    """2 MB of a Gutenberg shard (English); benches/nltk_parity_gutenberg.py runs all 320 MB."""
    with lzma.open(gutenberg_dir / f"gutenberg-{shard:02d}.txt.xz", "rt", encoding="utf-8") as f:
        f.seek(0)
        text = f.read(2_000_000)
    sentences = sent_tokenize(text, "english", engine="python")
    assert sent_tokenize(text) == sentences
    assert_same_tokens_per_sentence(sentences, "english")


# ---------------------------------------------------------------------------------------------
# Generated text

PIECES = [
    # words, mixed scripts, marks, digits of other scripts, case-folding traps
    "word",
    "Word",
    "WORD",
    "the",
    "The",
    "and",
    "He",
    "She",
    "It",
    "A",
    "I",
    "é",
    "Él",
    "ΕΛΛΗΝΙΚΆ",
    "ελληνικά",
    "русский",
    "Москва",
    "日本語",
    "中文。",
    "देवनागरी",
    "हिन्दी",
    "عربي",
    "٣٤",
    "²",
    "½",
    "ſ",
    "İstanbul",
    "ıi",
    "ǅ",
    "_",
    "x²",
    "ﬁ",
    # abbreviations, initials, numbers, ordinals
    "Dr.",
    "Mr.",
    "Mrs.",
    "U.S.",
    "e.g.",
    "i.e.",
    "etc.",
    "St.",
    "Sr.",
    "D.",
    "J.",
    "S.",
    "a.",
    "No.",
    "vol.",
    "p.",
    "Jan.",
    "Inc.",
    "Co.",
    "1.",
    "12.",
    "3.5",
    "1,000",
    "1,000.50",
    "-2.",
    ".5",
    ",5",
    "1-2.",
    "2nd",
    "III.",
    "a.m.",
    "p.m.",
    "Ph.D.",
    # sentence ends and ellipses
    ".",
    "!",
    "?",
    "?!",
    "!!!",
    "...",
    "..",
    ". . .",
    ". .",
    "…",
    ".)",
    '."',
    ".'",
    ".”",
    "?”",
    # quotes of every kind
    '"',
    "'",
    "''",
    "``",
    "`",
    "“",
    "”",
    "‘",
    "’",
    "«",
    "»",
    "„",
    "‚",
    '"Hello',
    "'em",
    "'tis",
    "'Twas",
    "'s",
    "'ll",
    "'re",
    "'ve",
    "'m",
    "'d",
    "n't",
    "'",
    # contractions
    "can't",
    "cannot",
    "CANNOT",
    "Cannot",
    "won't",
    "don't",
    "I'm",
    "you're",
    "they'll",
    "gonna",
    "gotta",
    "gimme",
    "lemme",
    "wanna",
    "wanna.",
    "d'ye",
    "more'n",
    "whaddya",
    "ain't",
    "y'all",
    "o'clock",
    "rock'n'roll",
    "GİMME",
    "gımme",
    # punctuation, brackets, dashes, symbols
    ",",
    ";",
    ":",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "--",
    "---",
    "-",
    "—",
    "–",
    "‒",
    "―",
    "&",
    "@",
    "#",
    "$",
    "%",
    "*",
    "**",
    "/",
    "\\",
    "|",
    "~",
    "^",
    "+",
    "=",
    "§",
    "¶",
    "•",
    "3:30",
    "a,b",
    "x,",
    "(a.)",
    "[1]",
    "{x}",
    "<tag>",
    "(Hello.)",
    # URLs and addresses
    "http://example.com/a.b?c=d&e=f.",
    "www.example.org.",
    "user@example.com",
    "C:\\dir\\f.txt",
]
SEPARATORS = [
    " ",
    " ",
    " ",
    "",
    "\n",
    "\n\n",
    "\n \n",
    "  ",
    "\t",
    "\r\n",
    "\u00a0",
    "\u2009",
    "\u3000",
    "\x1c",
    "\x1f",
    "\x85",
    "\u2028",
    "\u200b",
    "\x00",
    "\x0b",
    "\x0c",
]


@st.composite
def punkt_texts(draw) -> str:
    n = draw(st.integers(0, 40))
    parts = []
    for _ in range(n):
        parts.append(draw(st.sampled_from(PIECES)))
        parts.append(draw(st.sampled_from(SEPARATORS)))
    return "".join(parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=punkt_texts(), language=st.sampled_from(LANGUAGES))
def test_generated_text(text, language):
    assert_same(text, language)


@st.composite
def long_lines(draw) -> str:
    """Lines of 512 bytes and more, which the native tokenizer cuts into segments first."""
    parts = []
    while len("".join(parts).encode()) < 600:
        parts.append(draw(st.sampled_from(PIECES)))
        parts.append(draw(st.sampled_from([" ", " ", " ", " ", "", "  ", "\t", "\u00a0"])))
    return "".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=long_lines())
def test_generated_long_lines(text):
    assert_same_tokens_per_sentence([text], "english")


@pytest.mark.parametrize(
    "word",
    ["देवनागरीcannot", "x\u0301cannot", "x²cannot", "x_cannot", "ΕΛΛΗΝΙΚΆ", "é²", "a\u0301 b"],
)
def test_long_lines_with_marks_and_other_numbers(word):
    """A long line takes the segmented path, which keeps a segment of letters whole: a combining
    mark (not alphanumeric to Python's ``re``, so a ``\\b`` before ``cannot``) or a superscript
    digit (not ``\\w`` to the ``regex`` module) must not count as a letter there (found by a
    long hypothesis run of ``test_generated_long_lines``)."""
    line = " ".join(["word"] * 120 + [word, "cannot", word + ".", "Next"])
    assert len(line.encode()) >= 512
    assert_same_tokens_per_sentence([line], "english")


def test_machado_whole_as_one_line(machado):
    """The whole of Machado with ``preserve_line=True``: one piece of 3 MB, which the native
    tokenizer cuts into parts tokenized in parallel."""
    assert word_tokenize(machado, "portuguese", preserve_line=True) == word_tokenize(
        machado, "portuguese", preserve_line=True, engine="python"
    )


def test_machado_paragraphs_whole(machado):
    """Each paragraph of Machado as one line (``preserve_line=True``): long texts take the
    native tokenizer's segmented path."""
    paragraphs = [p for p in machado.split("\n\n") if p.strip()]
    assert sum(len(p.encode()) >= 512 for p in paragraphs) > 1_000
    assert_same_tokens_per_sentence(paragraphs, "portuguese")


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(
        st.characters(codec="utf-8", exclude_categories=("Cs", "Co", "Cn")),
        max_size=80,
    )
)
def test_arbitrary_unicode(text):
    assert_same(text, "english")


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(
        st.sampled_from(list(".!?'\"`()[]{}<>-,:;@#$%&* \n\t\u00a0aA1é”’»«“‘")), max_size=60
    )
)
def test_punctuation_soup(text):
    assert_same(text, "english")


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\n\n\n",
        ".",
        "..",
        "?",
        "a.",
        "A. B. C.",
        '"Hi." "Bye."',
        "(He left.) She stayed.",
        'He said "no." -- then left.',
        "End.\u201d Next one.",
        "Mr. J. S. Bach wrote it. It is 3.5 m. long.",
        "I. INTRODUCTION\n\nThe work.",
        "Why?! Because... it works. . . mostly.",
        "x" * 10_000 + ". Y",
        "\x00. \x00 A.",
        "\x1c. A. \x1f",
        "foo.\r\nBar.",
    ],
)
@pytest.mark.parametrize("language", LANGUAGES)
def test_edge_cases(text, language):
    assert_same(text, language)


# ---------------------------------------------------------------------------------------------
# The whole pipeline


@pytest.mark.parametrize("sentences", ["terminators", "punkt", "lines", "none"])
@pytest.mark.parametrize("tokenizer", ["nltk", "whitespace"])
def test_tokenize_text_engines_agree(machado, tokenizer, sentences):
    text = machado[:300_000]
    native = tokenize_text(text, tokenizer, sentences)
    assert native == tokenize_text(text, tokenizer, sentences, engine="python")
    corpus = fastppl.Corpus.from_text(text, tokenizer=tokenizer, sentences=sentences)
    assert corpus.num_sentences == len(native)
    assert corpus.num_tokens == sum(map(len, native))


def test_corpus_engines_agree_on_machado_file(machado_text_path):
    kwargs = {"skip_line_prefixes": ("#", "%"), "lowercase": True, "language": "portuguese"}
    a = fastppl.Corpus.from_file(machado_text_path, sentences="punkt", **kwargs)
    b = fastppl.Corpus.from_file(machado_text_path, sentences="punkt", engine="python", **kwargs)
    assert (a.num_sentences, a.num_tokens) == (b.num_sentences, b.num_tokens)
    assert a.token_counts() == b.token_counts()


def test_invalid_engine():
    with pytest.raises(InvalidArgumentError, match="engine"):
        tokenize_text("a", engine="spacy")
    with pytest.raises(InvalidArgumentError, match="engine"):
        fastppl.Corpus.from_text("a", engine="spacy")
    with pytest.raises(InvalidArgumentError, match="engine"):
        word_tokenize("a", engine="java")


# ---------------------------------------------------------------------------------------------
# Bad input


def test_invalid_utf8_names_file_line_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"Good line.\nSecond \xff line.\n")
    with pytest.raises(CorpusDecodeError, match="byte offset 18") as info:
        fastppl.Corpus.from_file(path, tokenizer="nltk")
    assert (info.value.line, info.value.byte_offset) == (2, 18)
    assert str(path) in str(info.value)
    ok = fastppl.Corpus.from_file(path, tokenizer="nltk", errors="replace")
    assert "\ufffd" in ok.token_counts()


def _punkt_copy(tmp_path):
    import shutil

    folder = tmp_path / "punkt"
    shutil.copytree(fastppl.tokenize.BUNDLED_PUNKT / "english", folder)
    return folder


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("ortho_context.tab", "the\t36\nfoo\tbar\n", 2),
        ("ortho_context.tab", "the\t36\nonly-one-field\n", 2),
        ("collocations.tab", "a\tb\nc\td\te\n", 2),
        ("abbrev_types.txt", b"dr\nmr\n\xff\n", 3),
    ],
)
def test_malformed_punkt_file_names_file_and_line(tmp_path, name, content, line):
    folder = _punkt_copy(tmp_path)
    data = content.encode() if isinstance(content, str) else content
    (folder / name).write_bytes(data)
    with pytest.raises(PunktDataError, match=rf"{re.escape(name)}, line {line}") as info:
        _core.PunktModel(folder)
    assert info.value.line == line and info.value.path.endswith(name)
    assert isinstance(info.value, FastpplError)


def test_missing_punkt_file(tmp_path):
    folder = _punkt_copy(tmp_path)
    (folder / "sent_starters.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"sent_starters\.txt"):
        _core.PunktModel(folder)


def test_nul_bytes():
    text = "A\x00B. C\x00.\x00 D \x00"
    assert_same(text, "english")
    assert fastppl.Corpus.from_text(text).num_tokens == len(word_tokenize(text))


@pytest.mark.parametrize("text", [None, b"a b", 1, ["a"]])
@pytest.mark.parametrize("tokenize", [word_tokenize, sent_tokenize])
def test_text_of_another_type_is_a_type_error(tokenize, text):
    with pytest.raises(InvalidTypeError, match=f"text must be a str, got {type(text).__name__}"):
        tokenize(text)


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("preserve_line", ["no", "False", None, 1, [True]])
def test_preserve_line_must_be_a_bool(engine, preserve_line):
    """preserve_line was taken for its truth, as NLTK does: preserve_line="no" kept the text
    one sentence ('Hi.' a token) without a word."""
    with pytest.raises(InvalidTypeError, match=r"^preserve_line must be True or False, got "):
        word_tokenize("Hi. There.", preserve_line=preserve_line, engine=engine)


def test_preserve_line_takes_numpy_bools():
    import numpy as np

    assert word_tokenize("Hi. There.", preserve_line=np.bool_(True)) == ["Hi.", "There", "."]
    assert word_tokenize("Hi. There.", preserve_line=np.bool_(False)) == ["Hi", ".", "There", "."]


@pytest.mark.parametrize("preserve_line", [False, True])
def test_lone_surrogates_name_their_position_and_the_python_engine(preserve_line):
    """A Python str may hold lone surrogates (an emoji as UTF-16 halves); UTF-8 may not: the
    native engine names the first one, NLTK's code (engine="python") takes them."""
    text = "Ok. \ud83d\ude00 emoji"
    message = re.escape(
        "text holds a lone surrogate ('\\ud83d') at position 4: fastppl's native code reads "
        "UTF-8 text only; engine='python' (NLTK's own code) accepts it"
    )
    with pytest.raises(InvalidArgumentError, match=message):
        word_tokenize(text, preserve_line=preserve_line)
    with pytest.raises(InvalidArgumentError, match=message):
        sent_tokenize(text)
    assert word_tokenize(text, engine="python")[-2:] == ["\ud83d\ude00", "emoji"]
    assert sent_tokenize(text, engine="python") == [text]


def test_long_line_without_newline_is_linear():
    """A line with no newline costs time in proportion to its length (NLTK's own regexes time
    out on such input; the native engine has no limit). 16 MB in one line, 400,000 sentences:
    a linear tokenizer takes about a second (tens of MB/s even on one loaded core), while one
    that rescans the line, or the sentences before, for each sentence does at least 400,000^2
    / 2 = 8e10 steps (minutes at a step a nanosecond). The bound is an order of magnitude from
    both, so machine load cannot flip the verdict (a timing ratio of two runs could)."""
    unit = "Lorem ipsum dolor sit amet, Dr. Smith said. Consectetur (adipiscing) elit... "
    n = (16 << 20) // len(unit)
    text = unit * n
    start = time.perf_counter()
    corpus = fastppl.Corpus.from_text(text, tokenizer="nltk", sentences="punkt")
    seconds = time.perf_counter() - start
    assert corpus.num_tokens == n * len(word_tokenize(unit))
    assert seconds < 15, f"{seconds:.1f} s for a 16 MB line: quadratic?"


def test_one_sentence_without_spaces_is_linear():
    """No whitespace at all: Punkt's context for the word before each period grows back to the
    last break (NLTK's rule); the result must still come in linear time. 3 MB, 10^6 periods: a
    rule that rescans the context back to the text's start at each period reads 10^6 x 1.5 MB
    = 1.5e12 bytes (minutes even at 10 GB/s); a linear one takes well under a second. The
    bound is an order of magnitude from both."""
    n = 1_000_000
    text = "ab." * n
    start = time.perf_counter()
    sentences = punkt_model("english").sent_tokenize(text)
    seconds = time.perf_counter() - start
    assert "".join(sentences) == text
    assert seconds < 10, f"{seconds:.1f} s for 10^6 periods without a space: quadratic?"
    assert sent_tokenize("ab." * 300) == sent_tokenize("ab." * 300, engine="python")


# ---------------------------------------------------------------------------------------------
# Command line


@pytest.mark.parametrize("engine", ["native", "python"])
def test_cli_language_and_engine(tmp_path, capsys, engine):
    from fastppl.cli import main

    text = tmp_path / "t.txt"
    text.write_text("O Sr. Brás chegou. Ele saiu! E depois?\n" * 20, encoding="utf-8")
    out = tmp_path / "m.arpa"
    args = [
        "train",
        "-o",
        "2",
        "--smoothing",
        "witten_bell",
        "--tokenizer",
        "nltk",
        "--sentences",
        "punkt",
    ]
    args += ["--language", "portuguese", "--engine", engine, str(text), str(out), "-q"]
    assert main(args) == 0
    arpa = out.read_text(encoding="utf-8")
    assert "\tSr. Brás" in arpa and "\tsaiu !" in arpa  # Punkt kept "Sr." whole
    assert main([*args[:-3], "--language", "klingon", str(text), str(out), "-q"]) != 0
    assert "klingon" in capsys.readouterr().err
