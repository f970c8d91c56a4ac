"""`Corpus`: tokenized text, held by the Rust core, ready to fit or evaluate models on."""

from __future__ import annotations

import codecs
import dataclasses
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, AnyStr, NoReturn, SupportsIndex, overload

from fastppl import _core
from fastppl._checks import (
    U64_MAX,
    Tracked,
    check_bool,
    check_int,
    check_iterable,
    not_utf8,
    surrogate_error,
    utf8_strings,
)
from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    InvalidArgumentError,
    InvalidTypeError,
)
from fastppl.progress import Progress, ProgressCallback, reporter
from fastppl.text import (
    SENTENCE_MODES,
    TOKENIZERS,
    SentenceMode,
    Tokenizer,
    _check_prefixes,
    _clean_text,
    compression,
    decoder_for,
    iter_line_bytes,
    iter_text,
    python_newlines,
    read_bytes,
    read_text,
    resolve_sentences,
    tokenize_text,
)
from fastppl.tokenize import ENGINES, Engine, punkt_dir, punkt_model

if TYPE_CHECKING:
    import numpy as np


def _checked_tokenizer(tokenizer: str) -> str:
    if tokenizer not in TOKENIZERS:
        raise InvalidArgumentError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
    return tokenizer


def _check_nltk_options(tokenizer: str, sentences: str, language: object, engine: str) -> None:
    """``language`` and ``engine`` checked against what reads the text: when NLTK's code is
    used (``tokenizer="nltk"`` or ``sentences="punkt"``), ``language`` must name Punkt parameters
    that exist (checked now, before any text is read, even if there is none); otherwise either
    one given another value than its default would be silently ignored, and is refused."""
    if tokenizer == "nltk" or sentences == "punkt":
        punkt_dir(language)  # InvalidArgumentError or PunktDataNotFoundError
        return
    ignored = [
        f"{name}={value!r}"
        for name, value, default in (
            ("language", language, "english"),
            ("engine", engine, "native"),
        )
        if value != default
    ]
    if ignored:
        raise InvalidArgumentError(
            f"{' and '.join(ignored)} would be ignored: tokenizer={tokenizer!r} with "
            f"sentences={sentences!r} does not use NLTK (only tokenizer='nltk' or "
            f"sentences='punkt' do); leave {'it' if len(ignored) == 1 else 'them'} out"
        )


def _strict_utf8(reading: dict) -> bool:
    """Whether files read with these options (checked: `decoder_for` knows their encoding) are
    their bytes decoded as UTF-8, strictly, then cleaned as `clean_text` does (then the core can
    take the bytes themselves and clean them)."""
    return codecs.lookup(reading["encoding"]).name == "utf-8" and reading["errors"] == "strict"


def _plain_utf8(reading: dict) -> bool:
    """`_strict_utf8`, with Python's newlines (as the NLTK tokenizer reads files)."""
    return _strict_utf8(reading) and reading["translate_newlines"]


def _raise_decode_error(path: str, reading: dict) -> NoReturn:
    """Reads `path` the usual way, for the error that names where it is not valid UTF-8 (the
    core found that it is not)."""
    for _ in iter_text(path, **reading):
        pass
    raise CorpusDecodeError(f"{path!r} is not valid UTF-8", path)


def _plain_size(path: str) -> int:
    """The size of an uncompressed regular file (told by its first bytes, as it is read: see
    `fastppl.text.compression`), else 0 (unknown in advance)."""
    if not os.path.isfile(path):
        return 0
    try:
        with open(path, "rb") as raw:
            return 0 if compression(path, raw.peek()) else os.fstat(raw.fileno()).st_size
    except OSError:  # unreadable: reading it raises the error
        return 0


def _sizes(paths: list[str]) -> tuple[list[int], int]:
    """The size of each file and their total, what reading progress is counted against (the
    total is unknown, 0, when one is compressed or not a regular file)."""
    sizes = [_plain_size(path) for path in paths]
    return sizes, sum(sizes) if all(sizes) else 0


def _counted(
    pieces: Iterable[AnyStr], before: int, total: int, report: ProgressCallback | None
) -> Iterator[AnyStr]:
    """``pieces``, reporting the stage ``"reading"`` after each: ``before`` plus the characters
    (or bytes) read so far, of ``total``."""
    done = before
    for text in pieces:
        yield text
        done += len(text)
        if report is not None:
            report("reading", min(done, total) if total else done, total)


