"""Tests of fastppl.text: reading, cleaning, tokenizing, the bundled Punkt parameters."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastppl import Corpus
from fastppl import text as fptext
from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    FastpplError,
    InvalidArgumentError,
    InvalidTypeError,
    PunktDataNotFoundError,
)
from fastppl.text import (
    TERMINATORS,
    clean_text,
    punkt_available,
    read_text,
    split_terminators,
    tokenize_text,
)

# ---------------------------------------------------------------------------------------------
# The real corpus


def test_tutorial_pipeline_on_machado(machado_tutorial_sentences):
    sents = machado_tutorial_sentences
    tokens = [t for s in sents for t in s]
    counts = Counter(tokens)
    assert len(tokens) == 629_335
    assert counts["dia"] == 776
    assert counts["mulher"] == 380
    assert all(s for s in sents)
    # every sentence but possibly the last ends with a terminator, and holds no other one
    assert all(s[-1] in TERMINATORS for s in sents[:-1])
    assert all(t not in TERMINATORS for s in sents for t in s[:-1])
    assert sents[0][:6] == ["naquele", "dia", ",", "—", "já", "lá"]


def test_tutorial_pipeline_matches_plain_nltk(machado_text_path, machado_tutorial_sentences):
    """read_text + tokenize_text is the tutorial's code, token for token."""
    import nltk

    with open(machado_text_path, encoding="utf-8") as f:
        text = "".join(line.lower() for line in f if not line.startswith(("#", "%")))
    expected = nltk.word_tokenize(text)
    assert [t for s in machado_tutorial_sentences for t in s] == expected


