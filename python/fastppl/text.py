"""Reading, cleaning and tokenizing text: the Python definition of fastppl's text pipeline.

Pure functions, no state. The pipeline is

1. :func:`read_text`: read a file (gzip, xz, bzip2 decompressed, and one in another compression,
   zstd, lz4..., refused, all told by its first bytes), decode it, normalize line endings to
   ``"\\n"``, then :func:`clean_text`;
2. :func:`clean_text`: drop the lines that start with given prefixes, optionally lowercase;
3. :func:`tokenize_text`: split into sentences of tokens.

The Rust core has a fast path for ``tokenizer="whitespace"`` and ``tokenizer="kenlm"``; the
functions here are their definition.

``tokenizer="nltk"`` and ``sentences="punkt"`` are NLTK's ``word_tokenize`` and
``sent_tokenize`` (NLTK 3.10.4 output), run natively by default (:mod:`fastppl.tokenize`:
``engine="native"``) or by NLTK's own code (``engine="python"``), with the Punkt parameters bundled
for English and Portuguese or found on NLTK's data path; a language with no parameters raises
:class:`~fastppl.errors.PunktDataNotFoundError`.

>>> tokenize_text("Bom dia. Que tal?", tokenizer="whitespace")  # no token is a terminator
[['Bom', 'dia.', 'Que', 'tal?']]
>>> tokenize_text("Bom dia . Que tal ?", tokenizer="whitespace")
[['Bom', 'dia', '.'], ['Que', 'tal', '?']]
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import itertools
import lzma
import re
import zlib
from collections.abc import Iterable, Iterator
from os import PathLike, fspath
from pathlib import PurePosixPath
from typing import Any, BinaryIO, Literal, get_args

from fastppl import _core
from fastppl._checks import check_iterable, check_utf8
from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    InvalidArgumentError,
    InvalidTypeError,
)
from fastppl.tokenize import ENGINES, Engine, punkt_available, punkt_model, sent_tokenize

__all__ = [
    "KENLM_SPACES",
    "SENTENCE_MODES",
    "TERMINATORS",
    "TOKENIZERS",
    "DecodeErrors",
    "SentenceMode",
    "Tokenizer",
    "clean_text",
    "is_url",
    "iter_text",
    "kenlm_sentences",
    "kenlm_words",
    "punkt_available",
    "python_newlines",
    "read_text",
    "resolve_sentences",
    "split_terminators",
    "tokenize_text",
    "url_filesystem",
]

Tokenizer = Literal["nltk", "whitespace", "kenlm"]
SentenceMode = Literal["terminators", "punkt", "lines", "none"]
DecodeErrors = Literal["strict", "replace", "ignore"]

TOKENIZERS: tuple[str, ...] = get_args(Tokenizer)
SENTENCE_MODES: tuple[str, ...] = get_args(SentenceMode)
DECODE_ERRORS: tuple[str, ...] = get_args(DecodeErrors)

#: The tokens that end a sentence in ``sentences="terminators"`` mode: exactly the non-empty
#: strings ``t`` for which the tutorial's test ``t in ".!?"`` is true.
TERMINATORS: frozenset[str] = frozenset({".", "!", "?", ".!", "!?", ".!?"})

#: KenLM's token separators (``util/spaces.cc``, what ``query`` uses): ASCII whitespace only.
KENLM_SPACES = " \t\n\v\f\r"
_KENLM_SPLIT = re.compile("[" + re.escape(KENLM_SPACES) + "]+")

#: The opener of each compression that is read, by its name in `_core.read_compression`.
_OPENERS = {"gzip": gzip.open, "xz": lzma.open, "bzip2": bz2.open}

#: The compression named by a text file's extension (lowercase): what the file is read as only
#: when its first bytes are unknown, so that an empty ``.gz``, ``.xz`` or ``.bz2`` file is refused
#: (it holds no compressed stream: it was never written whole).
_EXTENSIONS = {".gz": "gzip", ".xz": "xz", ".bz2": "bzip2"}

#: A path that starts with ``protocol://`` is read through fsspec (any filesystem it knows:
#: ``s3://``, ``gs://``, ``hdfs://``, ``https://``, ``file://``, ...).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(path: object) -> bool:
    """Whether `path` is a ``protocol://`` URL, read through fsspec rather than as a local file.

    >>> is_url("s3://bucket/corpus.txt.xz"), is_url("corpus.txt"), is_url("C:/corpus.txt")
    (True, False, False)
    """
    return isinstance(path, str) and _URL.match(path) is not None


def url_filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of `url` and the path on it (fsspec is an optional dependency).

    Raises:
        InvalidArgumentError: fsspec is not installed, or does not know the protocol (or the
            package of its filesystem is missing).

    >>> fs, path = url_filesystem("memory://corpus/a.txt")
    >>> type(fs).__name__, path
    ('MemoryFileSystem', '/corpus/a.txt')
    """
    try:
        import fsspec
    except ImportError:
        raise InvalidArgumentError(
            f"reading {url!r} needs fsspec: pip install fsspec (and the package of its "
            "filesystem, e.g. s3fs or gcsfs)"
        ) from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ValueError, ImportError) as exc:  # an unknown protocol, or its package missing
        raise InvalidArgumentError(f"cannot read {url!r}: {exc}") from None


