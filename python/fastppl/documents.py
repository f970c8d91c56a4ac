"""Document perplexity as data-curation pipelines compute it (CCNet and the filters modelled on it).

CCNet (``cc_net/perplexity.py``) keeps or drops a web document by the perplexity of a KenLM model
over its lines: each line is normalized (:func:`normalize`), optionally cut into SentencePiece
pieces, and scored as a sentence with ``<s>`` and ``</s>``; the document's perplexity is
``10 ** (-sum(log10 p) / sum(words + 1))`` over its lines. :func:`perplexity` computes that for a
whole batch of documents: normalization with Python's C string methods, SentencePiece in its
own threads, scoring in Rust on all cores.

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

import functools
import itertools
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

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
#: Whitespace at the edges of a line (``str.strip``'s, line by line; the newline stays).
_LINE_EDGES = re.compile(r"^[^\S\n]+|[^\S\n]+$", re.MULTILINE)


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

    >>> normalize("  Ação: R$ 1.500,00 ...  ")
    'acao: r$ 0.000,00 ...'
    >>> normalize("“Quote”…", punct=2)
    'quote'
    """
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a str, got {type(text).__name__}")
    text = text.strip()
    if not text:
        return text
    return _normalized(text, _table(accent, numbers, _checked_punct(punct), False), accent, case)


def _normalized(text: str, table: Mapping[int, str | None], accent: bool, case: bool) -> str:
    """``text`` (edges already stripped) lowercased, decomposed and translated by ``table``."""
    if case:
        text = text.lower()
    if accent:
        text = unicodedata.normalize("NFD", text)
    return text.translate(table)


def _normalized_lines(text: str, options: _Normalization) -> str:
    """Every line of ``text`` normalized as :func:`normalize` does, in four passes over the text
    (no Python loop over lines): the control characters go, the newlines stay."""
    table = _table(options.accent, options.numbers, options.punct, True)
    return _normalized(_LINE_EDGES.sub("", text), table, options.accent, options.case)


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
def _table(accent: bool, numbers: bool, punct: int, keep_newline: bool) -> dict[int, str | None]:
    """One ``str.translate`` table for CCNet's per-character steps (marks, digits, punctuation,
    control characters): each step turns a character into text that the later steps leave
    alone, so applying them in CCNet's order to each character is applying them in turn."""
    marks, digits = _marks_and_digits()
    table: dict[int, str | None] = {}
    for cp in _NON_PRINTING:
        if not (keep_newline and cp == ord("\n")):
            table[cp] = None
    if punct:
        for c, ascii_form in _PUNCT.items():
            table[ord(c)] = ascii_form if punct == 1 else None
    if numbers:
        table.update(dict.fromkeys(digits - {ord("0")}, "0"))
    if accent:
        table.update(dict.fromkeys(marks))
    return table


def _checked_punct(punct: int) -> int:
    if punct not in (0, 1, 2) or isinstance(punct, bool):
        raise InvalidArgumentError(f"punct must be 0, 1 or 2, got {punct!r}")
    return punct


class _Normalization:
    """The options of :func:`normalize`, checked once."""

    __slots__ = ("accent", "case", "numbers", "punct")

    def __init__(self, options: bool | Mapping[str, Any]) -> None:
        given = {} if options is True else dict(options)  # type: ignore[arg-type]
        unknown = set(given) - {"accent", "case", "numbers", "punct"}
        if unknown:
            raise InvalidArgumentError(f"unknown normalize option(s): {sorted(unknown)}")
        self.accent = bool(given.get("accent", True))
        self.case = bool(given.get("case", True))
        self.numbers = bool(given.get("numbers", True))
        self.punct = _checked_punct(given.get("punct", 1))


