"""Document perplexity as data-curation pipelines compute it (CCNet and the filters modelled on it).

CCNet (``cc_net/perplexity.py``) keeps or drops a web document by the perplexity of a KenLM model
over its lines: each line is normalized (:func:`normalize`), optionally cut into SentencePiece
pieces, and scored as a sentence with ``<s>`` and ``</s>``; the document's perplexity is
``10 ** (-sum(log10 p) / sum(words + 1))`` over its lines. :func:`perplexity` computes that for a
whole batch of documents: normalization with Python's C string methods (``bytes.translate``
for ASCII lines), the words split in Rust, each distinct word cut by SentencePiece once (in its
threads) and the corpus re-tokenized in Rust, scoring in Rust on all cores. The pieces are
CCNet's, which cuts whole lines: the lines where that can differ are cut whole (see
:func:`_cut_word_by_word`), and so is every line for a SentencePiece model whose pieces may span
words (see :func:`_spec_allows_words`).

>>> import fastppl
>>> model = fastppl.NGramModel.fit(
...     fastppl.Corpus.from_texts(["o dia de sol", "o dia"], tokenizer="whitespace"),
...     order=2, smoothing="kneser_ney")
>>> perplexity(model, ["O DIA", "o dia\\nde sol"]).round(3).tolist()
[1.819, 2.93]
>>> normalize("Été 2024 — «Olá»\\uff01")
'ete 0000  -  "ola"!'
"""

from __future__ import annotations

import errno
import functools
import itertools
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fastppl._checks import (
    check_bool,
    check_int,
    check_iterable,
    has_surrogate,
    not_utf8,
    utf8_strings,
)
from fastppl.corpus import Corpus
from fastppl.errors import InvalidArgumentError, InvalidTypeError
from fastppl.model import NGramModel

if TYPE_CHECKING:
    from sentencepiece import SentencePieceProcessor

__all__ = ["map_function", "normalize", "perplexity"]

#: CCNet's Unicode punctuation map (``text_normalizer.UNICODE_PUNCT``), grouped by what each
#: character becomes: full-width and CJK forms become their ASCII counterparts, typographic quotes
#: become straight ones. CCNet also maps the full-width digit one to a quote (reachable only with
#: ``numbers=False``: digits become 0 first).
PUNCT_REPLACEMENTS: dict[str, str] = {
    '"': "\u201e\u201d\u201c\u00ab\u00bb\u300c\u300d\u300a\u300b\uff11",
    ",": "\uff0c\u3001",
    ".": "\u3002",
    ". ": "\uff0e",
    "'": "\u00b4\u2019",
    ":": "\u2236\uff1a",
    "?": "\uff1f",
    "!": "\uff01",
    "(": "\uff08",
    ")": "\uff09",
    ";": "\uff1b",
    "~": "\uff5e",
    "%": "\uff05",
    "-": "\u2013\u2501\u25ba",
    " - ": "\u2014",
    "...": "\u2026",
    "<": "\u3008",
    ">": "\u3009",
    "[": "\u3010",
    "]": "\u3011",
}
_PUNCT = {c: ascii_form for ascii_form, chars in PUNCT_REPLACEMENTS.items() for c in chars}
#: Control characters CCNet deletes: C0 (U+0000-U+001F) and DEL with C1 (U+007F-U+009F).
_NON_PRINTING = frozenset(itertools.chain(range(0x20), range(0x7F, 0xA0)))
#: The ASCII control characters, for ``bytes.translate``.
_ASCII_CONTROLS = bytes(cp for cp in _NON_PRINTING if cp < 0x80)


def normalize(
    text: str, accent: bool = True, case: bool = True, numbers: bool = True, punct: int = 1
) -> str:
    """One line normalized as CCNet's ``text_normalizer.normalize`` does.

    In order: strip the edges (``str.strip``), lowercase (``case``), decompose (NFD) and drop
    the combining marks (Unicode category Mn: ``accent``), turn every decimal digit (category Nd)
    into ``0`` (``numbers``), replace (``punct=1``) or delete (``punct=2``) the punctuation of
    :data:`PUNCT_REPLACEMENTS` (``punct=0``: neither), and delete control characters, newlines
    included: a text of several lines becomes one (:func:`perplexity` normalizes line by line).

    Args:
        text: the line.
        accent: strip accents; the result stays decomposed (NFD), as CCNet leaves it.
        case: lowercase.
        numbers: digits to ``0``.
        punct: 0, 1 or 2, as above.

    Raises:
        InvalidArgumentError: ``punct`` is not 0, 1 or 2.
        InvalidTypeError: ``accent``, ``case`` or ``numbers`` is not a bool.

    >>> normalize("  Ação: R$ 1.500,00 ...  ")
    'acao: r$ 0.000,00 ...'
    >>> normalize("“Quote”…", punct=2)
    'quote'
    """
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a str, got {type(text).__name__}")
    options = _Normalization({"accent": accent, "case": case, "numbers": numbers, "punct": punct})
    return options.line(text)