@dataclass(frozen=True)
class _TextOptions:
    """How raw text becomes a corpus: the options every text constructor of `Corpus` shares,
    checked once (also for `NGramModel.evaluate_texts` and `fastppl.ray`), whether the text is
    then read in Python or in the core."""

    tokenizer: str
    sentences: str
    lowercase: bool
    #: checked by `fastppl.text._check_prefixes`
    skip_line_prefixes: tuple[str, ...]
    language: str
    engine: str

    @classmethod
    def checked(
        cls,
        tokenizer: str,
        sentences: str | None,
        lowercase: bool,
        skip_line_prefixes: Sequence[str],
        language: str,
        engine: str,
    ) -> _TextOptions:
        _checked_tokenizer(tokenizer)
        if engine not in ENGINES:
            raise InvalidArgumentError(f"engine must be one of {ENGINES}, got {engine!r}")
        if sentences is not None and sentences not in SENTENCE_MODES:
            raise InvalidArgumentError(
                f"sentences must be one of {SENTENCE_MODES}, got {sentences!r}"
            )
        sentences = resolve_sentences(tokenizer, sentences)
        _check_nltk_options(tokenizer, sentences, language, engine)
        return cls(
            tokenizer,
            sentences,
            check_bool("lowercase", lowercase),
            _check_prefixes(skip_line_prefixes),
            language,
            engine,
        )

    def native_nltk(self) -> bool:
        """Whether text goes to the native NLTK tokenizer (``add_nltk_text``)."""
        return self.engine == "native" and (
            self.tokenizer == "nltk"
            or (self.tokenizer == "whitespace" and self.sentences == "punkt")
        )

    def read_clean(self) -> _TextOptions:
        """The same options for text already lowercased and filtered while it was read."""
        return dataclasses.replace(self, lowercase=False, skip_line_prefixes=())