_NO_PUNKT_SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import nltk.data
    nltk.data.path[:] = [sys.argv[2]]  # a machine with no NLTK data anywhere
    from fastppl.text import punkt_available, read_text, tokenize_text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = read_text(sys.argv[1], skip_line_prefixes=("#", "%"), lowercase=True)
        sents = tokenize_text(text, tokenizer="nltk", sentences="terminators")
        again = tokenize_text("um. dois.", tokenizer="nltk", sentences="punkt")
        ws = tokenize_text("um . dois", tokenizer="whitespace", sentences="punkt")
    print(json.dumps({
        "available": punkt_available("english"),
        "tokens": sum(map(len, sents)),
        "dia": sum(s.count("dia") for s in sents),
        "again": again,
        "ws": ws,
        "warnings": [[w.category.__name__, str(w.message)] for w in caught],
    }))
    """
)


def test_bundled_punkt_without_nltk_data_on_machado(machado_text_path, tmp_path):
    """A fresh machine (no NLTK data, no NLTK_DATA) gets NLTK's tokens from the bundled Punkt
    parameters: the seed figures, and no warning."""
    empty = tmp_path / "empty_nltk_data"
    empty.mkdir()
    env = {k: v for k, v in __import__("os").environ.items() if k != "NLTK_DATA"}
    proc = subprocess.run(
        [sys.executable, "-c", _NO_PUNKT_SCRIPT, str(machado_text_path), str(empty)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["available"] is True
    assert out["tokens"] == 629_335
    assert out["dia"] == 776
    assert out["again"] == [["um", "."], ["dois", "."]]
    assert out["ws"] == [["um", "."], ["dois"]]
    assert out["warnings"] == []


# ---------------------------------------------------------------------------------------------
# Punkt parameters: bundled, on NLTK's path, or a clear error


@pytest.fixture
def no_punkt(monkeypatch, tmp_path):
    """nltk.data.path pointing at an empty folder."""
    import nltk.data

    empty = tmp_path / "empty_nltk_data"
    empty.mkdir()
    monkeypatch.setattr(nltk.data, "path", [str(empty)])
    return empty


def test_punkt_available(nltk_data_dir):
    assert punkt_available("english")
    assert punkt_available("portuguese")
    assert not punkt_available("klingon")


def test_bundled_languages_need_no_nltk_data(no_punkt):
    assert punkt_available("english") and punkt_available("portuguese")
    assert not punkt_available("german")
    text = "Ele disse bom dia. Ela riu! E foi embora"
    expected = [["Ele", "disse", "bom", "dia", "."], ["Ela", "riu", "!"], ["E", "foi", "embora"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for language in ("english", "portuguese"):
            assert tokenize_text(text, tokenizer="nltk", language=language) == expected
            assert tokenize_text(text, sentences="punkt", language=language) == expected


@pytest.mark.parametrize("engine", ["native", "python"])
def test_unknown_language_is_a_clear_error(no_punkt, engine):
    with pytest.raises(PunktDataNotFoundError, match=r"'german'.*punkt_tab") as info:
        tokenize_text("Guten Tag. Wie geht's?", language="german", engine=engine)
    assert info.value.language == "german"
    assert isinstance(info.value, LookupError) and isinstance(info.value, FastpplError)
    with pytest.raises(InvalidArgumentError, match="Punkt language name"):
        tokenize_text("x", language="../english", engine=engine)


def test_language_on_nltk_data_path_is_used(no_punkt, nltk_data_dir):
    """A language that is not bundled is read from NLTK's data path (here a copy of English
    under another name)."""
    import shutil

    import nltk.data

    root = no_punkt
    shutil.copytree(
        nltk_data_dir / "tokenizers" / "punkt_tab" / "english",
        root / "tokenizers" / "punkt_tab" / "english_copy",
    )
    assert nltk.data.path == [str(root)]
    text = "Mr. Smith arrived. He sat down."
    assert tokenize_text(text, sentences="punkt", language="english_copy") == tokenize_text(
        text, sentences="punkt", language="english"
    )


def test_whitespace_terminators_never_needs_punkt(no_punkt):
    for mode in ("terminators", "lines", "none"):
        assert tokenize_text("a .\nb", tokenizer="whitespace", sentences=mode, language="german")


# ---------------------------------------------------------------------------------------------
# Sentence modes and tokenizers on small texts


def test_terminators_mode():
    text = "a . b ! c ? d .! e !? f .!? g ... h ?! i"
    assert tokenize_text(text, tokenizer="whitespace", sentences="terminators") == [
        ["a", "."],
        ["b", "!"],
        ["c", "?"],
        ["d", ".!"],
        ["e", "!?"],
        ["f", ".!?"],
        ["g", "...", "h", "?!", "i"],  # '...' and '?!' are not in '.!?'
    ]


def test_terminators_are_the_tutorial_rule():
    candidates = {".", "!", "?", ".!", "!?", ".!?", "?!", "!.", "..", "...", "?.", "a", "。"}
    assert {t for t in candidates if t in ".!?"} == TERMINATORS


def test_split_terminators():
    assert split_terminators(["x", "?", "y", "!"]) == [["x", "?"], ["y", "!"]]
    assert split_terminators(["."]) == [["."]]
    assert split_terminators(iter(["a", "b"])) == [["a", "b"]]
    assert split_terminators([]) == []
    with pytest.raises(InvalidTypeError, match="tokens must be an iterable of tokens, not one str"):
        split_terminators("a b.")  # not its characters


def test_nltk_terminators(nltk_data_dir):
    text = "Mr. Smith came home. He slept! Did he? Yes"
    assert tokenize_text(text) == [
        ["Mr.", "Smith", "came", "home", "."],
        ["He", "slept", "!"],
        ["Did", "he", "?"],
        ["Yes"],
    ]


def test_punkt_mode(nltk_data_dir):
    text = "Mr. Smith came home. He slept (a lot).\nThen he woke up"
    assert tokenize_text(text, tokenizer="nltk", sentences="punkt") == [
        ["Mr.", "Smith", "came", "home", "."],
        ["He", "slept", "(", "a", "lot", ")", "."],
        ["Then", "he", "woke", "up"],
    ]
    assert tokenize_text(text, tokenizer="whitespace", sentences="punkt") == [
        ["Mr.", "Smith", "came", "home."],
        ["He", "slept", "(a", "lot)."],
        ["Then", "he", "woke", "up"],
    ]


def test_punkt_mode_portuguese(nltk_data_dir):
    text = "O Sr. Brás Cubas morreu. Era uma sexta-feira."
    assert tokenize_text(text, sentences="punkt", language="portuguese") == [
        ["O", "Sr.", "Brás", "Cubas", "morreu", "."],
        ["Era", "uma", "sexta-feira", "."],
    ]


def test_lines_mode(nltk_data_dir):
    text = "Bom dia. Tudo bem?\n\n   \n(sim) ok\nfim"
    assert tokenize_text(text, tokenizer="whitespace", sentences="lines") == [
        ["Bom", "dia.", "Tudo", "bem?"],
        ["(sim)", "ok"],
        ["fim"],
    ]
    assert tokenize_text(text, tokenizer="nltk", sentences="lines") == [
        ["Bom", "dia", ".", "Tudo", "bem", "?"],
        ["(", "sim", ")", "ok"],
        ["fim"],
    ]


def test_none_mode(nltk_data_dir):
    text = "um . dois!\ntrês"
    assert tokenize_text(text, tokenizer="whitespace", sentences="none") == [
        ["um", ".", "dois!", "três"]
    ]
    assert tokenize_text(text, tokenizer="nltk", sentences="none") == [
        ["um", ".", "dois", "!", "três"]
    ]


@pytest.mark.parametrize("tokenizer", ["nltk", "whitespace"])
@pytest.mark.parametrize("mode", ["terminators", "punkt", "lines", "none"])
@pytest.mark.parametrize("text", ["", " ", "\n\n", " \t\r\n\x0c"])
def test_empty_text_has_no_sentence(tokenizer, mode, text, nltk_data_dir):
    assert tokenize_text(text, tokenizer=tokenizer, sentences=mode) == []


def test_whitespace_is_str_split():
    # Python's whitespace, not ASCII only: the Rust fast path must match these.
    text = "a\u00a0b\x1cc\x1dd\x1ee\x1ff\x85g\u2003h\u3000i\u2028j\x0bk\x0cl\tm\rn o\u200bp"
    expected = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o\u200bp"]
    assert text.split() == expected
    assert tokenize_text(text, tokenizer="whitespace", sentences="none") == [expected]


def test_invalid_arguments():
    with pytest.raises(InvalidArgumentError, match="tokenizer='spacy'"):
        tokenize_text("a", tokenizer="spacy")
    with pytest.raises(InvalidArgumentError, match="sentences='paragraphs'"):
        tokenize_text("a", sentences="paragraphs")
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        tokenize_text("a", tokenizer="whitespace", language="")
    with pytest.raises(InvalidArgumentError):
        tokenize_text(b"a", tokenizer="whitespace")


# ---------------------------------------------------------------------------------------------
# Reading and cleaning


def test_clean_text():
    text = "% header\n# Title\nLine One\n  # not a title\n%tail"
    assert clean_text(text, ("#", "%")) == "Line One\n  # not a title\n"
    assert clean_text(text, ["#", "%"], lowercase=True) == "line one\n  # not a title\n"
    assert clean_text(text) == text
    assert clean_text(text, lowercase=True) == text.lower()
    assert clean_text("A\nB", ("#",)) == "A\nB"
    assert clean_text("", ("#",)) == ""
    assert clean_text("#a\n#b\n", ("#",)) == ""
    assert clean_text("ab\nXy\n", ("X",), lowercase=True) == "ab\n"  # prefixes before lowering


def test_clean_text_rejects_bad_prefixes():
    with pytest.raises(InvalidArgumentError, match="single string"):
        clean_text("a", "#%")
    with pytest.raises(InvalidArgumentError, match="non-empty"):
        clean_text("a", ("#", ""))


def test_read_text_machado_like_tutorial(machado_text_path):
    text = read_text(machado_text_path, skip_line_prefixes=("#", "%"), lowercase=True)
    with open(machado_text_path, encoding="utf-8") as f:
        expected = "".join(line.lower() for line in f if not line.startswith(("#", "%")))
    assert text == expected
    assert len(text) == 3_034_780


def test_read_text_plain_and_newlines(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes("Olá\r\nmundo\rfim\n".encode())
    assert read_text(p) == "Olá\nmundo\nfim\n"
    assert read_text(str(p), lowercase=True) == "olá\nmundo\nfim\n"


def test_read_text_other_encoding(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("ação".encode("latin-1"))
    assert read_text(p, encoding="latin-1") == "ação"
    with pytest.raises(InvalidArgumentError, match="codec"):
        read_text(p, encoding="no-such-codec")
    with pytest.raises(InvalidArgumentError, match="errors='surrogateescape'"):
        read_text(p, errors="surrogateescape")


@pytest.mark.parametrize("encoding", ["rot13", "base64", "hex", "zlib"])
def test_a_codec_that_is_no_text_encoding_is_refused(tmp_path, encoding: str):
    """They decode bytes to bytes (or str to str, rot13 raising TypeError on bytes): the reading
    raised their own TypeError or binascii.Error, a traceback on the command line."""
    p = tmp_path / "t.txt"
    p.write_text("a b\n", encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match=rf"encoding='{encoding}' is not a text encod"):
        read_text(p, encoding=encoding)
    with pytest.raises(InvalidArgumentError, match="not a text encoding"):
        Corpus.from_file(p, encoding=encoding, tokenizer="whitespace")


def test_invalid_utf8_raises_with_offset_and_line(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"first line\nsecond\n\xc3\xa9t\xe9\nlast\n")
    with pytest.raises(CorpusDecodeError) as info:
        read_text(p)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, FastpplError)
    assert err.byte_offset == 21  # after 'first line\n' (11) + 'second\n' (7) + 'é' (2) + 't'
    assert err.line == 3
    assert err.path == str(p)
    assert str(p) in str(err) and "byte offset 21" in str(err) and "line 3" in str(err)


def test_invalid_utf8_first_byte(tmp_path):
    p = tmp_path / "bad0.txt"
    p.write_bytes(b"\xff")
    with pytest.raises(CorpusDecodeError) as info:
        read_text(p)
    assert (info.value.byte_offset, info.value.line) == (0, 1)


def test_invalid_utf8_in_compressed_file_counts_decompressed_bytes(tmp_path):
    p = tmp_path / "bad.txt.gz"
    with gzip.open(p, "wb") as f:
        f.write(b"ok\nok\n\x80")
    with pytest.raises(CorpusDecodeError) as info:
        read_text(p)
    assert (info.value.byte_offset, info.value.line) == (6, 3)


def test_errors_replace_and_ignore(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"ab\xffcd\n\xfe")
    assert read_text(p, errors="replace") == "ab\ufffdcd\n\ufffd"
    assert read_text(p, errors="ignore") == "abcd\n"
    assert tokenize_text(read_text(p, errors="replace"), tokenizer="whitespace") == [
        ["ab\ufffdcd", "\ufffd"]
    ]


def test_missing_file(tmp_path):
    p = tmp_path / "nope.txt"
    with pytest.raises(CorpusFileNotFoundError) as info:
        read_text(p)
    err = info.value
    assert isinstance(err, FileNotFoundError) and isinstance(err, FastpplError)
    assert err.path == str(p) and err.filename == str(p) and err.errno == 2
    assert str(p) in str(err)
    with pytest.raises(CorpusFileNotFoundError):
        read_text(tmp_path / "nope.txt.xz")


@pytest.mark.parametrize(
    ("suffix", "opener"),
    [(".gz", gzip.open), (".xz", lzma.open), (".bz2", bz2.open), (".XZ", lzma.open)],
)
def test_compressed_round_trip(tmp_path, suffix, opener):
    content = "% cabeçalho\nÉ um texto.\r\nCom duas linhas!\n"
    p = tmp_path / f"corpus.txt{suffix}"
    with opener(p, "wb") as f:
        f.write(content.encode())
    assert read_text(p) == "% cabeçalho\nÉ um texto.\nCom duas linhas!\n"
    assert read_text(p, skip_line_prefixes=("%",), lowercase=True) == (
        "é um texto.\ncom duas linhas!\n"
    )


#: The compressions fastppl reads: the function that compresses bytes so, and the extension.
COMPRESSIONS = {
    "gzip": (gzip.compress, ".gz"),
    "xz": (lzma.compress, ".xz"),
    "bzip2": (bz2.compress, ".bz2"),
}


@pytest.mark.parametrize("codec", sorted(COMPRESSIONS))
@pytest.mark.parametrize("name", ["corrupt{}", "corrupt.txt"])
def test_corrupt_compressed_file(tmp_path, codec, name):
    """A stream cut short or with bad data (gzip's raised a bare zlib.error) is refused naming
    its compression, whatever the file's name."""
    compress, suffix = COMPRESSIONS[codec]
    data = compress(b"a b c\n" * 100)
    p = tmp_path / name.format(suffix)
    for corrupt in (data[: len(data) // 2], data[:10] + b"\xff" * 50):
        p.write_bytes(corrupt)
        with pytest.raises(CorpusDecodeError, match=rf"cannot decompress .* as {codec} \("):
            read_text(p)


@pytest.mark.parametrize("codec", sorted(COMPRESSIONS))
@pytest.mark.parametrize("name", ["corpus.txt", "corpus", "corpus.gz", "corpus.XZ", "c.bz2"])
def test_a_compressed_text_is_read_whatever_its_name(tmp_path, codec, name):
    """Text files were decompressed by extension (model files by their first bytes): gzip in
    corpus.txt was decoded as text ("... is not valid utf-8: invalid start byte"; with
    errors="replace", garbage), an xz named .gz was "cannot decompress ... as .gz (Not a gzipped
    file)". The compression is told by the first bytes, by every reader."""
    content = "Olá mundo .\nSegunda linha\n"
    path = tmp_path / name
    path.write_bytes(COMPRESSIONS[codec][0](content.encode()))
    assert read_text(path) == read_text(path, errors="replace") == content
    assert "".join(fptext.iter_text(path, chunk_bytes=3)) == content
    assert fptext.read_bytes(path) == content.encode()
    for tokenizer in ("whitespace", "kenlm", "nltk"):
        corpus = Corpus.from_file(path, tokenizer=tokenizer, sentences="lines")
        expected = Corpus.from_text(content, tokenizer=tokenizer, sentences="lines")
        assert corpus.token_counts() == expected.token_counts(), tokenizer
        assert corpus.sentence_lengths().tolist() == [3, 2], tokenizer
    words = Corpus.from_sentences([["mundo", "x"]])
    limited = words.limit_vocab(vocab_file=path).token_counts()
    assert limited == words.limit_vocab(vocab=content.split()).token_counts()


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz", ".bz2"])
def test_a_text_under_a_compressed_name_is_text(tmp_path, suffix):
    """Only strong magic numbers are taken for a compression: gzip's with its method byte,
    bzip2's "BZh" and digit with its first block's magic (a text may start with "BZh9"); and a
    text named .gz is read as text, as a model file so named is."""
    for content in ("BZh9 is bzip2's header\n", "BZh91AY&S\n", "plain\n"):
        path = tmp_path / f"t{suffix}"
        path.write_text(content)
        assert read_text(path) == content
        assert fptext.read_bytes(path) == content.encode()


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".bz2"])
def test_empty_compressed_file_is_refused_and_an_empty_stream_is_read(tmp_path, suffix):
    """A compressed file of no bytes (never written whole) is refused by every codec: gzip
    alone read it as an empty text. A compressed empty text reads as one."""
    empty = tmp_path / f"empty{suffix}"
    empty.write_bytes(b"")
    with pytest.raises(CorpusDecodeError, match="cannot decompress"):
        read_text(empty)
    with pytest.raises(CorpusDecodeError, match="cannot decompress"):
        Corpus.from_file(empty, tokenizer="whitespace")
    stream = tmp_path / f"stream{suffix}"
    with {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}[suffix](stream, "wb"):
        pass
    assert read_text(stream) == ""
    assert len(Corpus.from_file(stream, tokenizer="whitespace")) == 0


#: Files in the compressions fastppl does not read, by the name its error gives them: "x\n"
#: compressed by the zstd and lz4 command lines, the first bytes of the others.
UNREAD_COMPRESSIONS = {
    "zstd": bytes.fromhex("28b52ffd0458110000780aaefde922"),
    "lz4": bytes.fromhex("04224d186440a702000080780a0000000096935f9e"),
    "zip": b"PK\x03\x04\x14\x00\x00\x00\x08\x00",
    "7-Zip": b"7z\xbc\xaf\x27\x1c\x00\x04",
    "lzip": b"LZIP\x01\x0c\x00\x3c\x1b",
    "compress (.Z)": b"\x1f\x9d\x90x\n",
}


@pytest.mark.parametrize("compression", sorted(UNREAD_COMPRESSIONS))
@pytest.mark.parametrize("name", ["corpus.txt", "corpus.jsonl.zst", "corpus.txt.gz"])
def test_a_text_in_a_compression_fastppl_does_not_read_is_named(tmp_path, compression, name):
    """Such a file was decoded as text ("... is not valid utf-8: invalid start byte at byte
    offset 1"; with errors="replace" read as garbage), or, named .gz, "cannot decompress ... as
    .gz (Not a gzipped file ...)". It is refused by its first bytes, whatever its name and
    errors=, by every reader, naming the compression."""
    path = tmp_path / name
    path.write_bytes(UNREAD_COMPRESSIONS[compression])
    reads = [
        lambda: read_text(path),
        lambda: read_text(path, errors="replace"),
        lambda: "".join(fptext.iter_text(path, chunk_bytes=1)),
        lambda: fptext.read_bytes(path),
        lambda: Corpus.from_file(path, tokenizer="whitespace", sentences="lines"),
        lambda: Corpus.from_files([path], tokenizer="kenlm", errors="ignore"),
        lambda: Corpus.from_file(path, tokenizer="nltk"),
        lambda: Corpus.from_sentences([["a"]]).limit_vocab(vocab_file=path),
    ]
    for read in reads:
        with pytest.raises(CorpusDecodeError) as info:
            read()
        message = str(info.value)
        assert message.startswith(
            f"{str(path)!r} is compressed with {compression}, which fastppl does not read (it "
            "reads plain text, and gzip, xz and bzip2 files): decompress it first ("
        ), message
        assert info.value.path == str(path) and info.value.byte_offset is None
    assert "(zstd -d)" in str(info.value) or compression != "zstd"


def test_a_text_starting_with_the_word_lzip_is_text(tmp_path):
    """lzip's magic number is "LZIP" and its version: a text starting with the word is text."""
    path = tmp_path / "lzip.txt"
    path.write_text("LZIP is a compressor\n")
    assert read_text(path) == "LZIP is a compressor\n"


def test_a_url_in_a_compression_fastppl_does_not_read_is_named():
    """fsspec's files are not peeked but read and sought back: the check reads the same."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    fs.pipe("/fastppl-unread/a.jsonl.zst", UNREAD_COMPRESSIONS["zstd"])
    fs.pipe("/fastppl-unread/b.txt.gz", gzip.compress(b"b c\n"))
    url = "memory://fastppl-unread/a.jsonl.zst"
    with pytest.raises(
        CorpusDecodeError, match=rf"^{re.escape(repr(url))} is compressed with zstd"
    ):
        read_text(url)
    assert read_text("memory://fastppl-unread/b.txt.gz") == "b c\n"  # (sought back)
    fs.pipe("/fastppl-unread/c.txt", lzma.compress(b"c d\n"))
    assert read_text("memory://fastppl-unread/c.txt") == "c d\n"  # (told by its first bytes)
    fs.rm("/fastppl-unread", recursive=True)


def test_read_text_is_deterministic_on_paths(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("a b\n", encoding="utf-8")
    assert read_text(Path(p)) == read_text(str(p)) == "a b\n"


# ---------------------------------------------------------------------------------------------
# Properties (whitespace tokenizer: no Punkt involved)

_pieces = st.sampled_from(
    ["a", "bb", "Olá", ".", "!", "?", ".!", "!?", ".!?", "?!", "...", " ", "  ", "\n", "\t", "\xa0"]
)
_texts = st.lists(_pieces, max_size=40).map("".join)


@given(_texts)
def test_whitespace_modes_keep_every_token(text):
    flat = text.split()
    for mode in ("terminators", "lines", "none"):
        sents = tokenize_text(text, tokenizer="whitespace", sentences=mode)
        assert [t for s in sents for t in s] == flat
        assert all(sents)
    lines = tokenize_text(text, tokenizer="whitespace", sentences="lines")
    assert lines == [line.split() for line in text.split("\n") if line.split()]


@given(st.lists(st.sampled_from(["a", "b", ".", "!", "?", ".!?", "?!", "..."]), max_size=30))
def test_split_terminators_properties(tokens):
    sents = split_terminators(tokens)
    assert [t for s in sents for t in s] == tokens
    for i, s in enumerate(sents):
        assert s
        assert all(t not in ".!?" for t in s[:-1])
        if i < len(sents) - 1:
            assert s[-1] in ".!?"


# ---- reading in pieces (iter_text): the same text, whatever the piece size ------------------
@given(
    lines=st.lists(st.text(alphabet=st.sampled_from("ab é\r\t%Σς€𝄞"), max_size=12), max_size=12),
    final_newline=st.booleans(),
    size=st.integers(min_value=1, max_value=9),
    translate=st.booleans(),
)
def test_pieces_join_to_the_whole_text(tmp_path_factory, lines, final_newline, size, translate):
    data = ("\n".join(lines) + ("\n" if final_newline and lines else "")).encode()
    p = tmp_path_factory.mktemp("pieces") / "t.txt"
    p.write_bytes(data)
    options = {"skip_line_prefixes": ("%",), "lowercase": True, "translate_newlines": translate}
    pieces = list(fptext.iter_text(p, chunk_bytes=size, **options))
    assert "".join(pieces) == read_text(p, **options)
    # every piece but the last ends a line
    assert all(piece.endswith("\n") for piece in pieces[:-1])


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 64])
def test_invalid_utf8_offset_and_line_across_pieces(tmp_path, size):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"first line\nsecond\n\xc3\xa9t\xe9\nlast\n")
    with pytest.raises(CorpusDecodeError) as info:
        list(fptext.iter_text(p, chunk_bytes=size))
    assert (info.value.byte_offset, info.value.line) == (21, 3)
    # a multi-byte character cut between pieces is not an error
    p.write_bytes("é€𝄞\n".encode() * 5)
    assert "".join(fptext.iter_text(p, chunk_bytes=size)) == "é€𝄞\n" * 5


def test_line_corpora_are_read_in_pieces(tmp_path, monkeypatch):
    """Corpus.from_file reads one-sentence-per-line text in pieces, with the same result."""
    from fastppl import Corpus

    p = tmp_path / "t.txt"
    p.write_text("a b c\n\nd e\r\nf  g h\n" * 50 + "last line", encoding="utf-8")
    whole = {
        t: list(Corpus.from_file(p, tokenizer=t, sentences="lines"))
        for t in ("kenlm", "whitespace")
    }
    monkeypatch.setattr(fptext, "CHUNK_BYTES", 7)
    for t, sentences in whole.items():
        assert list(Corpus.from_file(p, tokenizer=t, sentences="lines")) == sentences


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.sampled_from("ab é\r\t%Σ€𝄞\x0b"), max_size=12), max_size=12),
    final_newline=st.booleans(),
    size=st.integers(min_value=1, max_value=9),
    tokenizer=st.sampled_from(["kenlm", "whitespace"]),
    lowercase=st.booleans(),
)
def test_line_files_read_as_utf8_bytes_give_the_same_corpus(
    tmp_path_factory, lines, final_newline, size, tokenizer, lowercase
):
    """Corpus.from_file hands a UTF-8 file read a sentence a line (KenLM's reading, whitespace
    lines) to the core as bytes, in pieces of whole lines: the sentences of from_text on
    read_text's string (KenLM's reading keeps "\\r", whitespace lines read CR and CRLF as line
    ends), whatever the piece size."""
    from unittest import mock

    from fastppl import Corpus

    data = ("\n".join(lines) + ("\n" if final_newline and lines else "")).encode()
    path = tmp_path_factory.mktemp("lines") / "t.txt"
    path.write_bytes(data)
    options = {"skip_line_prefixes": ("%",), "lowercase": lowercase}
    text = read_text(path, translate_newlines=tokenizer != "kenlm", **options)
    expected = list(Corpus.from_text(text, tokenizer=tokenizer, sentences="lines"))
    with mock.patch.object(fptext, "CHUNK_BYTES", size):
        got = Corpus.from_file(path, tokenizer=tokenizer, sentences="lines", **options)
    assert list(got) == expected
    assert b"".join(fptext.iter_line_bytes(path, chunk_bytes=size)) == data


@pytest.mark.parametrize(
    ("tokenizer", "sentences"),
    [
        ("whitespace", "lines"),
        ("whitespace", "terminators"),
        ("nltk", "lines"),
        ("nltk", "punkt"),
        ("nltk", "terminators"),
        ("kenlm", "lines"),
    ],
)
def test_a_str_reads_as_the_file_holding_it(tmp_path, tokenizer, sentences):
    """The same characters give the same corpus from a str (from_text, from_texts,
    evaluate_texts) as from a file: "\\r\\n" and a lone "\\r" end lines in both (a lone "\\r" was
    a space in a str and a line end in a file), except in KenLM's reading, where it is a space
    in both."""
    from fastppl import Corpus, NGramModel

    text = "% skip\ra b c\r\nd. e\rf g!\n\r\nh i\r"
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode())
    options = {"tokenizer": tokenizer, "sentences": sentences, "skip_line_prefixes": ("%",)}
    from_file = Corpus.from_file(path, **options)
    assert list(Corpus.from_text(text, **options)) == list(from_file)
    assert list(Corpus.from_texts([text, text], **options)) == list(from_file) * 2
    model = NGramModel.fit(Corpus.from_sentences([["a", "b", "c", "d"]]), 2, "witten_bell")
    assert model.evaluate_texts([text], **options).perplexity == pytest.approx(
        model.evaluate(from_file).perplexity
    )
    if tokenizer == "whitespace" and sentences == "lines":
        assert list(from_file) == [["a", "b", "c"], ["d.", "e"], ["f", "g!"], ["h", "i"]]


@pytest.mark.parametrize("tokenizer", ["kenlm", "whitespace"])
@pytest.mark.parametrize("size", [3, 64])
def test_line_files_with_invalid_utf8_name_line_and_offset(tmp_path, monkeypatch, tokenizer, size):
    """Invalid UTF-8 in a later piece of a file read as bytes: the error names the file's line
    and byte offset, as reading it in Python does."""
    from fastppl import Corpus

    monkeypatch.setattr(fptext, "CHUNK_BYTES", size)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nbad \xff byte\nmore\n")
    with pytest.raises(CorpusDecodeError, match=r"byte offset 14 \(line 2\)"):
        Corpus.from_file(bad, tokenizer=tokenizer, sentences="lines")


@pytest.mark.parametrize("sentences", ["punkt", "terminators", "none"])
def test_files_read_as_utf8_bytes_give_the_same_corpus(tmp_path, sentences):
    """Corpus.from_file hands a plain UTF-8 file's bytes to the native tokenizer (no Python str
    of the file): CRLF and CR line ends, a BOM and non-ASCII text give what from_text gives on
    read_text's string, and invalid UTF-8 still names its line and byte offset."""
    from fastppl import Corpus
    from fastppl.errors import CorpusDecodeError
    from fastppl.text import read_text

    path = tmp_path / "t.txt"
    path.write_bytes(
        "\ufeffOlá, Mr. Smith.\r\nHe said “no”.\rDr. Who? Yes!\n\nÚltima linha".encode()
    )
    by_bytes = Corpus.from_file(path, tokenizer="nltk", sentences=sentences)
    by_text = Corpus.from_text(read_text(path), tokenizer="nltk", sentences=sentences)
    assert list(by_bytes) == list(by_text)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nbad \xff byte\n")
    with pytest.raises(CorpusDecodeError, match=r"byte offset 14 \(line 2\)"):
        Corpus.from_file(bad, tokenizer="nltk", sentences=sentences)


