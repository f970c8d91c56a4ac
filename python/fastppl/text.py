"""Reading, cleaning, tokenizing and sentence-splitting text (NLTK and whitespace).

Everything here returns plain Python data; :class:`fastppl.Corpus` hands it to the Rust core
(the whitespace tokenizer has a Rust fast path there).

NLTK's Punkt models (``punkt_tab``) are optional. When they are missing, fastppl warns once
(:class:`~fastppl.errors.PunktMissingWarning`) and falls back: ``tokenizer="nltk"`` runs NLTK's
word tokenizer without splitting sentences first (``word_tokenize(text, preserve_line=True)``),
and ``sentences="punkt"`` becomes ``"terminators"``.
"""

from __future__ import annotations

import bz2
import codecs
import functools
import gzip
import lzma
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    InvalidArgumentError,
    InvalidTypeError,
    PunktMissingWarning,
)

TOKENIZERS = ("nltk", "whitespace")
SENTENCE_MODES = ("terminators", "punkt", "lines", "none")
_OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a file, decompressed when it ends in ``.gz``, ``.xz`` or ``.bz2``."""
    path = Path(path)
    opener = _OPENERS.get(path.suffix, open)
    try:
        with opener(path, "rb") as f:
            return f.read()
    except FileNotFoundError as e:
        raise CorpusFileNotFoundError(f"corpus file not found: {path}") from e


def decode(data: bytes, path: str, encoding: str = "utf-8", errors: str = "strict") -> str:
    """Decodes ``data``; under ``errors="strict"`` an invalid byte raises
    :class:`CorpusDecodeError` naming ``path``, the byte offset and the line.

    >>> decode(b"caf\\xc3\\xa9", "x.txt")
    'café'
    """
    try:
        codecs.lookup(encoding)
    except LookupError as e:
        raise InvalidArgumentError(f"unknown encoding {encoding!r}") from e
    try:
        return data.decode(encoding, errors=errors)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CorpusDecodeError(
            f"{path}: invalid {encoding} at byte offset {e.start} (line {line}): {e.reason} "
            f"(byte {data[e.start : e.start + 1]!r}); pass errors='replace' or 'ignore' to "
            "read it anyway",
            path=path,
            byte_offset=e.start,
            line=line,
        ) from None
    except LookupError as e:  # an unknown error handler
        raise InvalidArgumentError(str(e)) from e


def clean_text(text: str, skip_line_prefixes: Sequence[str] = (), lowercase: bool = False) -> str:
    """Drops the lines starting with any of ``skip_line_prefixes``; lowercases if asked.

    Kept lines keep their newlines (the tutorial joins them that way).

    >>> clean_text("% header\\nA b\\n# title\\nC\\n", ("#", "%"), lowercase=True)
    'a b\\nc\\n'
    """
    if isinstance(skip_line_prefixes, str):
        raise InvalidTypeError("skip_line_prefixes must be a sequence of str, e.g. ('#', '%')")
    if skip_line_prefixes:
        prefixes = tuple(skip_line_prefixes)
        text = "".join(
            line for line in text.splitlines(keepends=True) if not line.startswith(prefixes)
        )
    return text.lower() if lowercase else text


def read_text(
    path: str | os.PathLike[str],
    encoding: str = "utf-8",
    errors: str = "strict",
    skip_line_prefixes: Sequence[str] = (),
    lowercase: bool = False,
) -> str:
    """Reads (and decompresses) a text file, then :func:`clean_text` it.

    >>> import fastppl
    >>> read_text(fastppl.datasets.machado(), skip_line_prefixes=("#", "%"))[:13]
    'Ressurreição\\n'
    """
    return clean_text(
        decode(read_bytes(path), str(path), encoding, errors), skip_line_prefixes, lowercase
    )


@functools.cache
def punkt_available(language: str = "english") -> bool:
    """Whether NLTK's Punkt model (``punkt_tab``) for ``language`` is installed."""
    import nltk

    try:
        nltk.data.find(f"tokenizers/punkt_tab/{language}/")
    except LookupError:
        return False
    return True


@functools.cache
def _warn_punkt_missing(language: str) -> None:
    warnings.warn(
        f"NLTK's Punkt model for {language!r} (punkt_tab) is not installed: tokenizing without "
        "Punkt sentence splitting (word_tokenize(..., preserve_line=True)); sentences='punkt' "
        "falls back to 'terminators'. Install it with nltk.download('punkt_tab') or point "
        "NLTK_DATA at a copy.",
        PunktMissingWarning,
        stacklevel=4,
    )


def is_terminator(token: str) -> bool:
    """The tutorial's rule: a sentence ends after ``t`` when ``t in ".!?"`` (``t`` non-empty).

    >>> [t for t in [".", "!?", "?!", "..."] if is_terminator(t)]
    ['.', '!?']
    """
    return bool(token) and token in ".!?"


def split_by_terminators(tokens: Iterable[str]) -> list[list[str]]:
    """Cuts a token stream after each terminator; the tail after the last one is a sentence.

    >>> split_by_terminators(["a", ".", "b", "!", "c"])
    [['a', '.'], ['b', '!'], ['c']]
    """
    out: list[list[str]] = []
    current: list[str] = []
    for t in tokens:
        current.append(t)
        if is_terminator(t):
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def nltk_words(text: str, language: str = "english") -> list[str]:
    """NLTK ``word_tokenize``, or its Punkt-free form when Punkt is missing (warns once)."""
    import nltk

    if punkt_available(language):
        return nltk.word_tokenize(text, language=language)
    _warn_punkt_missing(language)
    return nltk.word_tokenize(text, language=language, preserve_line=True)


def punkt_sentences(text: str, language: str = "english") -> list[str] | None:
    """NLTK's Punkt sentences, or None (after one warning) when Punkt is missing."""
    import nltk

    if punkt_available(language):
        return nltk.sent_tokenize(text, language=language)
    _warn_punkt_missing(language)
    return None


def tokenize_text(
    text: str,
    tokenizer: str = "nltk",
    sentences: str = "terminators",
    language: str = "english",
) -> list[list[str]]:
    """Tokenizes ``text`` into sentences of tokens (empty sentences dropped).

    Args:
        text: the text.
        tokenizer: ``"nltk"`` (``nltk.word_tokenize``) or ``"whitespace"`` (``str.split()``).
        sentences: ``"terminators"``, ``"punkt"``, ``"lines"`` or ``"none"`` (see
            :meth:`fastppl.Corpus.from_text`).
        language: the Punkt model's language.

    >>> tokenize_text("a b. c\\nd", tokenizer="whitespace", sentences="lines")
    [['a', 'b.', 'c'], ['d']]
    """
    if tokenizer not in TOKENIZERS:
        raise InvalidArgumentError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
    if sentences not in SENTENCE_MODES:
        raise InvalidArgumentError(f"sentences must be one of {SENTENCE_MODES}, got {sentences!r}")

    def words(chunk: str) -> list[str]:
        return nltk_words(chunk, language) if tokenizer == "nltk" else chunk.split()

    if sentences == "punkt":
        split = punkt_sentences(text, language)
        if split is not None:
            if tokenizer == "nltk":
                import nltk

                out = [nltk.word_tokenize(s, language=language, preserve_line=True) for s in split]
            else:
                out = [s.split() for s in split]
            return [s for s in out if s]
        sentences = "terminators"
    if sentences == "lines":
        return [s for s in (words(line) for line in text.splitlines()) if s]
    if sentences == "none":
        tokens = words(text)
        return [tokens] if tokens else []
    return split_by_terminators(words(text))