def _open_url(url: str) -> BinaryIO:
    """`url` opened for reading through fsspec."""
    fs, path = url_filesystem(url)
    try:
        return fs.open(path, "rb")
    except FileNotFoundError:
        raise CorpusFileNotFoundError(None, url) from None


def _choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InvalidArgumentError(
            f"{name}={value!r} is not valid; expected one of {', '.join(map(repr, choices))}"
        )


#: Bytes read (decompressed) at a time by `iter_text`.
CHUNK_BYTES = 1 << 23

#: Bytes at the start of a file that tell its compression (more than any magic number).
_HEAD_BYTES = 16


def _head(raw: BinaryIO) -> tuple[bytes, BinaryIO]:
    """The first bytes of the file `raw` (opened, nothing read yet), or all of a shorter file,
    and a file that reads `raw` from its start. A regular local file's are peeked (one read of
    a regular file gives them all, and its bytes are then read with no copy); any other's (a
    pipe whose writer has written only some yet, a streamed URL that cannot seek back) are read,
    however few bytes each read gives, and `_Prefixed` gives them back first."""
    if isinstance(raw, io.BufferedReader) and raw.seekable():
        return raw.peek(_HEAD_BYTES)[:_HEAD_BYTES], raw
    head = b""
    while len(head) < _HEAD_BYTES and (more := raw.read(_HEAD_BYTES - len(head))):
        head += more
    return head, _Prefixed(head, raw)