#: characters Python's own Unicode tables assign (Rust's tables are newer: a character assigned
#: later may have a lowercase form in Rust only, the documented difference)
_ASSIGNED = st.characters(
    codec="utf-8", exclude_categories=("Cn", "Cs"), include_characters="\r\n#%ΣİẞK"
)


@given(
    text=st.text(alphabet=_ASSIGNED, max_size=200),
    prefixes=st.lists(st.sampled_from(["#", "%", "Σ", "A", "\u00e9", "ab"]), max_size=3),
    lowercase=st.booleans(),
)
def test_files_cleaned_in_the_core_equal_clean_text(tmp_path_factory, text, prefixes, lowercase):
    """Corpus.from_file cleans a UTF-8 file's bytes in the core (skipped lines, lowercasing):
    the same tokens as Python's clean_text on read_text's string, for any text of characters
    Python knows, CR and CRLF line ends, and prefixes met before lowercasing."""
    from fastppl import Corpus
    from fastppl.text import read_text

    path = tmp_path_factory.mktemp("clean") / "t.txt"
    path.write_bytes(text.encode())
    options = {"lowercase": lowercase, "skip_line_prefixes": prefixes, "sentences": "none"}
    by_bytes = Corpus.from_file(path, tokenizer="nltk", **options)
    by_text = Corpus.from_text(read_text(path), tokenizer="nltk", **options)
    assert list(by_bytes) == list(by_text)