def _normalized_lines(text: str, options: _Normalization) -> str:
    """Every line of ``text`` normalized as :func:`normalize` does, newlines kept."""
    return "\n".join(map(options.line, text.split("\n")))


@functools.cache
def _marks_and_digits() -> tuple[frozenset[int], frozenset[int]]:
    """The code points of categories Mn (combining marks) and Nd (decimal digits)."""
    marks, digits = [], []
    for cp in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(cp))
        if category == "Mn":
            marks.append(cp)
        elif category == "Nd":
            digits.append(cp)
    return frozenset(marks), frozenset(digits)


@functools.cache
def _table(accent: bool, numbers: bool, punct: int) -> dict[int, str | None]:
    """One ``str.translate`` table for CCNet's per-character steps (marks, digits, punctuation,
    control characters): each step turns a character into text that the later steps leave
    alone, so applying them in CCNet's order to each character is applying them in turn."""
    marks, digits = _marks_and_digits()
    table: dict[int, str | None] = dict.fromkeys(_NON_PRINTING)
    if punct:
        for c, ascii_form in _PUNCT.items():
            table[ord(c)] = ascii_form if punct == 1 else None
    if numbers:
        table.update(dict.fromkeys(digits - {ord("0")}, "0"))
    if accent:
        table.update(dict.fromkeys(marks))
    return table


@functools.cache
def _bmp_table(accent: bool, numbers: bool, punct: int) -> list[int | str | None]:
    """:func:`_table` for text within U+0000..U+FFFF as a list indexed by code point, which
    ``str.translate`` reads 2-3x faster than a dict."""
    table: list[int | str | None] = list(range(0x10000))
    for cp, replacement in _table(accent, numbers, punct).items():
        if cp < 0x10000:
            table[cp] = replacement
    return table


def _checked_punct(punct: int) -> int:
    if check_int("punct", punct) not in (0, 1, 2):
        raise InvalidArgumentError(f"punct must be 0, 1 or 2, got {punct!r}")
    return int(punct)


class _Normalization:
    """The options of :func:`normalize`, checked once, and the tables they need."""

    __slots__ = ("accent", "ascii_table", "bmp_table", "case", "numbers", "punct", "table")

    def __init__(self, options: bool | Mapping[str, Any]) -> None:
        if options is True:
            options = {}
        if not isinstance(options, Mapping):
            raise InvalidTypeError(
                f"normalize must be a bool or a mapping of options, got {type(options).__name__}"
            )
        unknown = set(options) - {"accent", "case", "numbers", "punct"}
        if unknown:
            raise InvalidArgumentError(f"unknown normalize option(s): {sorted(unknown)}")
        self.accent = check_bool("accent", options.get("accent", True))
        self.case = check_bool("case", options.get("case", True))
        self.numbers = check_bool("numbers", options.get("numbers", True))
        self.punct = _checked_punct(options.get("punct", 1))
        self.table = _table(self.accent, self.numbers, self.punct)
        self.bmp_table = _bmp_table(self.accent, self.numbers, self.punct)
        #: the same steps on ASCII text, for bytes.translate: digits to 0, controls deleted
        digits = b"0123456789"
        self.ascii_table = bytes.maketrans(digits, b"0" * 10 if self.numbers else digits)

    def line(self, line: str) -> str:
        """One line normalized (an ASCII line through ``bytes.translate``, which is faster)."""
        line = line.strip()
        if self.case:
            line = line.lower()
        if line.isascii():
            return line.encode().translate(self.ascii_table, _ASCII_CONTROLS).decode()
        if self.accent:
            line = unicodedata.normalize("NFD", line)
        # no character beyond U+FFFF (a lone surrogate, which Python strings may hold, is one
        # UTF-16 unit)
        if len(line.encode("utf-16-le", "surrogatepass")) == 2 * len(line):
            return line.translate(self.bmp_table)
        return line.translate(self.table)