def perplexity(
    model: NGramModel | Any,
    documents: Iterable[str],
    *,
    normalize: bool | Mapping[str, Any] = True,
    sp_model: str | os.PathLike[str] | SentencePieceProcessor | None = None,
    num_threads: int | None = None,
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

    Returns:
        float64 array of one perplexity per document.

    Raises:
        InvalidTypeError: a document is not a ``str``.
        InvalidArgumentError: a line holds ``<s>`` or ``</s>`` (fastppl adds them itself).

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
    texts = _texts(documents)
    options = None if normalize is False else _Normalization(normalize)
    sp = None if sp_model is None else _sentencepiece(sp_model)
    scores = [
        _batch_perplexities(ngram_model, batch, options, sp, num_threads)
        for batch in _batches(texts)
    ]
    return np.concatenate(scores) if scores else np.zeros(0)


#: Characters of text prepared at a time by :func:`perplexity`: bounds the memory its
#: intermediate lists of lines and pieces take (a Python object per piece).
BATCH_CHARS = 4_000_000


def _batches(texts: list[str]) -> Iterator[list[str]]:
    """``texts`` in consecutive runs of about :data:`BATCH_CHARS` characters."""
    start = size = 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= BATCH_CHARS:
            yield texts[start : i + 1]
            start, size = i + 1, 0
    if start < len(texts):
        yield texts[start:]


def _batch_perplexities(
    model: NGramModel,
    texts: list[str],
    options: _Normalization | None,
    sp: SentencePieceProcessor | None,
    num_threads: int | None,
) -> np.ndarray:
    """:func:`perplexity` of one batch: normalized, cut into pieces, scored in one Rust call."""
    if options is not None:
        texts = [_normalized_lines(text, options) for text in texts]
    if sp is not None:
        texts = _sentencepiece_lines(texts, sp, num_threads)
    else:
        texts = [text + "\n" for text in texts]  # every line ended: a last empty line counts
    corpus = Corpus.from_texts(texts, tokenizer="kenlm")
    return model.evaluate(corpus).document_perplexities


def map_function(
    model: NGramModel | Any,
    *,
    text_field: str = "text",
    output_field: str = "perplexity",
    normalize: bool | Mapping[str, Any] = True,
    sp_model: str | os.PathLike[str] | SentencePieceProcessor | None = None,
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
        scores = perplexity(model, batch[text_field], normalize=normalize, sp_model=sp)
        return {output_field: scores.tolist()}

    return add_perplexity


def _ngram_model(model: object) -> NGramModel:
    """The NGramModel of ``model``: itself, or the one a ``fastppl.kenlm.Model`` holds."""
    inner = getattr(model, "_model", model)
    if not isinstance(inner, NGramModel):
        raise InvalidTypeError(
            f"model must be a fastppl.NGramModel or fastppl.kenlm.Model, got {type(model).__name__}"
        )
    return inner


def _texts(documents: Iterable[str]) -> list[str]:
    """``documents`` as a list of str (pyarrow and numpy arrays converted in one call)."""
    if isinstance(documents, str):
        raise InvalidTypeError("documents must be a sequence of texts, not one str")
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
    if not os.path.isfile(path):
        raise FileNotFoundError(2, "SentencePiece model not found", path)
    try:
        return sentencepiece.SentencePieceProcessor(model_file=path)
    except (OSError, RuntimeError) as err:
        raise InvalidArgumentError(f"{path!r} is not a SentencePiece model: {err}") from err


def _sentencepiece_lines(
    texts: list[str], sp: SentencePieceProcessor, num_threads: int | None
) -> list[str]:
    """Each text with every line replaced by its pieces joined by spaces (every line ended by
    a newline): all lines of all texts go to SentencePiece in one call, in its threads."""
    lines: list[str] = []
    bounds = [0]
    for text in texts:
        lines += text.split("\n")
        bounds.append(len(lines))
    threads = num_threads if num_threads is not None else os.cpu_count() or 1
    pieces = sp.encode(lines, out_type=str, num_threads=threads)
    joined = [" ".join(line) for line in pieces]
    return ["\n".join(joined[a:b]) + "\n" for a, b in itertools.pairwise(bounds)]