def test_the_tutorial_reading_takes_the_bytes_path(tmp_path, monkeypatch):
    """Skipping lines and lowercasing no longer send a file through Python strings: read_text
    is never called for a valid UTF-8 file read with the tutorial's options."""
    from fastppl import Corpus
    from fastppl import corpus as fpcorpus

    path = tmp_path / "t.txt"
    path.write_text("# Capítulo I\nEra uma VEZ. O Dr. Bento\r\n% fim\nSAIU.\n", encoding="utf-8")

    def refuse(*args, **kwargs):
        raise AssertionError("read through a Python str")

    expected = Corpus.from_text(
        "era uma vez. o dr. bento\nsaiu.\n", tokenizer="nltk", sentences="punkt"
    )
    monkeypatch.setattr(fpcorpus, "read_text", refuse)
    got = Corpus.from_file(
        path, tokenizer="nltk", sentences="punkt", lowercase=True, skip_line_prefixes=("#", "%")
    )
    assert (
        list(got)
        == list(expected)
        == [["era", "uma", "vez", "."], ["o", "dr.", "bento", "saiu", "."]]
    )


def test_urls_are_read_through_fsspec():
    """A ``protocol://`` path is read through fsspec (compressed by its extension, cleaned and
    tokenized as a local file); a missing one is CorpusFileNotFoundError, an unknown protocol
    InvalidArgumentError."""
    fsspec = pytest.importorskip("fsspec")
    from fastppl import Corpus
    from fastppl.errors import CorpusFileNotFoundError, InvalidArgumentError

    fs = fsspec.filesystem("memory")
    text = "# header\nEra uma vez. O Dr. Bento saiu!\nFim.\n"
    fs.pipe("/fastppl-test/a.txt", text.encode())
    fs.pipe("/fastppl-test/a.txt.xz", lzma.compress(text.encode()))
    fs.pipe("/fastppl-test/a.txt.gz", gzip.compress(text.encode()))
    options = {"tokenizer": "nltk", "skip_line_prefixes": ("#",), "lowercase": True}
    expected = list(Corpus.from_text(text, **options))
    assert expected[0] == ["era", "uma", "vez", "."]
    for name in ("a.txt", "a.txt.xz", "a.txt.gz"):
        url = f"memory://fastppl-test/{name}"
        assert list(Corpus.from_file(url, **options)) == expected
        assert fptext.read_text(url) == text
        assert "".join(fptext.iter_text(url, chunk_bytes=5)) == text
    with pytest.raises(CorpusFileNotFoundError, match=r"memory://fastppl-test/none\.txt"):
        Corpus.from_file("memory://fastppl-test/none.txt")
    with pytest.raises(InvalidArgumentError, match="Protocol not known: nosuchproto"):
        Corpus.from_file("nosuchproto://bucket/a.txt")
    fs.rm("/fastppl-test", recursive=True)