def perplexity(
    model: NGramModel | Any,
    documents: Iterable[str],
    *,
    normalize: bool | Mapping[str, Any] = True,
    sp_model: str | os.PathLike[str] | SentencePieceProcessor | None = None,
    num_threads: int | None = None,
    whole_lines: bool = False,
) -> np.ndarray:
    """The perplexity of each document, as CCNet's ``DocLM`` computes it.

    Each document is split at ``"\\n"`` into lines (an empty line, or an empty document, is a
    sentence of no word); each line is normalized (:func:`normalize`), then cut into
    SentencePiece pieces when ``sp_model`` is given, and scored with ``<s>`` and ``</s>``.
    A document's perplexity is ``10 ** (-sum(log10 p) / sum(words + 1))`` over its lines
    (unrounded: CCNet rounds it to 0.1). Words outside the model score as ``<unk>``.

    Args:
        model: a :class:`fastppl.NGramModel`, or a :class:`fastppl.kenlm.Model`.
        documents: the texts: a list, a numpy array of strings, a pyarrow string array, or any
            iterable of ``str``.
        normalize: True for CCNet's normalization, False for none, or a mapping of
            :func:`normalize`'s options (``{"punct": 2}``).
        sp_model: a SentencePiece model (its path, or a loaded ``SentencePieceProcessor``);
            needs the ``documents`` extra (``pip install 'fastppl[documents]'``).
        num_threads: SentencePiece's threads (default: all cores).
        whole_lines: give SentencePiece every line whole, as CCNet does. By default each
            distinct word is cut once and the lines are rebuilt from the pieces of their words,
            which are CCNet's pieces except where SentencePiece's float32 running score of a
            line breaks a near-tie between two cuts of a word: the lines where that is likely
            (words such as ``"...."`` or ``"0000"``, lines over 2000 characters) are cut whole
            anyway (in 100 MB of Gutenberg documents no perplexity then differed by more than
            float32 sums do; before long lines were, one did, by 3e-4). True is exact, and
            slower.

    Returns:
        float64 array of one perplexity per document.

    Raises:
        InvalidTypeError: ``documents`` is one ``str``, or a document is not a ``str``;
            ``normalize`` is neither a bool nor a mapping, or one of its options ``accent``,
            ``case``, ``numbers`` is not a bool; ``whole_lines`` is not a bool, or
            ``num_threads`` neither an int nor None.
        InvalidArgumentError: without ``sp_model``, a line holds the word ``<s>`` or ``</s>``
            (fastppl adds them itself; SentencePiece cuts them into other pieces; the message
            names the document and its line, ``documents[3], line 2``), a
            document holds a lone surrogate (not UTF-8; the message names the document,
            ``documents[3]``, and the position), ``normalize`` holds an unknown option or a
            ``punct`` other than 0, 1, 2, or ``num_threads`` is below 1. The error about one
            document carries its index as ``index`` and the rest of its message (after
            ``documents[3]``) as ``reason``.

    Differences from CCNet: a word is what KenLM's ``score`` splits at ASCII whitespace, which
    CCNet's ``len(line.split())`` also splits at other Unicode spaces (``"\\xa0"``); CCNet gives
    an empty document no perplexity.

    >>> import fastppl
    >>> model = fastppl.NGramModel.fit(fastppl.Corpus.from_sentences([["a", "b"]]), order=2,
    ...                                smoothing="kneser_ney")
    >>> perplexity(model, ["a b", "A B\\nb a"]).round(3).tolist()
    [2.207, 3.296]
    """
    ngram_model = _ngram_model(model)
    whole_lines = check_bool("whole_lines", whole_lines)
    if num_threads is not None and check_int("num_threads", num_threads) < 1:
        raise InvalidArgumentError(f"num_threads must be at least 1 (or None), got {num_threads}")
    texts = _texts(documents)
    options = None if normalize is False else _Normalization(normalize)
    sp = None if sp_model is None else _sentencepiece(sp_model)
    try:
        with utf8_strings({"documents": texts}):
            scores = [
                _batch_perplexities(
                    ngram_model, batch, first, options, sp, num_threads, whole_lines
                )
                for first, batch in _batches(texts)
            ]
    except InvalidArgumentError as err:
        error = _surrogate_document_error(err, texts)
        if error is None:
            raise
        raise error from err.__cause__
    return np.concatenate(scores) if scores else np.zeros(0)