class _Prefixed(io.RawIOBase):
    """The file `raw` read from its start, whose first bytes `head` were read already: they
    are given back first, so that neither a peek (whose bytes may be too few) nor a seek (which
    a pipe or a streamed URL refuses) is needed."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        super().__init__()
        self._rest, self._raw = head, raw

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if not self._rest:
            return self._raw.read(-1 if size is None else size)
        head, self._rest = self._rest, b""
        if size is None or size < 0:
            return head + self._raw.read()
        if size < len(head):
            head, self._rest = head[:size], head[size:]
            return head
        return head + self._raw.read(size - len(head))

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        data = self.read(len(memoryview(buffer).cast("B")))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)


def refuse_unread_compression(path: str | PathLike[str], raw: BinaryIO) -> None:
    """Refuses the text file `path`, opened as `raw` (nothing read yet), when its first bytes
    are those of a compression fastppl does not read (zstd, lz4, zip, 7-Zip, lzip, compress:
    the core's `_core.unread_compression`, which refuses such a model file too), whatever its
    name: its bytes would be decoded as text, a decode error at best. (A regular file is only
    peeked; another `raw` may have been read from, see `_head`.)

    Raises:
        CorpusDecodeError: naming the file, the compression, those read and the command that
            decompresses it.
    """
    _refuse_unread(path, _head(raw)[0])


def _refuse_unread(path: str | PathLike[str], head: bytes) -> None:
    """`refuse_unread_compression` of a file whose first bytes are `head`."""
    found = _core.unread_compression(head)
    if found is not None:
        name, command = found
        raise CorpusDecodeError(
            f"{fspath(path)!r} is compressed with {name}, which fastppl does not read (it reads "
            f"plain text, and gzip, xz and bzip2 files): decompress it first ({command})",
            fspath(path),
        )


def compression(path: str | PathLike[str], head: bytes) -> str | None:
    """The compression (``"gzip"``, ``"xz"``, ``"bzip2"``) of the text file `path`, whose first
    bytes are `head` (see `_head`), or None for a plain one: told by its first
    bytes whatever its name (`_core.read_compression`, the magic numbers by which model files are
    read), by its extension only when there are none (an empty file)."""
    if head:
        return _core.read_compression(head)
    return _EXTENSIONS.get(PurePosixPath(fspath(path)).suffix.lower())


def _read_chunks(path: str | PathLike[str], size: int) -> Iterator[bytes]:
    """The (decompressed: see `compression`) bytes of `path` (a local path or a URL, see
    `is_url`), `size` at a time; a file in a compression that is not read is refused
    (`refuse_unread_compression`)."""
    codec = None
    try:
        raw = _open_url(path) if is_url(path) else open(path, "rb")  # noqa: SIM115 (closed below)
        with raw:
            head, rest = _head(raw)
            _refuse_unread(path, head)
            codec = compression(path, head)
            with rest if codec is None else _OPENERS[codec](rest, "rb") as f:
                while chunk := f.read(size):
                    yield chunk
                if codec is not None and not head:
                    # gzip reads an empty file as an empty stream (xz and bzip2 refuse it): a
                    # compressed file of no bytes at all is one that was never written whole
                    raise EOFError("the file is empty, it holds no compressed stream")
    except FileNotFoundError:
        raise CorpusFileNotFoundError(None, fspath(path)) from None
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:  # (zlib's: bad deflate data)
        if codec is None or isinstance(exc, PermissionError | IsADirectoryError):
            raise
        raise CorpusDecodeError(
            f"cannot decompress {fspath(path)!r} as {codec} ({exc})", fspath(path)
        ) from exc


def read_bytes(path: str | PathLike[str]) -> bytes:
    """The bytes of a text file, decompressed as :func:`read_text` does, in one read (a plain
    file's bytes are then in memory once: joining one piece copies nothing)."""
    return b"".join(_read_chunks(path, -1))


def iter_line_bytes(path: str | PathLike[str], chunk_bytes: int | None = None) -> Iterator[bytes]:
    """The (decompressed) bytes of ``path`` in pieces of whole lines (about ``chunk_bytes``
    bytes each, default `CHUNK_BYTES`; the last one possibly without a final newline); joined,
    the file's bytes. Linear in time for a file with very long lines (or none)."""
    carry: list[bytes] = []  # bytes after the last b"\n" seen, joined once a line ends
    for data in _read_chunks(path, chunk_bytes or CHUNK_BYTES):
        end = data.rfind(b"\n") + 1
        if end == 0:
            carry.append(data)
            continue
        yield b"".join([*carry, data[:end]]) if carry else data[:end]
        carry = [data[end:]] if end < len(data) else []
    if carry:
        yield b"".join(carry)


def iter_text(
    path: str | PathLike[str],
    encoding: str = "utf-8",
    errors: DecodeErrors = "strict",
    skip_line_prefixes: Iterable[str] = (),
    lowercase: bool = False,
    *,
    translate_newlines: bool = True,
    chunk_bytes: int | None = None,
) -> Iterator[str]:
    """:func:`read_text` in pieces of whole lines (about ``chunk_bytes`` bytes each, default
    `CHUNK_BYTES`; the last one possibly without a final newline), so that a large file is never
    whole in memory; joined, the pieces are exactly what :func:`read_text` returns. Same
    arguments and errors."""
    decoder = decoder_for(encoding, errors)
    prefixes = _check_prefixes(skip_line_prefixes)
    fed = newlines = 0  # bytes given to the decoder so far, and the b"\n" among them
    # text after the last "\n" seen, in pieces: joined only once a line ends, so that a file
    # with a very long line (or none at all) is read in linear time
    carry: list[str] = []
    for data in itertools.chain(_read_chunks(path, chunk_bytes or CHUNK_BYTES), [b""]):
        pending = decoder.getstate()[0]
        try:
            decoded = decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            both = pending + data
            offset = fed - len(pending) + exc.start
            line = newlines - pending.count(b"\n") + both.count(b"\n", 0, exc.start) + 1
            raise CorpusDecodeError(
                f"{fspath(path)!r} is not valid {encoding}: {exc.reason} at byte offset {offset} "
                f"(line {line}); pass errors='replace' or errors='ignore' to read it anyway",
                fspath(path),
                offset,
                line,
            ) from None
        except UnicodeError as exc:  # a codec's own check, e.g. UTF-16 without a BOM
            raise CorpusDecodeError(
                f"{fspath(path)!r} cannot be read as {encoding}: {exc} (near byte offset {fed}); "
                "is the encoding right?",
                fspath(path),
                fed,
            ) from None
        fed += len(data)
        newlines += data.count(b"\n")
        end = decoded.rfind("\n") + 1 if data else len(decoded)
        if end == 0 and data:  # no line ends in this piece yet
            carry.append(decoded)
            continue
        text = "".join([*carry, decoded[:end]])
        carry = [decoded[end:]]
        if translate_newlines:
            text = python_newlines(text)
        text = _clean_text(text, prefixes, lowercase)
        if text:
            yield text


def read_text(
    path: str | PathLike[str],
    encoding: str = "utf-8",
    errors: DecodeErrors = "strict",
    skip_line_prefixes: Iterable[str] = (),
    lowercase: bool = False,
    *,
    translate_newlines: bool = True,
) -> str:
    r"""Read a text file, decompressing and cleaning it.

    The file is decompressed (gzip, xz, bzip2: told by its first bytes, whatever its name), decoded,
    and its line endings normalized as Python's text mode does (``"\r\n"`` and ``"\r"`` become
    ``"\n"``) unless ``translate_newlines=False`` (KenLM's reading: only ``"\n"`` ends a line,
    ``"\r"`` is a space). It is then passed to :func:`clean_text`.

    Args:
        path: The file.
        encoding: A Python codec name.
        errors: ``"strict"`` raises on undecodable bytes; ``"replace"`` puts U+FFFD in their place;
            ``"ignore"`` drops them.
        skip_line_prefixes: Lines starting with any of these strings are dropped (e.g.
            ``("#", "%")`` for the Machado corpus). A bare string is refused (ambiguous).
        lowercase: Lowercase the text (``str.lower``), after dropping lines.
        translate_newlines: Turn ``"\r\n"`` and ``"\r"`` into ``"\n"``.

    Returns:
        The text; kept lines keep their ``"\n"``.

    Raises:
        CorpusFileNotFoundError: The file does not exist.
        CorpusDecodeError: ``errors="strict"`` and the bytes do not decode; the message names the
            file, the byte offset (0-based, in the decompressed bytes) and the line (1-based). Also
            raised for a corrupt compressed file, and for one compressed in a format fastppl does
            not read (zstd, lz4, zip, 7-Zip, lzip, compress: by its first bytes, whatever its
            name; see `refuse_unread_compression`), then without offset.
        InvalidArgumentError: Unknown ``encoding`` or ``errors``, or bad ``skip_line_prefixes``
            (refused as :func:`clean_text` refuses them).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = p.write_bytes(b"% header\nOl\xc3\xa1 Mundo\r\n")
    >>> read_text(p, skip_line_prefixes=("%",), lowercase=True)
    'olá mundo\n'
    """
    return "".join(
        iter_text(
            path,
            encoding,
            errors,
            skip_line_prefixes,
            lowercase,
            translate_newlines=translate_newlines,
        )
    )


def decoder_for(encoding: str, errors: str) -> codecs.IncrementalDecoder:
    """A fresh incremental decoder of ``encoding`` with the error handler ``errors`` (one of
    ``"strict"``, ``"replace"``, ``"ignore"``), or :class:`InvalidArgumentError` naming the one
    that is not known, or a codec that is no text encoding (``"rot13"``, ``"base64"``: bytes to
    bytes or str to str; :func:`open` refuses them too)."""
    _choice("errors", errors, DECODE_ERRORS)
    try:
        codec = codecs.lookup(encoding)
    # (ValueError: a name holding a lone surrogate or a NUL, which the lookup cannot encode)
    except (LookupError, TypeError, ValueError):
        raise InvalidArgumentError(f"encoding={encoding!r} is not a known codec") from None
    if not codec._is_text_encoding:  # what open() checks
        raise InvalidArgumentError(
            f"encoding={encoding!r} is not a text encoding (its codec does not decode bytes to str)"
        )
    return codec.incrementaldecoder(errors)


def _check_prefixes(skip_line_prefixes: Iterable[str]) -> tuple[str, ...]:
    """``skip_line_prefixes`` as a tuple, checked: the one check of this option, made once by
    every entry point that takes it (`Corpus`'s text constructors through
    ``_TextOptions.checked``, `read_text`, `clean_text`...), whether the lines are then dropped
    in Python or in the core.

    Refused: a bare str (its characters would be taken for the prefixes), something that is not
    iterable (:class:`InvalidTypeError`), a prefix that is not a str or is empty (every line
    starts with ``""``: all would be dropped), and a prefix holding a lone surrogate, which no
    line of text read as UTF-8 (all the core reads) can start with; the message names the
    prefix, ``skip_line_prefixes[1]``.
    """
    if isinstance(skip_line_prefixes, str | bytes):
        raise InvalidArgumentError(
            f"skip_line_prefixes={skip_line_prefixes!r} must be a sequence of strings, "
            f"e.g. ('#', '%'), not a single string"
        )
    try:
        prefixes = tuple(skip_line_prefixes)
    except TypeError:
        raise InvalidTypeError(
            "skip_line_prefixes must be a sequence of strings, e.g. ('#', '%'), got "
            f"{type(skip_line_prefixes).__name__}"
        ) from None
    for index, prefix in enumerate(prefixes):
        name = f"skip_line_prefixes[{index}]"
        if not isinstance(prefix, str) or not prefix:
            raise InvalidArgumentError(
                f"{name}: every prefix must be a non-empty string, got {prefix!r}"
                + (" (every line starts with it: all would be dropped)" if prefix == "" else "")
            )
        check_utf8(name, prefix)
    return prefixes


def python_newlines(text: str) -> str:
    """``text`` with its line endings ``"\\r\\n"`` and ``"\\r"`` turned into ``"\\n"``, as Python's
    text mode reads a file: how every reading but KenLM's (``"\\r"`` a space there) sees lines,
    from a file or from a ``str``.

    >>> python_newlines("a\\r\\nb\\rc\\n")
    'a\\nb\\nc\\n'
    """
    if "\r" in text:
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def clean_text(text: str, skip_line_prefixes: Iterable[str] = (), lowercase: bool = False) -> str:
    r"""Drop the lines that start with given prefixes, and optionally lowercase.

    Lines are separated by ``"\n"`` only; a kept line keeps its ``"\n"``, so the result is the kept
    lines joined as they were (the tutorial's ``text += line.lower()``). Prefixes are compared
    before lowercasing.

    Args:
        text: The text.
        skip_line_prefixes: Lines starting with any of these strings are dropped.
        lowercase: Lowercase the result with ``str.lower``.

    Returns:
        The cleaned text.

    Raises:
        InvalidArgumentError: ``skip_line_prefixes`` is a bare string, or holds an empty string,
            something else than a str, or a str holding a lone surrogate (refused by every
            function that takes line prefixes, as the core reads UTF-8 only).
        InvalidTypeError: ``skip_line_prefixes`` is not iterable.

    >>> clean_text("% header\n# Capítulo I\nEra uma vez.\n", ("#", "%"), lowercase=True)
    'era uma vez.\n'
    """
    return _clean_text(text, _check_prefixes(skip_line_prefixes), lowercase)


def _clean_text(text: str, prefixes: tuple[str, ...], lowercase: bool) -> str:
    """`clean_text` with ``prefixes`` already checked (`_check_prefixes`): for the callers that
    checked them once, and clean many texts or pieces of one."""
    if prefixes:
        lines = text.split("\n")
        kept = [line + "\n" for line in lines[:-1] if not line.startswith(prefixes)]
        if lines[-1] and not lines[-1].startswith(prefixes):
            kept.append(lines[-1])
        text = "".join(kept)
    return text.lower() if lowercase else text


def resolve_sentences(tokenizer: str, sentences: str | None) -> str:
    """The sentence mode for ``tokenizer`` (None: ``"lines"`` for ``"kenlm"``, else
    ``"terminators"``); ``"kenlm"`` reads lines only.

    >>> resolve_sentences("kenlm", None), resolve_sentences("nltk", None)
    ('lines', 'terminators')
    """
    if sentences is None:
        return "lines" if tokenizer == "kenlm" else "terminators"
    _choice("sentences", sentences, SENTENCE_MODES)
    if tokenizer == "kenlm" and sentences != "lines":
        raise InvalidArgumentError(
            f"tokenizer='kenlm' reads one sentence per line, as KenLM does; "
            f"sentences={sentences!r} is not possible with it (use 'lines' or leave it out)"
        )
    return sentences


def split_terminators(tokens: Iterable[str]) -> list[list[str]]:
    """Split a token sequence into sentences, each ending after a terminator token.

    A terminator is a token in :data:`TERMINATORS` (``.``, ``!``, ``?``, ``.!``, ``!?``,
    ``.!?``). The tokens after the last terminator form a final sentence. No sentence is empty.

    Args:
        tokens: The tokens.

    Returns:
        The sentences.

    >>> split_terminators(["a", ".", "b", "!?", "c"])
    [['a', '.'], ['b', '!?'], ['c']]
    >>> split_terminators([])
    []
    """
    sentences: list[list[str]] = []
    current: list[str] = []
    for tok in check_iterable(tokens, "tokens", "tokens"):
        current.append(tok)
        if tok in TERMINATORS:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def kenlm_sentences(text: str) -> list[list[str]]:
    r"""Split a text exactly as KenLM's ``lmplz`` and ``query`` read it (the definition of
    ``tokenizer="kenlm"``).

    One sentence per line; lines end at ``"\n"`` only (a ``"\r"`` is a space); tokens are
    separated by ASCII whitespace (:data:`KENLM_SPACES`: space, tab, ``\n``, ``\v``, ``\f``,
    ``\r``), never by Unicode spaces such as U+00A0 or U+3000; a blank line is an empty sentence
    (``<s> </s>`` once padded). The ``"\n"`` ending the text starts no sentence; a last line
    without one is a sentence when it holds a token.

    >>> kenlm_sentences("a b\r\n\nc\u00a0d\n")
    [['a', 'b'], [], ['c\xa0d']]
    """
    if not text:
        return []
    lines = text.split("\n")
    last = lines.pop()  # "" when the text ends with "\n"
    out = [kenlm_words(line) for line in lines]
    tail = kenlm_words(last)
    if tail:
        out.append(tail)
    return out


def kenlm_words(line: str) -> list[str]:
    """The words of ``line`` as KenLM reads them: separated by ASCII whitespace
    (:data:`KENLM_SPACES`) only, not by Unicode spaces (``str.split()`` also splits at U+00A0,
    U+3000, U+001C..U+001F...).

    >>> kenlm_words(" o\u00a0dia\te  noite ")
    ['o\xa0dia', 'e', 'noite']
    """
    return [t for t in _KENLM_SPLIT.split(line) if t]


def tokenize_text(
    text: str,
    tokenizer: Tokenizer = "nltk",
    sentences: SentenceMode | None = None,
    language: str = "english",
    engine: Engine = "native",
) -> list[list[str]]:
    r"""Split a text into sentences of tokens.

    Tokenizers:

    * ``"nltk"``: NLTK's ``word_tokenize(text, language=language)`` exactly (NLTK 3.10.4);
    * ``"whitespace"``: ``str.split()`` (any Unicode whitespace, as Python defines it);
    * ``"kenlm"``: exactly as KenLM: one sentence per line, ASCII whitespace, blank lines are
      empty sentences (:func:`kenlm_sentences`; ``sentences`` must be ``"lines"`` or None).

    Sentence modes:

    * ``"terminators"``: tokenize the whole text, then end a sentence after each token in
      :data:`TERMINATORS` (the tutorial's ``t in ".!?"``); the tokens after the last terminator
      form a final sentence;
    * ``"punkt"``: NLTK's ``sent_tokenize(text, language=language)``, then each sentence tokenized
      on its own (``word_tokenize(s, preserve_line=True)`` or ``s.split()``);
    * ``"lines"``: each line tokenized on its own is a sentence (lines end at ``"\n"``,
      ``"\r\n"`` and ``"\r"``, as a file read by Python; see :func:`python_newlines`);
    * ``"none"``: the whole text is one token sequence.

    ``sentences=None`` means ``"lines"`` for ``"kenlm"``, ``"terminators"`` otherwise. Empty
    sentences are dropped (except by ``"kenlm"``), so an empty or blank text gives ``[]``.

    Args:
        text: The text (already cleaned, see :func:`read_text`).
        tokenizer: ``"nltk"``, ``"whitespace"`` or ``"kenlm"``.
        sentences: ``"terminators"``, ``"punkt"``, ``"lines"``, ``"none"`` or None.
        language: NLTK language name for Punkt (``"english"``, ``"portuguese"`` ...).
        engine: For ``"nltk"`` and ``"punkt"``: ``"native"`` (the Rust port, on all cores) or
            ``"python"`` (NLTK's own code); the result is the same.

    Returns:
        The sentences, each a non-empty list of tokens.

    Raises:
        InvalidArgumentError: Unknown ``tokenizer``, ``sentences``, ``engine`` or ``language``,
            or ``"kenlm"`` with ``sentences`` other than ``"lines"``.
        PunktDataNotFoundError: ``"nltk"`` or ``"punkt"`` for a language with no Punkt
            parameters (see :func:`fastppl.tokenize.punkt_dir`).

    >>> tokenize_text("um dois\n\ntrês", tokenizer="whitespace", sentences="lines")
    [['um', 'dois'], ['três']]
    >>> tokenize_text("um . dois", tokenizer="whitespace", sentences="none")
    [['um', '.', 'dois']]
    >>> tokenize_text("(um) dois!", tokenizer="nltk", sentences="terminators")
    [['(', 'um', ')', 'dois', '!']]
    >>> tokenize_text("Dr. Who came. He left.", sentences="punkt", engine="python")
    [['Dr.', 'Who', 'came', '.'], ['He', 'left', '.']]
    >>> tokenize_text("  \n ")
    []
    """
    _choice("tokenizer", tokenizer, TOKENIZERS)
    _choice("engine", engine, ENGINES)
    mode = resolve_sentences(tokenizer, sentences)
    if not isinstance(text, str):
        raise InvalidArgumentError(f"text must be a str, got {type(text).__name__}")
    if tokenizer == "kenlm":
        return kenlm_sentences(text)
    text = python_newlines(text)
    if not isinstance(language, str) or not language:
        raise InvalidArgumentError(f"language={language!r} must be a non-empty string")
    if tokenizer == "whitespace" and mode != "punkt":
        if mode == "lines":
            out = [line.split() for line in text.split("\n")]
            return [s for s in out if s]
        tokens = text.split()
        if mode == "none":
            return [tokens] if tokens else []
        return split_terminators(tokens)
    model = punkt_model(language)  # raises when the language has no Punkt parameters
    if engine == "native":
        if tokenizer == "whitespace":  # mode == "punkt"
            return [s.split() for s in model.sent_tokenize(text) if s.split()]
        corpus = _core.Corpus()
        corpus.add_nltk_text(text, model, mode)
        return corpus.sentences(0, corpus.num_sentences)
    return _python_sentences(text, tokenizer, mode, language)


def _python_sentences(text: str, tokenizer: str, sentences: str, language: str) -> list[list[str]]:
    """:func:`tokenize_text` by NLTK's own code (``engine="python"``)."""
    from fastppl.tokenize import word_tokenize

    if sentences == "punkt":
        parts = sent_tokenize(text, language, "python")
        if tokenizer == "whitespace":
            out = [s.split() for s in parts]
        else:
            out = [word_tokenize(s, language, True, "python") for s in parts]
        return [s for s in out if s]
    if sentences == "lines":
        out = [word_tokenize(line, language, engine="python") for line in text.split("\n")]
        return [s for s in out if s]
    tokens = word_tokenize(text, language, engine="python")
    if sentences == "none":
        return [tokens] if tokens else []
    return split_terminators(tokens)