def test_train_ray_lists_url_inputs():
    """`fastppl train --ray` takes a URL of a folder or a glob, listed through fsspec."""
    fsspec = pytest.importorskip("fsspec")
    from fastppl.cli import _ray_inputs
    from fastppl.errors import InvalidArgumentError

    fs = fsspec.filesystem("memory")
    for name in ("b.txt", "a.txt.xz", "notes.md"):
        fs.pipe(f"/fastppl-shards/{name}", b"x")
    assert _ray_inputs("memory://fastppl-shards/*.txt*") == [
        "memory:///fastppl-shards/a.txt.xz",
        "memory:///fastppl-shards/b.txt",
    ]
    assert len(_ray_inputs("memory://fastppl-shards")) == 3
    with pytest.raises(InvalidArgumentError, match="no file matches"):
        _ray_inputs("memory://fastppl-shards/*.zst")
    fs.rm("/fastppl-shards", recursive=True)


# ---------------------------------------------------------------------------------------------
# Corpus text options that nothing would use


@pytest.mark.parametrize(
    ("kwargs", "ignored"),
    [
        ({"tokenizer": "whitespace", "language": "portuguese"}, "language='portuguese'"),
        ({"tokenizer": "whitespace", "sentences": "lines", "engine": "python"}, "engine='python'"),
        ({"tokenizer": "kenlm", "language": 5}, "language=5"),
        (
            {"tokenizer": "kenlm", "language": "german", "engine": "python"},
            "language='german' and engine='python'",
        ),
    ],
)
def test_corpus_refuses_nltk_options_that_nothing_uses(tmp_path, kwargs, ignored):
    """``language`` and ``engine`` only matter to NLTK's code (``tokenizer="nltk"`` or
    ``sentences="punkt"``); given to a reading that does not use it, they were silently
    ignored (the tokens of whitespace splitting came back, whatever the language)."""
    path = tmp_path / "t.txt"
    path.write_text("a b. c\n", encoding="utf-8")
    match = f"^{re.escape(ignored)} would be ignored: tokenizer='"
    for make in (
        lambda: Corpus.from_text("a b. c", **kwargs),
        lambda: Corpus.from_texts(["a b. c"], **kwargs),
        lambda: Corpus.from_file(path, **kwargs),
    ):
        with pytest.raises(InvalidArgumentError, match=match):
            make()