#: Characters of text prepared at a time by :func:`perplexity`: bounds the memory its
#: intermediate lists of lines and pieces take (a Python object per piece); large, because each
#: batch cuts its own distinct words once (4 M was 10% slower on 12 MB of Gutenberg documents).
BATCH_CHARS = 32_000_000


def _batches(texts: list[str]) -> Iterator[tuple[int, list[str]]]:
    """``texts`` in consecutive runs of about :data:`BATCH_CHARS` characters, each with the
    index of its first text."""
    start = size = 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= BATCH_CHARS:
            yield start, texts[start : i + 1]
            start, size = i + 1, 0
    if start < len(texts):
        yield start, texts[start:]


def _batch_perplexities(
    model: NGramModel,
    texts: list[str],
    first: int,
    options: _Normalization | None,
    sp: SentencePieceProcessor | None,
    num_threads: int | None,
    whole_lines: bool,
) -> np.ndarray:
    """:func:`perplexity` of one batch (``documents[first:]``): normalized, cut into pieces,
    scored in one Rust call."""
    if options is not None:
        texts = [_normalized_lines(text, options) for text in texts]
    threads = num_threads if num_threads is not None else os.cpu_count() or 1
    by_word = sp is not None and not whole_lines and _pieces_stay_within_words(sp)
    if sp is not None and not by_word:
        texts = _sentencepiece_lines(texts, sp, threads)
    else:
        texts = [text + "\n" for text in texts]  # every line ended: a last empty line counts
    # by word, a line holding <s> or </s> (which the core refuses as words; SentencePiece cuts
    # them into other pieces) stands empty in the corpus, and is cut whole
    try:
        corpus = Corpus.from_texts(_marked_lines_blanked(texts) if by_word else texts, "kenlm")
    except InvalidArgumentError as err:
        error = _marker_error(err, texts, first)
        if error is None:
            raise
        raise error from None
    if by_word:
        corpus = _cut_word_by_word(corpus, texts, sp, threads)
    return model.evaluate(corpus).document_perplexities


def _marker_error(
    err: InvalidArgumentError, texts: list[str], first: int
) -> InvalidArgumentError | None:
    """The core's error located at sentence N of a batch (its ``index``: a reserved token
    there; one sentence per line of ``texts``, each ended by a newline) naming the document and
    its line (from 1) instead, with the core's ``reason``; None for an error not located.

    >>> err = InvalidArgumentError('sentence 2 holds <s>', 2, 'holds the reserved token "<s>"')
    >>> _marker_error(err, ["a\\n", "b\\nc <s>\\n"], 5)
    InvalidArgumentError('documents[6], line 2, holds the reserved token "<s>"')
    """
    if err.index is None:
        return None
    line = err.index
    for i, text in enumerate(texts):
        lines = text.count("\n")
        if line < lines:
            return _document_error(first + i, f", line {line + 1}, {err.reason}")
        line -= lines
    return None


def _surrogate_document_error(
    err: InvalidArgumentError, texts: list[str]
) -> InvalidArgumentError | None:
    """:func:`~fastppl._checks.utf8_strings`' error about the first document that holds a lone
    surrogate (``documents[3] holds ...``), as :func:`_document_error`'s, which carries its index;
    None for an error not about a lone surrogate.

    >>> err = InvalidArgumentError("documents[1] holds a lone surrogate ...")
    >>> err.__cause__ = UnicodeEncodeError("utf-8", "\\ud800", 0, 1, "surrogates not allowed")
    >>> _surrogate_document_error(err, ["a", "b\\ud800"]).index
    1
    """
    if err.index is not None or not isinstance(err.__cause__, UnicodeEncodeError):
        return None
    index = next((i for i, text in enumerate(texts) if has_surrogate(text)), None)
    if index is None:
        return None
    return _document_error(index, str(not_utf8("", texts[index])))


def _document_error(index: int, rest: str) -> InvalidArgumentError:
    """The error about ``documents[index]``: its message names it and goes on with ``rest``,
    which it carries as its ``reason`` (and the index as its ``index``), for a caller to name
    the document its own way (``fastppl score --documents`` names its line of the input).

    >>> err = _document_error(3, ", line 2, holds <s>")
    >>> err, err.index, err.reason
    (InvalidArgumentError('documents[3], line 2, holds <s>'), 3, ', line 2, holds <s>')
    """
    return InvalidArgumentError(f"documents[{index}]{rest}", index, rest)


