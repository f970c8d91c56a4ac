"""`Corpus`: tokenized text, held by the Rust core, ready to fit or evaluate models on."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

import numpy as np

from fastppl import _core
from fastppl.errors import InvalidArgumentError, InvalidTypeError
from fastppl.text import SENTENCE_MODES, TOKENIZERS, clean_text, read_text, tokenize_text

Tokenizer = Literal["nltk", "whitespace"]
SentenceMode = Literal["terminators", "punkt", "lines", "none"]


class Corpus:
    """Documents of sentences of tokens.

    Build one with :meth:`from_file`, :meth:`from_text`, :meth:`from_files`,
    :meth:`from_sentences` or :meth:`from_documents`. Empty sentences are dropped (they hold no
    token). The tokens live in Rust; iterating a corpus converts them back to Python lists.

    ``len(corpus)`` is the number of sentences; ``corpus.num_tokens`` the number of tokens
    (sentence markers are added by models, never stored here).

    >>> c = Corpus.from_sentences([["a", "b"], [], ["c"]])
    >>> len(c), c.num_tokens
    (2, 3)
    """

    __slots__ = ("_inner",)

    def __init__(self, _inner: _core.Corpus) -> None:
        self._inner = _inner

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_sentences(cls, sentences: Iterable[Sequence[str]]) -> Corpus:
        """One document from already tokenized sentences.

        >>> Corpus.from_sentences([["the", "cat"], ["sat"]]).num_tokens
        3
        """
        return cls.from_documents([sentences])

    @classmethod
    def from_documents(cls, documents: Iterable[Iterable[Sequence[str]]]) -> Corpus:
        """Several documents, each an iterable of tokenized sentences.

        >>> Corpus.from_documents([[["a"]], [["b", "c"]]]).num_documents
        2
        """
        inner = _core.Corpus()
        for document in documents:
            inner.add_sentences(document)
            inner.end_document()
        return cls(inner)

    @classmethod
    def from_text(
        cls,
        text: str,
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode = "terminators",
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        language: str = "english",
    ) -> Corpus:
        """One document from raw text.

        Args:
            text: the text.
            tokenizer: ``"nltk"`` (NLTK ``word_tokenize``, exactly) or ``"whitespace"`` (already
                tokenized text, split on whitespace in Rust like ``str.split()``).
            sentences: ``"terminators"`` (a sentence ends after a token ``t`` for which
                ``t in ".!?"``), ``"punkt"`` (NLTK's Punkt sentence splitter), ``"lines"`` (one
                sentence per non-empty line) or ``"none"`` (the whole text is one sequence).
            lowercase: lowercase the text first.
            skip_line_prefixes: drop the lines that start with any of these strings.
            language: Punkt model used by ``"nltk"`` and ``"punkt"``.

        Without NLTK's Punkt data, ``tokenizer="nltk"`` tokenizes without splitting sentences
        first and ``sentences="punkt"`` falls back to ``"terminators"``, with one warning.

        >>> Corpus.from_text("a b. c d!", tokenizer="whitespace").num_sentences
        2
        """
        corpus = cls(_core.Corpus())
        corpus._add_text(
            text,
            tokenizer=tokenizer,
            sentences=sentences,
            lowercase=lowercase,
            skip_line_prefixes=skip_line_prefixes,
            language=language,
        )
        corpus._inner.end_document()
        return corpus

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode = "terminators",
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        encoding: str = "utf-8",
        errors: str = "strict",
        language: str = "english",
    ) -> Corpus:
        """One document from a text file (``.gz``, ``.xz`` and ``.bz2`` are decompressed).

        Options as in :meth:`from_text`; ``encoding`` and ``errors`` as in :func:`open`. Invalid
        UTF-8 under ``errors="strict"`` raises :class:`fastppl.errors.CorpusDecodeError` naming
        the file, line and byte offset.

        >>> import fastppl
        >>> c = Corpus.from_file(fastppl.datasets.machado(), tokenizer="whitespace",
        ...                      skip_line_prefixes=("#", "%"))
        >>> c.num_tokens > 400_000
        True
        """
        return cls.from_files(
            [path],
            tokenizer=tokenizer,
            sentences=sentences,
            lowercase=lowercase,
            skip_line_prefixes=skip_line_prefixes,
            encoding=encoding,
            errors=errors,
            language=language,
        )

    @classmethod
    def from_files(
        cls,
        paths: Iterable[str | os.PathLike[str]],
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode = "terminators",
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        encoding: str = "utf-8",
        errors: str = "strict",
        language: str = "english",
    ) -> Corpus:
        """One document per file; options as in :meth:`from_file`."""
        corpus = cls(_core.Corpus())
        for path in paths:
            text = read_text(
                path,
                encoding=encoding,
                errors=errors,
                skip_line_prefixes=skip_line_prefixes,
                lowercase=lowercase,
            )
            corpus._add_text(
                text,
                tokenizer=tokenizer,
                sentences=sentences,
                lowercase=False,
                skip_line_prefixes=(),
                language=language,
            )
            corpus._inner.end_document()
        return corpus

    def _add_text(
        self,
        text: str,
        *,
        tokenizer: str,
        sentences: str,
        lowercase: bool,
        skip_line_prefixes: Sequence[str],
        language: str,
    ) -> None:
        if not isinstance(text, str):
            raise InvalidTypeError(f"text must be str, got {type(text).__name__}")
        if tokenizer not in TOKENIZERS:
            raise InvalidArgumentError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
        if sentences not in SENTENCE_MODES:
            raise InvalidArgumentError(
                f"sentences must be one of {SENTENCE_MODES}, got {sentences!r}"
            )
        text = clean_text(text, skip_line_prefixes, lowercase)
        if tokenizer == "whitespace" and sentences != "punkt":
            self._inner.add_whitespace_text(text, sentences)  # split in Rust
        else:
            self._inner.add_sentences(tokenize_text(text, tokenizer, sentences, language))

    # ---- inspection ---------------------------------------------------------------------
    def __len__(self) -> int:
        return self._inner.num_sentences

    @property
    def num_sentences(self) -> int:
        """Number of (non-empty) sentences."""
        return self._inner.num_sentences

    @property
    def num_tokens(self) -> int:
        """Number of tokens, sentence markers excluded."""
        return self._inner.num_tokens

    @property
    def num_documents(self) -> int:
        """Number of documents."""
        return len(self._inner.document_offsets()) - 1

    @property
    def num_types(self) -> int:
        """Number of distinct tokens."""
        return self._inner.num_types

    def document_offsets(self) -> np.ndarray:
        """Start of each document in sentences, plus the end (``num_documents + 1`` values)."""
        return self._inner.document_offsets()

    def sentence_lengths(self) -> np.ndarray:
        """Tokens per sentence."""
        return self._inner.sentence_lengths()

    def token_counts(self) -> dict[str, int]:
        """Occurrences of each token.

        >>> Corpus.from_sentences([["a", "b", "a"]]).token_counts()["a"]
        2
        """
        return self._inner.token_counts()

    def __iter__(self) -> Iterator[list[str]]:
        """Yields the sentences as lists of tokens (converted in batches)."""
        batch = 4096
        for start in range(0, len(self), batch):
            yield from self._inner.sentences(start, start + batch)

    def __getitem__(self, index: int) -> list[str]:
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"sentence index {index} out of range for {n} sentences")
        return self._inner.sentences(index, index + 1)[0]

    def __repr__(self) -> str:
        return (
            f"Corpus({self.num_documents} documents, {self.num_sentences} sentences, "
            f"{self.num_tokens} tokens)"
        )