def test_corpus_checks_the_language_before_any_text(no_punkt):
    """A language with no Punkt parameters is refused even when no text is given (it was found
    out only at the first text: ``from_texts([], language="german")`` gave an empty corpus)."""
    with pytest.raises(PunktDataNotFoundError, match="'german'"):
        Corpus.from_texts([], language="german")
    with pytest.raises(PunktDataNotFoundError, match="'german'"):
        Corpus.from_texts(iter([]), tokenizer="whitespace", sentences="punkt", language="german")
    with pytest.raises(InvalidArgumentError, match="language=5 is not a Punkt language name"):
        Corpus.from_texts([], language=5, engine="python")
    assert Corpus.from_texts([], tokenizer="whitespace", language="english").num_documents == 0


@pytest.mark.parametrize("tokenizer", ["nltk", "whitespace", "kenlm"])
@pytest.mark.parametrize("bad", [None, b"a b", 3])
def test_from_texts_names_the_text_that_is_not_a_str(tokenizer, bad):
    """The message said only 'text must be str, got NoneType', not which of the texts."""
    kind = type(bad).__name__
    with pytest.raises(InvalidTypeError, match=rf"^texts\[1\] must be a str, got {kind}$"):
        Corpus.from_texts(iter(["a b", bad]), tokenizer=tokenizer)
    with pytest.raises(InvalidTypeError, match=rf"^text must be a str, got {kind}$"):
        Corpus.from_text(bad, tokenizer=tokenizer)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_unknown_language_lists_the_available_ones(monkeypatch, tmp_path, engine):
    """The error for a language found nowhere lists the languages there are (bundled, and on
    NLTK's data path) and, for one in another case (NLTK's names are lowercase, 'English' is
    not found either), names the one meant; it listed none, and said nothing of the case."""
    import shutil

    import nltk.data

    from fastppl.tokenize import BUNDLED_PUNKT, sent_tokenize, word_tokenize

    shutil.copytree(BUNDLED_PUNKT / "english", tmp_path / "tokenizers/punkt_tab/english_copy")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    available = "the languages available are 'english', 'english_copy', 'portuguese' ("
    with pytest.raises(PunktDataNotFoundError) as info:
        word_tokenize("Guten Tag.", "german", engine=engine)
    assert available in str(info.value)
    assert info.value.available == ["english", "english_copy", "portuguese"]
    assert "did you mean" not in str(info.value)
    with pytest.raises(PunktDataNotFoundError) as info:
        sent_tokenize("Hello. There.", "English", engine=engine)
    assert str(info.value).startswith(
        "no Punkt parameters for language 'English' (NLTK's language names are lowercase: did "
        f"you mean 'english'?): {available}"
    )


def test_compression_told_from_short_reads_and_unseekable_streams(tmp_path) -> None:
    """The first bytes are read however few each read gives (a pipe whose writer wrote only
    some yet) and without seeking back (a streamed URL, such as fsspec's HTTPStreamFile, which
    refuses to seek): a compressed text is still decompressed."""
    import bz2
    import gzip
    import io

    from fastppl import text

    class Trickle(io.RawIOBase):
        """Gives at most 2 bytes a read and refuses to seek back, as a slow stream does."""

        def __init__(self, data: bytes) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return True  # (as fsspec's HTTPStreamFile says, then refuses)

        def seek(self, *args: object) -> int:
            raise ValueError("Cannot seek streaming HTTP file")

        def read(self, size: int | None = -1) -> bytes:
            return self._data.read(2 if size is None or size < 0 else min(size, 2))

    for compress in (gzip.compress, bz2.compress, lambda data: data):
        data = compress(b"hello world\n" * 3)
        opened = text._open_url
        text._open_url = lambda url, data=data: Trickle(data)  # type: ignore[assignment]
        try:
            assert text.read_bytes("https://h/corpus.txt") == b"hello world\n" * 3
        finally:
            text._open_url = opened