#: A word holding a run of three copies of a unit ("...", "0000", "ababab"): several orders of
#: the same pieces can spell it, with the same score, and which one SentencePiece keeps depends
#: on the float rounding of the score of the line before it.
_TIE_PRONE = re.compile(r"(.+?)\1\1")
#: Longer words are not searched (the search is quadratic): their lines are cut whole.
_LONG_WORD = 64
#: Longer lines are cut whole: SentencePiece's float32 running score of a line loses precision
#: as it grows, and can then break near-ties between two cuts of a word.
_LONG_LINE = 2000


def _cut_word_by_word(
    corpus: Corpus, texts: list[str], sp: SentencePieceProcessor, threads: int
) -> Corpus:
    """``corpus`` (one sentence per line of ``texts``) re-tokenized into SentencePiece pieces:
    each distinct word cut once, in SentencePiece's threads, and the corpus rebuilt in Rust.

    A line cut whole is the concatenation of its words cut alone (see
    :func:`_spec_allows_words`) except where two cuts of a word tie, or nearly tie within the
    float32 rounding of the line's running score; the lines where that is likely (a word of
    :data:`_TIE_PRONE`, a line over :data:`_LONG_LINE` characters) are cut whole, as CCNet
    cuts every line; so are the lines holding ``<s>`` or ``</s>``, which stand empty in
    ``corpus`` (see :func:`_marked_lines_blanked`).
    """
    words = corpus._inner.vocab()
    pieces = sp.encode(words, out_type=str, num_threads=threads)
    tie_prone = [len(word) > _LONG_WORD or _TIE_PRONE.search(word) is not None for word in words]
    lines = [line for text in texts for line in text.split("\n")[:-1]]
    long_lines = (i for i, line in enumerate(lines) if len(line) > _LONG_LINE)
    # (each line looked at only in the rare batch that holds a marker at all)
    marked: Iterable[int] = ()
    if any(_holds_marker(text) for text in texts):
        marked = (i for i, line in enumerate(lines) if _holds_marker(line))
    indices = sorted({*corpus._inner.sentences_with(tie_prone), *long_lines, *marked})
    cut = sp.encode([lines[i] for i in indices], out_type=str, num_threads=threads)
    return Corpus(corpus._inner.expand(pieces, list(zip(indices, cut, strict=True))))


def _holds_marker(text: str) -> bool:
    """Whether ``text`` holds ``<s>`` or ``</s>``."""
    return "<s>" in text or "</s>" in text


def _marked_lines_blanked(texts: list[str]) -> list[str]:
    """``texts`` with every line holding ``<s>`` or ``</s>`` emptied: the core refuses them as
    words, SentencePiece cuts them into other pieces (``"<", "s", ">"``), as it cuts such a line
    whole.

    >>> _marked_lines_blanked(["a <s> b\\nc\\n", "d\\n"])
    ['\\nc\\n', 'd\\n']
    """
    return [
        "\n".join("" if _holds_marker(line) else line for line in text.split("\n"))
        if _holds_marker(text)
        else text
        for text in texts
    ]


def map_function(
    model: NGramModel | Any,
    *,
    text_field: str = "text",
    output_field: str = "perplexity",
    normalize: bool | Mapping[str, Any] = True,
    sp_model: str | os.PathLike[str] | SentencePieceProcessor | None = None,
    whole_lines: bool = False,
) -> Callable[[Mapping[str, Sequence[Any]]], dict[str, list[float]]]:
    """A function for Hugging Face ``datasets``' ``Dataset.map(..., batched=True)``: it takes a
    batch (a dict of columns) and returns ``{output_field: perplexities}`` of its
    ``text_field`` column (see :func:`perplexity` for the options).

    >>> import fastppl
    >>> model = fastppl.NGramModel.fit(fastppl.Corpus.from_sentences([["a", "b"]]), order=2,
    ...                                smoothing="kneser_ney")
    >>> add = map_function(model, output_field="ppl")
    >>> {k: [round(x, 3) for x in v] for k, v in add({"text": ["a b", "b"]}).items()}
    {'ppl': [2.207, 3.296]}
    """
    sp = None if sp_model is None else _sentencepiece(sp_model)

    def add_perplexity(batch: Mapping[str, Sequence[Any]]) -> dict[str, list[float]]:
        if text_field not in batch:
            raise InvalidArgumentError(
                f"the batch has no column {text_field!r} (it has {sorted(batch)})"
            )
        scores = perplexity(
            model, batch[text_field], normalize=normalize, sp_model=sp, whole_lines=whole_lines
        )
        return {output_field: scores.tolist()}

    return add_perplexity