class Corpus:
    """Documents of sentences of tokens.

    Build one with :meth:`from_file`, :meth:`from_text`, :meth:`from_files`,
    :meth:`from_sentences` or :meth:`from_documents`. Empty sentences are dropped (they hold
    no token), except with ``tokenizer="kenlm"``, which keeps a blank line as an empty
    sentence (scored and counted as ``<s> </s>``, as KenLM does). The tokens live in Rust;
    iterating a corpus converts them back to Python lists.

    ``len(corpus)`` is the number of sentences; ``corpus.num_tokens`` the number of tokens
    (sentence markers are added by models, never stored here). ``corpus[i]`` is a sentence and
    ``corpus[i:j]`` a list of them, as from a list of the sentences.

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

        Raises:
            InvalidTypeError: a sentence is a str or not iterable, or holds something else than
                str; the message names the sentence (``sentence 3``).
            InvalidArgumentError: a token holding a lone surrogate (not UTF-8, which the core
                reads; the message names the sentence and the token, ``sentences[3][7]``, and
                the position), or the reserved ``<s>`` or ``</s>``.

        >>> Corpus.from_sentences([["the", "cat"], ["sat"]]).num_tokens
        3
        """
        return cls._from_documents([sentences], "sentences")

    @classmethod
    def from_documents(cls, documents: Iterable[Iterable[Sequence[str]]]) -> Corpus:
        """Several documents, each an iterable of tokenized sentences.

        Raises:
            InvalidTypeError, InvalidArgumentError: as :meth:`from_sentences`, or a document
                that is not iterable; the message names the document (``documents[1]``), and a
                token holding a lone surrogate is named with it, ``documents[1][3][7]``.

        >>> Corpus.from_documents([[["a"]], [["b", "c"]]]).num_documents
        2
        """
        return cls._from_documents(documents, "documents[{}]")

    @classmethod
    def _from_documents(cls, documents: Iterable[Iterable[Sequence[str]]], name: str) -> Corpus:
        """One document per item of ``documents``, handed to the core as they are; ``name``
        formatted with a document's index names its sentences in the error for a token holding
        a lone surrogate (see :func:`fastppl._checks.surrogate_error`). A document given as an
        iterator is handed over :class:`~fastppl._checks.Tracked`, for that error to name the
        sentence the core consumed."""
        inner = _core.Corpus()
        try:
            for index, document in enumerate(documents):
                if not isinstance(document, Iterable):
                    raise InvalidTypeError(
                        f"{name.format(index)} ({type(document)}) is not iterable; "
                        "expected an iterable of sentences"
                    )
                sentences = Tracked(document) if isinstance(document, Iterator) else document
                inner.add_sentences(sentences)
                inner.end_document()
        except UnicodeEncodeError as err:
            raise surrogate_error({name.format(index): sentences}, err) from err
        except InvalidTypeError as err:
            if name == "sentences" or str(err).startswith(name.format(index)):
                raise
            # the core names the sentence within its document: add the document
            raise InvalidTypeError(f"{name.format(index)}: {err}") from err
        return cls(inner)

    @classmethod
    def from_text(
        cls,
        text: str,
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode | None = None,
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        language: str = "english",
        engine: Engine = "native",
        *,
        progress: Progress = False,
    ) -> Corpus:
        """One document from raw text.

        Args:
            text: the text; its line ends ``"\\r\\n"`` and ``"\\r"`` are read as ``"\\n"``, as
                :meth:`from_file` reads a file's (not with ``"kenlm"``: ``"\\r"`` is a space).
            tokenizer: ``"nltk"`` (NLTK ``word_tokenize``, exactly), ``"whitespace"`` (already
                tokenized text, split on whitespace in Rust like ``str.split()``) or ``"kenlm"``
                (exactly as KenLM: one sentence per line, ASCII whitespace, blank lines are empty
                sentences; split in Rust; see :func:`fastppl.text.kenlm_sentences`).
            sentences: ``"terminators"`` (a sentence ends after a token ``t`` for which
                ``t in ".!?"``), ``"punkt"`` (NLTK's Punkt sentence splitter), ``"lines"`` (one
                sentence per non-empty line) or ``"none"`` (the whole text is one sequence).
                None (default): ``"lines"`` for ``"kenlm"`` (the only mode it allows),
                ``"terminators"`` otherwise.
            lowercase: lowercase the text first.
            skip_line_prefixes: drop the lines that start with any of these strings
                (non-empty, and UTF-8: checked as :func:`fastppl.text.clean_text` checks them).
            language: Punkt model used by ``"nltk"`` and ``"punkt"`` (bundled: ``"english"``,
                ``"portuguese"``; others from NLTK's data path, else
                :class:`~fastppl.errors.PunktDataNotFoundError`).
            engine: ``"native"`` (NLTK's rules ported to Rust, on all cores) or ``"python"``
                (NLTK's own code) for ``"nltk"`` and ``"punkt"``; the tokens are the same.
            progress: ``True`` for a progress bar of the native NLTK tokenizer on stderr, or a
                callable ``(stage, done, total)``; see :mod:`fastppl.progress`.

        Raises:
            InvalidArgumentError: an unknown ``tokenizer``, ``sentences`` or ``engine``, a
                ``text`` holding a lone surrogate (not UTF-8, which the core reads; the message
                names its position), or bad ``skip_line_prefixes``: a bare str, or a prefix
                that is empty (every line starts with it), not a str, or holds a lone surrogate
                (no UTF-8 line starts with it); the message names it, ``skip_line_prefixes[1]``;
                or a ``language`` or ``engine`` other than the default where nothing uses them
                (neither ``tokenizer="nltk"`` nor ``sentences="punkt"``).
            PunktDataNotFoundError: NLTK's code is used and ``language`` has no Punkt
                parameters (checked before any text is read).
            InvalidTypeError: ``lowercase`` is not a bool, or ``skip_line_prefixes`` is not
                iterable.

        >>> Corpus.from_text("a b . c d !", tokenizer="whitespace").num_sentences
        2
        """
        options = _TextOptions.checked(
            tokenizer, sentences, lowercase, skip_line_prefixes, language, engine
        )
        return cls._from_pieces([[text]], options, progress, "text")

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode | None = None,
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        language: str = "english",
        engine: Engine = "native",
        *,
        progress: Progress = False,
    ) -> Corpus:
        """One document per text; options as in :meth:`from_text`.

        Raises:
            InvalidTypeError: ``texts`` is a single str (use :meth:`from_text`), or holds
                something else than a str (the message names it, ``texts[1]``), or
                ``lowercase`` is not a bool.
            InvalidArgumentError: as :meth:`from_text`; the message names the index of a text
                holding a lone surrogate (``texts[3]``).

        >>> Corpus.from_texts(["a b. c", "d"], tokenizer="whitespace").num_documents
        2
        """
        texts = check_iterable(texts, "texts", "str")
        options = _TextOptions.checked(
            tokenizer, sentences, lowercase, skip_line_prefixes, language, engine
        )
        return cls._from_pieces(([text] for text in texts), options, progress, "texts[{}]")

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode | None = None,
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        encoding: str = "utf-8",
        errors: str = "strict",
        language: str = "english",
        engine: Engine = "native",
        *,
        progress: Progress = False,
    ) -> Corpus:
        """One document from a text file (gzip, xz and bzip2 are decompressed): a
        local path, or a URL on any filesystem fsspec knows (``s3://bucket/corpus.txt.xz``,
        read through fsspec, an optional dependency).

        Options as in :meth:`from_text`; ``encoding`` and ``errors`` as in :func:`open`. Invalid
        UTF-8 under ``errors="strict"`` raises :class:`fastppl.errors.CorpusDecodeError` naming
        the file, line and byte offset; so does a file compressed in a format fastppl does not
        read (zstd, lz4, zip, 7-Zip, lzip, compress: told by its first bytes, whatever its name
        and ``errors``), naming the compression. Line endings ``"\\r\\n"`` and ``"\\r"``
        become ``"\\n"``, except with ``tokenizer="kenlm"`` (KenLM ends lines at ``"\\n"`` only;
        ``"\\r"`` is a space).

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
            engine=engine,
            progress=progress,
        )

    @classmethod
    def from_files(
        cls,
        paths: Iterable[str | os.PathLike[str]],
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode | None = None,
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        encoding: str = "utf-8",
        errors: str = "strict",
        language: str = "english",
        engine: Engine = "native",
        *,
        progress: Progress = False,
    ) -> Corpus:
        """One document per file; options as in :meth:`from_file`.

        Raises:
            InvalidTypeError: ``paths`` is a single path (use :meth:`from_file`), or as
                :meth:`from_text`.
            InvalidArgumentError: an unknown ``encoding`` or ``errors``, or as
                :meth:`from_text` (``skip_line_prefixes`` is checked the same way whether the
                lines are dropped in Python or, for UTF-8 files read strictly, in the core).
        """
        paths = check_iterable(paths, "paths", "paths")
        options = _TextOptions.checked(
            tokenizer, sentences, lowercase, skip_line_prefixes, language, engine
        )
        decoder_for(encoding, errors)  # known, whichever way the files are then read
        # one sentence per line: read in pieces of whole lines, never the whole file at once
        by_lines = options.sentences == "lines"
        reading = {
            "encoding": encoding,
            "errors": errors,
            "skip_line_prefixes": options.skip_line_prefixes,
            "lowercase": options.lowercase,
            "translate_newlines": tokenizer != "kenlm",
        }
        paths = [os.fspath(path) for path in paths]
        if options.native_nltk() and not by_lines and _plain_utf8(reading):
            return cls._from_utf8_files(paths, options, progress)
        if by_lines and options.tokenizer in ("kenlm", "whitespace") and _strict_utf8(reading):
            return cls._from_utf8_line_files(paths, options, reading, progress)
        with reporter(progress) as report:

            def documents() -> Iterator[Iterator[str]]:
                # progress of the reading itself: characters of text read (about its bytes)
                sizes, total = _sizes(paths)
                done = 0
                for path, size in zip(paths, sizes, strict=True):
                    pieces = (
                        iter_text(path, **reading) if by_lines else [read_text(path, **reading)]
                    )
                    yield _counted(pieces, done, total, report)
                    done += size

            # (the files are read already cleaned: no second pass of the line filters)
            return cls._from_pieces(
                documents(), options.read_clean(), report, "the text read from paths[{}]"
            )

    @classmethod
    def _from_utf8_line_files(
        cls, paths: list[str], options: _TextOptions, reading: dict, progress: Progress
    ) -> Corpus:
        """One document per file read a sentence a line (KenLM's reading, or whitespace
        lines): each file's UTF-8 bytes handed to the core in pieces of whole lines, checked,
        cleaned and read there on all cores, with no Python string made (decoding, then
        encoding again for the core, took a fifth of the reading). A file that is not valid
        UTF-8 is read again the usual way, which raises the error naming its line and byte
        offset."""
        corpus = cls(_core.Corpus())
        reader = "kenlm" if options.tokenizer == "kenlm" else "lines"
        prefixes = list(options.skip_line_prefixes)
        sizes, total = _sizes(paths)
        done = 0
        with reporter(progress) as report:
            for path, size in zip(paths, sizes, strict=True):
                for data in _counted(iter_line_bytes(path), done, total, report):
                    if not corpus._inner.add_line_bytes(
                        data,
                        reader,
                        reading["translate_newlines"],
                        skip_line_prefixes=prefixes,
                        lowercase=options.lowercase,
                    ):
                        _raise_decode_error(path, reading)
                corpus._inner.end_document()
                done += size
        return corpus

    @classmethod
    def _from_utf8_files(
        cls, paths: list[str], options: _TextOptions, progress: Progress
    ) -> Corpus:
        """One document per file, each handed to the native NLTK tokenizer as its UTF-8 bytes,
        cleaned (skipped lines, lowercasing) in the core: no Python string of a whole file is
        made (it would take up to four bytes a character). A file that is not valid UTF-8 goes
        the usual way, which raises the error naming its line and byte offset."""
        corpus = cls(_core.Corpus())
        punkt = punkt_model(options.language)
        prefixes = list(options.skip_line_prefixes)
        with reporter(progress) as report:
            for path in paths:
                data = read_bytes(path)
                if not corpus._inner.add_nltk_bytes(
                    data,
                    punkt,
                    options.sentences,
                    options.tokenizer,
                    skip_line_prefixes=prefixes,
                    lowercase=options.lowercase,
                    progress=report,
                ):
                    del data
                    corpus._add_text(read_text(path), options, report)
                corpus._inner.end_document()
        return corpus

    @classmethod
    def _from_pieces(
        cls,
        documents: Iterable[Iterable[str]],
        options: _TextOptions,
        progress: Progress | ProgressCallback | None,
        name: str,
    ) -> Corpus:
        """One document per item of ``documents``, each given as pieces of text; ``name``
        formatted with a document's index names its text in the error for one holding a lone
        surrogate (see :func:`fastppl._checks.not_utf8`)."""
        corpus = cls(_core.Corpus())
        with reporter(progress) as report:
            try:
                for index, pieces in enumerate(documents):
                    for text in pieces:
                        if not isinstance(text, str):
                            raise InvalidTypeError(
                                f"{name.format(index)} must be a str, got {type(text).__name__}"
                            )
                        corpus._add_text(text, options, report)
                    corpus._inner.end_document()
            except UnicodeEncodeError as err:
                raise not_utf8(name.format(index), text) from err
        return corpus

    def _add_text(self, text: str, options: _TextOptions, report: ProgressCallback | None) -> None:
        if not isinstance(text, str):
            raise InvalidTypeError(f"text must be str, got {type(text).__name__}")
        tokenizer, sentences = options.tokenizer, options.sentences
        if tokenizer != "kenlm":  # lines as a file's (from_file), whatever their ends
            text = python_newlines(text)
        text = _clean_text(text, options.skip_line_prefixes, options.lowercase)
        if tokenizer == "kenlm":
            self._inner.add_kenlm_text(text)  # split in Rust, blank lines kept
        elif tokenizer == "whitespace" and sentences != "punkt":
            self._inner.add_whitespace_text(text, sentences)  # split in Rust
        elif options.engine == "native":  # NLTK's rules, in Rust
            punkt = punkt_model(options.language)
            self._inner.add_nltk_text(text, punkt, sentences, tokenizer, progress=report)
        else:
            self._inner.add_sentences(
                tokenize_text(text, tokenizer, sentences, options.language, options.engine)
            )

    def limit_vocab(
        self,
        min_count: int = 1,
        vocab: Iterable[str] | None = None,
        vocab_file: str | os.PathLike[str] | None = None,
    ) -> Corpus:
        """A copy in which rare or unlisted words are replaced by ``<unk>`` (in Rust, on ids).

        A word is kept when it occurs at least ``min_count`` times in this corpus and, if
        ``vocab`` or ``vocab_file`` is given, is listed there; every other occurrence becomes
        ``<unk>``. The copy's vocabulary holds only the kept words, so a model fitted on it has
        them, ``</s>`` and ``<unk>`` as |V| and learns ``<unk>``'s probability from the replaced
        tokens (SRILM's ``ngram-count -vocab FILE -unk`` practice). Sentence and document
        boundaries are unchanged.

        Args:
            min_count: minimum number of occurrences (1 keeps every word).
            vocab: the allowed words.
            vocab_file: a file of allowed words separated by ASCII whitespace (as lmplz reads
                ``--limit_vocab_file``); gzip/xz/bzip2 are decompressed. ``vocab`` and
                ``vocab_file`` together allow the words of both.

        Raises:
            InvalidArgumentError: ``min_count`` < 1 or > 2**64 - 1, or a word of ``vocab``
                holding a lone surrogate (not UTF-8; the message names it, ``vocab[3]``).
            InvalidTypeError: ``vocab`` is a single str, or holds something else than str.
            CorpusFileNotFoundError: ``vocab_file`` does not exist (the message says it is
                the vocabulary file).

        >>> c = Corpus.from_sentences([["a", "b", "a"], ["c", "a"]])
        >>> list(c.limit_vocab(min_count=2))
        [['a', '<unk>', 'a'], ['<unk>', 'a']]
        >>> list(c.limit_vocab(vocab=["b", "c"]))
        [['<unk>', 'b', '<unk>'], ['c', '<unk>']]
        """
        min_count = check_int("min_count", min_count)
        if not 1 <= min_count <= U64_MAX:
            raise InvalidArgumentError(
                f"min_count must be at least 1 and at most 2**64 - 1, got {min_count}"
            )
        words = None
        if vocab is not None:
            words = list(check_iterable(vocab, "vocab", "words"))
            for w in words:
                if not isinstance(w, str):
                    raise InvalidTypeError(f"vocab words must be str, got {type(w).__name__}")
        text = None
        if vocab_file is not None:
            try:
                text = read_text(vocab_file, translate_newlines=False)
            except CorpusFileNotFoundError as e:
                raise CorpusFileNotFoundError(
                    f"vocabulary file not found: {e.path!r}", e.path
                ) from None
        with utf8_strings({"vocab": words}):
            return Corpus(self._inner.limit_vocab(min_count, words, text))

    # ---- inspection ---------------------------------------------------------------------
    def __len__(self) -> int:
        return self._inner.num_sentences

    @property
    def num_sentences(self) -> int:
        """Number of sentences (empty ones only with ``tokenizer="kenlm"``)."""
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
        """Number of distinct tokens other than ``<unk>`` (the reserved word that the text's own
        ``<unk>`` tokens and the words :meth:`limit_vocab` drops become; ``token_counts`` lists
        it)."""
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

    @overload
    def __getitem__(self, index: SupportsIndex) -> list[str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[str]]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> list[str] | list[list[str]]:
        """The sentence at ``index`` (negative counts from the end), or for a slice the list of
        its sentences, as a list of the sentences would give them.

        Raises:
            IndexError: ``index`` is not in ``-len(corpus) <= index < len(corpus)``.
            InvalidTypeError: ``index`` is neither an integer (numpy integers too) nor a slice.

        >>> c = Corpus.from_sentences([["a"], ["b", "c"], ["d"]])
        >>> c[-1], c[1:], c[::-2]
        (['d'], [['b', 'c'], ['d']], [['d'], ['a']])
        """
        n = len(self)
        if isinstance(index, slice):
            span = range(n)[index]
            if not span:
                return []
            low = min(span)
            return self._inner.sentences(low, max(span) + 1)[span.start - low :: span.step]
        position = check_int("sentence index", index)
        if not -n <= position < n:
            raise IndexError(f"sentence index {position} out of range for {n} sentences")
        return self._inner.sentences(position % n, position % n + 1)[0]

    def __repr__(self) -> str:
        return (
            f"Corpus({self.num_documents} documents, {self.num_sentences} sentences, "
            f"{self.num_tokens} tokens)"
        )