def _ngram_model(model: object) -> NGramModel:
    """The NGramModel of ``model``: itself, or the one a ``fastppl.kenlm.Model`` holds."""
    inner = getattr(model, "_model", model)
    if not isinstance(inner, NGramModel):
        raise InvalidTypeError(
            f"model must be a fastppl.NGramModel or fastppl.kenlm.Model, got {type(model).__name__}"
        )
    if not inner.bos_eos:
        raise InvalidArgumentError(
            "document perplexity scores every line with <s> and </s>: the model was fitted "
            "with bos_eos=False"
        )
    return inner


def _texts(documents: Iterable[str]) -> list[str]:
    """``documents`` as a list of str (pyarrow and numpy arrays converted in one call)."""
    documents = check_iterable(documents, "documents", "texts")
    if hasattr(documents, "to_pylist"):  # pyarrow Array / ChunkedArray
        documents = documents.to_pylist()
    elif isinstance(documents, np.ndarray):
        documents = documents.tolist()
    texts = list(documents)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidTypeError(f"document {i} must be a str, got {type(text).__name__}")
    return texts


def _sentencepiece(sp_model: object) -> SentencePieceProcessor:
    """A loaded SentencePiece model: ``sp_model`` itself, or the one at that path."""
    try:
        import sentencepiece
    except ImportError as err:
        raise ImportError(
            "SentencePiece tokenization needs sentencepiece: pip install 'fastppl[documents]'"
        ) from err
    if isinstance(sp_model, sentencepiece.SentencePieceProcessor):
        return sp_model
    if not isinstance(sp_model, (str, os.PathLike)):
        raise InvalidTypeError(
            f"sp_model must be a path or a SentencePieceProcessor, got {type(sp_model).__name__}"
        )
    path = os.fspath(sp_model)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "SentencePiece model is a directory", path)
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, "SentencePiece model not found", path)
    try:
        return sentencepiece.SentencePieceProcessor(model_file=path)
    except (OSError, RuntimeError) as err:
        raise InvalidArgumentError(f"{path!r} is not a SentencePiece model: {err}") from err


@functools.cache
def _spec_allows_words(serialized: bytes) -> bool:
    """Whether a SentencePiece model (its serialized proto) cuts a line into the pieces of its
    whitespace-separated words, each alone: it splits at whitespace, squeezes runs of it, and
    marks the start of every word (SentencePiece's defaults). False when protobuf, which reads
    the spec, is missing."""
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError:  # protobuf absent: cannot tell
        return False
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(serialized)
    trainer, normalizer = proto.trainer_spec, proto.normalizer_spec
    return (
        trainer.split_by_whitespace
        and not trainer.treat_whitespace_as_suffix
        and normalizer.add_dummy_prefix
        and normalizer.remove_extra_whitespaces
    )


def _pieces_stay_within_words(sp: SentencePieceProcessor) -> bool:
    """:func:`_spec_allows_words` for a loaded model."""
    return _spec_allows_words(sp.serialized_model_proto())


def _sentencepiece_lines(texts: list[str], sp: SentencePieceProcessor, threads: int) -> list[str]:
    """Each text with every line replaced by its pieces joined by spaces (every line ended by
    a newline): all lines of all texts go to SentencePiece in one call, in its threads. For
    models whose pieces may span words (see :func:`_spec_allows_words`)."""
    lines: list[str] = []
    bounds = [0]
    for text in texts:
        lines += text.split("\n")
        bounds.append(len(lines))
    try:
        pieces = sp.encode(lines, out_type=str, num_threads=threads)
    except TypeError:  # SentencePiece's for a line that is not UTF-8: raise Python's own
        for line in lines:
            line.encode()
        raise
    joined = [" ".join(line) for line in pieces]
    return ["\n".join(joined[a:b]) + "\n" for a, b in itertools.pairwise(bounds)]
