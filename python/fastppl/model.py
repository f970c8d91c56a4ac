"""`NGramModel`: fit, query and evaluate n-gram language models (natural logs unless asked)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from fastppl import _core
from fastppl._checks import (
    RESERVED,
    U64_MAX,
    LogBase,
    OovPolicy,
    check_bool,
    check_int,
    check_iterable,
    check_number,
    check_oov,
    check_tokens,
    log_base_divisor,
    surrogate_error,
    utf8_strings,
)
from fastppl.corpus import Corpus, _TextOptions
from fastppl.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    ModelFileNotFoundError,
    NotNormalizedError,
    ZeroProbabilityWarning,
)
from fastppl.progress import Progress, reporter
from fastppl.result import EvaluationResult
from fastppl.text import SentenceMode, Tokenizer, python_newlines
from fastppl.tokenize import punkt_model

if TYPE_CHECKING:
    import numpy as np

Smoothing = Literal[
    "mle",
    "additive",
    "laplace",
    "lidstone",
    "witten_bell",
    "absolute_discounting",
    "kneser_ney",
    "modified_kneser_ney",
    "stupid_backoff",
]

#: The estimator names, in the order of :data:`Smoothing`. The list itself is the Rust core's
#: (``_core.SMOOTHINGS``: each name with the parameters it takes and their defaults); the
#: ``Literal`` above, needed for static typing, is tested to equal it.
SMOOTHINGS: tuple[str, ...] = get_args(Smoothing)


class TokenScores(NamedTuple):
    """Per predicted token of one sentence (``</s>`` last when the model has sentence markers).

    Attributes:
        logprob: log p of each token (float64; natural log unless a base was asked for).
        ngram_length: length of the longest stored n-gram ending at the token (uint32; KenLM's
            ``ngram_length``: 1 when only the unigram matched).
        oov: whether the token is out of the vocabulary (scored as ``<unk>``).
    """

    logprob: np.ndarray
    ngram_length: np.ndarray
    oov: np.ndarray


#: The estimators whose models have an ARPA (back-off) form, the interpolated ones (from the
#: core): :meth:`NGramModel.to_arpa` refuses the others (their probabilities do not back off, or
#: are not normalized).
ARPA_SMOOTHINGS: tuple[str, ...] = tuple(_core.ARPA_SMOOTHINGS)

#: File name endings that mean fastppl's binary format (:meth:`NGramModel.save`) where a model
#: is written by name (``fastppl train``, :func:`fastppl.ray.train`); others mean ARPA. (A
#: binary model is never compressed: its writers refuse a ``.gz``, ``.zst``... name.)
BINARY_SUFFIXES = (".fppl", ".fastppl")


def is_binary_name(path: str | os.PathLike[str]) -> bool:
    """Whether a model written to `path` is in fastppl's binary format by default.

    >>> is_binary_name("m.fppl"), is_binary_name("m.ARPA.gz")
    (True, False)
    """
    return os.fspath(path).lower().endswith(BINARY_SUFFIXES)


# parameters each estimator accepts (anything else is a mistake worth reporting)
_PARAMS: dict[str, frozenset[str]] = {
    name: frozenset(params) for name, params in _core.SMOOTHINGS.items()
}
if tuple(_PARAMS) != SMOOTHINGS:
    raise AssertionError("fastppl.model.Smoothing differs from the core's _core.SMOOTHINGS")


def check_prune(prune: Sequence[int] | None) -> list[int]:
    """Pruning thresholds as a list of ints (the core checks their values against the order)."""
    if prune is None:
        return []
    if isinstance(prune, (str, bytes)) or not isinstance(prune, Sequence):
        raise InvalidTypeError(
            f"prune must be a sequence of ints such as (0, 1, 1), got {type(prune).__name__}"
        )
    thresholds = [check_int("prune threshold", t) for t in prune]
    out_of_range = [t for t in thresholds if not 0 <= t <= U64_MAX]
    if out_of_range:
        raise InvalidArgumentError(
            f"prune thresholds must be >= 0 and <= 2**64 - 1, got {out_of_range[0]}"
        )
    return thresholds


def fit_arguments(
    corpus: Corpus,
    order: int,
    smoothing: str,
    bos_eos: bool,
    params: dict[str, Any],
    *,
    prune: Sequence[int] | None = None,
    min_count: int = 1,
    vocab_file: str | os.PathLike[str] | None = None,
) -> tuple[Corpus, dict[str, Any]]:
    """Checks the arguments of a fit; returns the corpus to count (with its vocabulary limited
    when asked) and the core's keyword arguments (shared by `NGramModel.fit` and
    `fastppl.train_arpa`)."""
    if not isinstance(corpus, Corpus):
        raise InvalidTypeError(f"corpus must be a fastppl.Corpus, got {type(corpus).__name__}")
    order = check_int("order", order)
    bos_eos = check_bool("bos_eos", bos_eos)
    if smoothing not in _PARAMS:
        raise InvalidArgumentError(
            f"unknown smoothing {smoothing!r}; expected one of {', '.join(_PARAMS)}"
        )
    unexpected = set(params) - _PARAMS[smoothing]
    if unexpected:
        allowed = ", ".join(sorted(_PARAMS[smoothing])) or "none"
        raise InvalidArgumentError(
            f"{smoothing} does not take {', '.join(sorted(unexpected))} (parameters: {allowed})"
        )
    if order < 1 or order > _core.MAX_ORDER:
        raise InvalidArgumentError(f"order must be between 1 and {_core.MAX_ORDER}, got {order}")
    numbers = {k: check_number(k, params[k]) for k in ("k", "discount", "alpha") if k in params}
    args = {
        "order": order,
        "bos_eos": bos_eos,
        **numbers,
        "discount_fallback": check_bool(
            "discount_fallback", params.get("discount_fallback", False)
        ),
        "prune": check_prune(prune),
    }
    if min_count != 1 or vocab_file is not None:
        corpus = corpus.limit_vocab(min_count=min_count, vocab_file=vocab_file)
    return corpus, args


class NGramModel:
    """An n-gram language model estimated by the Rust core.

    Log-probabilities are natural logs unless a ``base`` is given; perplexity does not depend on
    the base. See the README for the exact conventions (padding, vocabulary, estimators).

    >>> c = Corpus.from_sentences([["a", "b"], ["a", "c"]])
    >>> m = NGramModel.fit(c, order=2, smoothing="mle")
    >>> round(m.prob("b", context=("a",)), 3)
    0.5
    """

    __slots__ = ("_inner",)

    def __init__(self, _inner: _core.NGramModel) -> None:
        self._inner = _inner

    @classmethod
    def fit(
        cls,
        corpus: Corpus,
        order: int = 3,
        smoothing: Smoothing = "modified_kneser_ney",
        bos_eos: bool = True,
        *,
        prune: Sequence[int] | None = None,
        min_count: int = 1,
        vocab_file: str | os.PathLike[str] | None = None,
        progress: Progress = False,
        **params: Any,
    ) -> NGramModel:
        """Counts ``corpus`` up to ``order`` and estimates a model (GIL released, all cores).

        Args:
            corpus: the training text.
            order: n-gram order N, from 1 to ``fastppl.MAX_ORDER``.
            smoothing: ``"mle"``, ``"additive"`` (``k``, default 1), ``"laplace"`` (k=1),
                ``"lidstone"`` (= additive), ``"witten_bell"``, ``"absolute_discounting"``
                (``discount``, default 0.75), ``"kneser_ney"`` (interpolated, ``discount``,
                default 0.75), ``"modified_kneser_ney"`` (as KenLM's lmplz;
                ``discount_fallback``), ``"stupid_backoff"`` (``alpha``, default 0.4; scores, not
                probabilities).
            bos_eos: pad sentences as ``<s> ... </s>`` (``</s>`` is predicted, ``<s>`` only
                context); False scores tokens with no padding.
            prune: count thresholds per order, unigrams first, as lmplz's ``--prune``: an
                n-gram of order m seen at most ``prune[m-1]`` times is left out and its mass
                goes to its context's backoff weight (so distributions still sum to 1). The
                last value applies to the higher orders; values must not decrease and the
                unigram one must be 0; ``(0, 1)`` prunes singletons above unigrams. Only for the
                interpolated estimators. None or all zeros: no pruning.
            min_count: words seen fewer times in ``corpus`` become ``<unk>`` before counting (a
                vocabulary cutoff, SRILM-style; lmplz has none). 1 keeps every word.
            vocab_file: words not in this file (whitespace-separated) become ``<unk>`` before
                counting, so ``<unk>`` gets their mass. lmplz's ``--limit_vocab_file`` reads the
                same file but instead prunes the n-grams holding other words after counting;
                the models differ. See :meth:`Corpus.limit_vocab`.
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.
            **params: the estimator's parameters listed above.

        Raises:
            InvalidArgumentError: bad order, estimator or parameter, or a ``prune`` threshold or
                ``min_count`` out of range (below 0, resp. 1, or above 2**64 - 1).
            CorpusFileNotFoundError: ``vocab_file`` does not exist.
            EmptyCorpusError: the corpus has no token.

        >>> c = Corpus.from_sentences([["a", "b", "a"]])
        >>> NGramModel.fit(c, order=1, smoothing="laplace", bos_eos=False).vocab_size
        3
        """
        corpus, args = fit_arguments(
            corpus,
            order,
            smoothing,
            bos_eos,
            params,
            prune=prune,
            min_count=min_count,
            vocab_file=vocab_file,
        )
        with reporter(progress) as report:
            inner = _core.NGramModel.fit(
                corpus._inner, smoothing=smoothing, progress=report, **args
            )
        return cls(inner)

    @classmethod
    def from_arpa(cls, path: str | os.PathLike[str], *, progress: Progress = False) -> NGramModel:
        """Loads an ARPA back-off model (as written by KenLM's lmplz, SRILM, fastppl...).

        The file is read line by line (never whole in memory) and may be gzip, xz or bzip2
        compressed (detected from its first bytes). ARPA values are log10; the model stores and
        returns natural logs (ln = log10 * ln 10), so ``logprob(..., base=10)`` gives back the
        file's numbers. ``-99`` in the file means probability (or backoff weight) 0. A file
        without ``<unk>`` gets ``<unk>`` with log10 probability -100, as KenLM does. Scoring
        follows KenLM's ``query``: sentences are ``<s> ... </s>``, a missing n-gram backs off
        adding the backoff weights of the skipped contexts. As in KenLM, the context of every
        n-gram must be in the file, while a missing suffix (SRILM pruning) gets a "blank" entry
        (probability by backing off, backoff 0), so ``ngram_counts`` can exceed the header's.

        Args:
            path: the ARPA file.
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.

        Returns:
            The model (``smoothing == "arpa"``, ``bos_eos == True``, no training counts).

        Raises:
            ModelFileNotFoundError: ``path`` does not exist (a ``FileNotFoundError``).
            ModelFormatError: the file is malformed; the message, ``.path`` and ``.line`` (1-based)
                name the place. Or it is compressed in a format fastppl does not read (zstd,
                lz4, zip...: the message names it).
            OSError: the file cannot be read.
        """
        with reporter(progress) as report:
            return cls(_core.NGramModel.from_arpa(os.fspath(path), progress=report))

    @classmethod
    def from_kenlm_binary(
        cls, path: str | os.PathLike[str], *, progress: Progress = False
    ) -> NGramModel:
        """Opens a binary file made by KenLM's ``build_binary`` (format version 5).

        The file is **used in place**, as KenLM does: it is memory-mapped and only its header and
        layout are read, so opening takes about as long as KenLM's own start-up whatever the
        model's size, and scoring looks words and n-grams up in KenLM's own structures as
        ``query`` does (the same float32 sums: each token's log10 probability, n-gram length and
        state equal ``query``'s and the ``kenlm`` module's). Both structures ``build_binary``
        writes are read: probing files (``build_binary probing``, KenLM's default, e.g. CCNet's
        ``en.arpa.bin``) and tries in every variant (plain ``build_binary trie``; quantized
        ``-q``/``-b``, whose values are the bin centers ``query`` uses, so scores are those of
        ``query`` on the file, not of the ARPA it was built from; array-compressed pointers
        ``-a``; and both).

        Such a model scores (``evaluate``, ``logprobs``, ``full_scores``, ``perplexity``,
        :mod:`fastppl.kenlm`, :mod:`fastppl.documents`) and lists its words (``vocab()``, read
        from the end of the file, in KenLM's id order). What needs the n-grams themselves:
        a trie is converted for it (:meth:`to_arpa`, :meth:`save` read every n-gram first, which
        takes time and memory in proportion to the model); a probing file's tables hold hashes
        of word sequences, not the words, so :meth:`to_arpa`, :meth:`save` and :meth:`count`
        raise :class:`ModelFormatError` saying so (load the ARPA file it was built from, or
        build a trie). Not supported: rest-cost probing files (``build_binary rest``) and files
        written on big-endian machines.

        Args:
            path: the binary file.
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.

        Returns:
            The model (``smoothing == "arpa"``, ``bos_eos == True``, no training counts).

        Raises:
            ModelFileNotFoundError: ``path`` does not exist (a ``FileNotFoundError``).
            ModelFormatError: the file is not a KenLM binary file, is of another format version,
                byte order or search structure (rest-cost probing), or is truncated or corrupt
                (what only reading every n-gram or word can find is found when they are read);
                the message and ``.path`` name the file.
            OSError: the file cannot be read.

        Example (``NGramModel.from_kenlm_binary("en.arpa.bin").perplexity(...)`` on a real file;
        anything else is refused with a message saying what it is):

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "m.bin")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"mmap lm http://kheafield.com/code format version 4")
        >>> NGramModel.from_kenlm_binary(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fastppl.errors.ModelFormatError: ...: KenLM binary format version 4, but fastppl reads ...
        """
        with reporter(progress) as report:
            return cls(_core.NGramModel.from_kenlm_binary(os.fspath(path), progress=report))

    def to_arpa(self, path: str | os.PathLike[str], *, progress: Progress = False) -> None:
        """Writes the model as an ARPA file in KenLM's layout (log10 values, float32 precision).

        The file is compressed when its name ends in ``.gz``, ``.xz`` or ``.bz2`` (the name of
        another compression, ``.zst``, ``.lz4``, ``.7z``..., is refused). Probabilities
        and backoff weights are written as log10 numbers rounded to float32 with the shortest
        digits that read back to the same float32, as lmplz prints them.

        The file is written under a temporary name and renamed into place: an interrupted or
        failed write leaves the file that was there untouched.

        Args:
            path: the file to create (replaced if it exists).
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.

        Raises:
            InvalidArgumentError: the model has no ARPA form: ``mle``, ``additive`` / ``laplace``
                (their probabilities do not back off), ``stupid_backoff`` (not normalized) or a
                model fitted with ``bos_eos=False``; or ``path`` ends in the extension of a
                compression fastppl does not write (``.zst``, ``.lz4``, ``.7z``, ``.zip``...).
            OSError: the file cannot be written.
        """
        with reporter(progress) as report:
            self._inner.to_arpa(os.fspath(path), progress=report)

    def save(self, path: str | os.PathLike[str], *, progress: Progress = False) -> None:
        """Writes the model in fastppl's own binary format (GIL released).

        The format holds everything the model has (probabilities, backoff weights, training
        counts, vocabulary, estimator name and discounts), exactly: :meth:`load` gives back a
        model whose scores are bit for bit the same. It is versioned, checksummed (xxh3) and laid
        out so that :meth:`load` can memory-map it; it is never pickle. The file is written
        under a temporary name and renamed into place, so a model loaded from ``path`` keeps
        working while another is saved over it. The file is never compressed (it is mapped
        where it lies): a name ending in a compression's extension (``.gz``, ``.xz``,
        ``.bz2``, ``.zst``...) is refused rather than given uncompressed bytes; name it
        ``.fppl``, or compress the model as ARPA (:meth:`to_arpa`).

        Args:
            path: the file to create (replaced if it exists).
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.

        Raises:
            InvalidArgumentError: ``path`` ends in a compression's extension (checked before
                anything is written).
            OSError: the file cannot be written.

        >>> import os, tempfile
        >>> m = NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="mle")
        >>> with tempfile.TemporaryDirectory() as d:
        ...     m.save(os.path.join(d, "m.fppl"))
        ...     NGramModel.load(os.path.join(d, "m.fppl")).logprobs(["a", "b"]).tolist()
        [0.0, 0.0, 0.0]
        """
        with reporter(progress) as report:
            self._inner.save(os.fspath(path), progress=report)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        verify: bool = True,
        *,
        mmap: bool = True,
        progress: Progress = False,
    ) -> NGramModel:
        """Loads a model written by :meth:`save`, by memory-mapping it (GIL released).

        The n-gram tables are used in place from the mapped file (the operating system pages
        them in on demand, and processes loading one file share its pages), so loading costs
        little more than rebuilding the vocabulary's hash map.

        **The mmap contract** (as KenLM's for its binary files): while a model is loaded, its
        file must not be truncated or rewritten *in place* by another program; that can crash
        the process (SIGBUS) or change its numbers. Replacing the file by renaming a new one
        over it is safe: fastppl itself always writes that way (:meth:`save`, :meth:`to_arpa`,
        the command line), so a loaded model keeps working while another is saved over it.
        When other tools may rewrite the file in place, pass ``mmap=False``: the file is read
        into memory (same checks) and nothing done to it later matters.

        **Speed.** Scoring looks n-grams up at random places in tables of up to gigabytes.
        Where the kernel offers transparent huge pages on request (Linux's common ``madvise``
        setting), fastppl asks for them: always for a model read into memory (``mmap=False``,
        and models built by :meth:`fit` or :meth:`from_arpa`), and for a mapped file when its
        pages are read from disk (not when they are already cached in small pages). On a
        5-gram of 119 M n-grams that made scoring on one core markedly faster
        (``benches/MEASUREMENTS.md``, "Huge pages"); reading the file then takes longer, so
        ``mmap=False`` pays off for long scoring runs in one process, and the default suits
        many short-lived processes sharing one file.

        Args:
            path: a file written by :meth:`save`.
            verify: check the file's checksum and the consistency of every n-gram entry, which
                reads the whole file. With False only the header and the structure are checked
                (the vocabulary always is): use it for files you trust. A corrupted body then
                gives wrong numbers or a :class:`FastpplError`, never memory unsafety, a panic or
                an endless lookup.
            mmap: map the file (default), or read it into memory (see above).
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.

        Returns:
            The model, equal to the one saved.

        Raises:
            ModelFileNotFoundError: ``path`` does not exist (a ``FileNotFoundError``).
            ModelFormatError: the file is not a fastppl binary model, is of a newer format
                version, is truncated or corrupt, or is a directory; the message names the file
                and the problem.
            OSError: the file cannot be read.
        """
        verify = check_bool("verify", verify)
        mmap = check_bool("mmap", mmap)
        with reporter(progress) as report:
            inner = _core.NGramModel.load(
                os.fspath(path), verify=verify, mmap=mmap, progress=report
            )
        return cls(inner)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, mmap: bool = True, progress: Progress = False
    ) -> NGramModel:
        """Loads a model file of any kind, recognized by its first bytes: fastppl's binary format
        (:meth:`load`), a KenLM binary file (:meth:`from_kenlm_binary`), else an ARPA file, plain
        or compressed (:meth:`from_arpa`). ``mmap`` as in :meth:`load` (the other kinds are read
        into memory).

        >>> import os, tempfile
        >>> c = Corpus.from_sentences([["a", "b"], ["b"]])
        >>> m = NGramModel.fit(c, order=2, smoothing="kneser_ney")
        >>> folder = tempfile.mkdtemp()
        >>> m.to_arpa(os.path.join(folder, "m.arpa"))
        >>> m.save(os.path.join(folder, "m.fppl"))
        >>> [NGramModel.from_file(os.path.join(folder, f)).order for f in ("m.arpa", "m.fppl")]
        [2, 2]

        Raises:
            ModelFileNotFoundError: ``path`` does not exist (a ``FileNotFoundError``).
            ModelFormatError: the file is none of these kinds, or is malformed.
        """
        try:
            with open(path, "rb") as f:
                head = f.read(max(len(_core.BINARY_MAGIC), len(_core.KENLM_MAGIC)))
        except FileNotFoundError:
            raise ModelFileNotFoundError(f"model file not found: {os.fspath(path)!r}") from None
        if head.startswith(_core.BINARY_MAGIC):
            return cls.load(path, mmap=mmap, progress=progress)
        if head.startswith(_core.KENLM_MAGIC):
            return cls.from_kenlm_binary(path, progress=progress)
        return cls.from_arpa(path, progress=progress)

    # ---- properties ---------------------------------------------------------------------
    @property
    def order(self) -> int:
        """The order N."""
        return self._inner.order

    @property
    def vocab_size(self) -> int:
        """|V|: every training type, ``</s>`` (with bos_eos) and ``<unk>``; never ``<s>``."""
        return self._inner.vocab_size

    @property
    def bos_eos(self) -> bool:
        """Whether sentences are scored as ``<s> ... </s>``."""
        return self._inner.bos_eos

    @property
    def smoothing(self) -> str:
        """Name of the estimator."""
        return self._inner.smoothing

    @property
    def normalized(self) -> bool:
        """Whether scores are probabilities (False for stupid backoff)."""
        return self._inner.normalized

    @property
    def discounts(self) -> list[tuple[float, float, float]]:
        """(D1, D2, D3+) per order for discounting estimators (one value thrice when fixed)."""
        return self._inner.discounts

    @property
    def ngram_counts(self) -> list[int]:
        """Stored n-grams per order (order 1: the vocabulary size)."""
        return self._inner.ngram_counts

    def vocab(self) -> list[str]:
        """The vocabulary, ``<unk>``, ``<s>``, ``</s>`` first (``<unk>`` first, then KenLM's id
        order, for a KenLM binary file, whose words are read from the end of the file). Without
        bos_eos, neither ``<s>`` nor ``</s>``: such a model never sees nor predicts them."""
        words = self._inner.vocab()
        return words if self.bos_eos else [w for w in words if w not in RESERVED]

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str) or (word in RESERVED and not self.bos_eos):
            return False
        try:
            return self._inner.contains(word)
        except UnicodeEncodeError:  # a lone surrogate: no word of a vocabulary (UTF-8) has one
            return False

    def count(self, ngram: Sequence[str]) -> int:
        """Training count of an n-gram (a sequence of tokens); 0 if unseen (and for models read
        from ARPA or KenLM files, which hold no counts). A KenLM probing file, whose n-grams
        cannot be listed, raises :class:`ModelFormatError`.

        Raises:
            InvalidTypeError: ``ngram`` is a str, or holds something else than str.
            InvalidArgumentError: a token holding a lone surrogate (not UTF-8, which the core
                reads; the message names it, ``ngram[1]``, and the position).

        >>> m = NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="mle")
        >>> m.count(("<s>", "a")), m.count(["a", "b"]), m.count(["b", "a"])
        (1, 1, 0)
        """
        tokens = check_tokens(ngram, "ngram")
        try:
            return self._inner.count(tokens)
        except UnicodeEncodeError as err:
            raise surrogate_error({"ngram": tokens}, err) from err

    # ---- scoring ------------------------------------------------------------------------
    def logprob(self, word: str, context: Sequence[str] = (), base: LogBase | None = None) -> float:
        """log p(word | context), natural log unless ``base`` is given (2, 10...).

        Only the last ``order - 1`` context tokens are used; unknown words are ``<unk>``.
        Write ``<s>`` at the start of ``context`` to condition on a sentence start.

        Raises:
            InvalidTypeError: ``word`` is not a str, ``context`` is a str or holds something
                else than str.
            InvalidArgumentError: ``word`` is ``<s>`` (or ``</s>`` without bos_eos), a bad
                ``base``, or ``word`` or a token of ``context`` holds a lone surrogate (not
                UTF-8, which the core reads; the message names it, ``context[2]``, and the
                position).
        """
        if not isinstance(word, str):
            raise InvalidTypeError(f"word must be str, got {type(word).__name__}")
        if word == "<s>" or (word == "</s>" and not self.bos_eos):
            raise InvalidArgumentError(
                f"{word!r} is never predicted by this model (bos_eos={self.bos_eos})"
            )
        divisor = log_base_divisor(base)
        tokens = check_tokens(context, "context")
        try:
            return self._inner.logprob(word, tokens) / divisor
        except UnicodeEncodeError as err:
            raise surrogate_error({"word": word, "context": tokens}, err) from err

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """p(word | context) (a score for stupid backoff)."""
        return math.exp(self.logprob(word, context))

    def logprobs(self, tokens: Sequence[str], base: LogBase | None = None) -> np.ndarray:
        """log p of each token of one sentence, then of ``</s>`` when bos_eos (float64).

        Raises:
            InvalidTypeError: ``tokens`` is a str, or holds something else than str.
            InvalidArgumentError: a token is ``<s>`` or ``</s>``, or holds a lone surrogate (not
                UTF-8, which the core reads; the message names it, ``tokens[3]``, and the
                position); a bad ``base``.

        >>> m = NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="mle")
        >>> m.logprobs(["a", "b"]).tolist()
        [0.0, 0.0, 0.0]
        """
        divisor = log_base_divisor(base)
        checked = check_tokens(tokens, "tokens", allow_reserved=False)
        try:
            out = self._inner.logprobs(checked)
        except UnicodeEncodeError as err:
            raise surrogate_error({"tokens": checked}, err) from err
        return out if divisor == 1.0 else out / divisor

    def full_scores(
        self,
        tokens: Sequence[str],
        base: LogBase | None = None,
        *,
        bos: bool = True,
        eos: bool = True,
    ) -> TokenScores:
        """log p, matched n-gram length and OOV flag of each token of one sentence, then ``</s>``.

        The counterpart of the ``kenlm`` module's ``Model.full_scores`` (which uses log10: pass
        ``base=10``), computed in one Rust call. ``bos=False`` starts from an empty context
        instead of ``<s>``; ``eos=False`` leaves ``</s>`` out (models with sentence markers).

        Raises:
            InvalidTypeError: ``tokens`` is a str or holds something else than str; ``bos`` or
                ``eos`` is not a bool.
            InvalidArgumentError: as :meth:`logprobs`.

        >>> m = NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="mle")
        >>> s = m.full_scores(["a", "zz"])
        >>> s.ngram_length.tolist(), s.oov.tolist()
        ([2, 1, 1], [False, True, False])
        """
        divisor = log_base_divisor(base)
        checked = check_tokens(tokens, "tokens", allow_reserved=False)
        try:
            logprob, ngram_length, oov = self._inner.full_scores(
                checked, check_bool("bos", bos), check_bool("eos", eos)
            )
        except UnicodeEncodeError as err:
            raise surrogate_error({"tokens": checked}, err) from err
        return TokenScores(logprob if divisor == 1.0 else logprob / divisor, ngram_length, oov)

    def evaluate(
        self,
        corpus: Corpus,
        oov: OovPolicy = "unk",
        *,
        token_logprobs: bool = False,
        allow_unnormalized: bool = False,
        progress: Progress = False,
    ) -> EvaluationResult:
        """Scores a corpus (GIL released, all cores) and returns its perplexity and totals.

        Args:
            corpus: the text to score.
            oov: ``"unk"`` scores out-of-vocabulary tokens as ``<unk>``; ``"skip"`` leaves them
                out of the totals (KenLM's "excluding OOVs"; ``<unk>`` stays in the history of
                the next tokens); ``"error"`` raises :class:`OutOfVocabularyError`.
            token_logprobs: also return ln p of every scored token.
            allow_unnormalized: score with a stupid-backoff model anyway (its "perplexity" is
                not one); otherwise such a model raises :class:`NotNormalizedError`.
            progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done,
                total)``; see :mod:`fastppl.progress`. Ctrl-C interrupts the call either way.

        A token of probability 0 (MLE and unseen words) makes the perplexity ``inf`` and warns
        with :class:`ZeroProbabilityWarning`; nothing is ever NaN.

        Raises:
            InvalidArgumentError: ``oov`` is not one of the three policies (one holding a lone
                surrogate is named so: ``oov holds a lone surrogate ...``).
            InvalidTypeError: ``corpus`` is not a `Corpus`, or ``token_logprobs`` not a bool.
            NotNormalizedError: a stupid-backoff model, unless ``allow_unnormalized``.
        """
        if not isinstance(corpus, Corpus):
            raise InvalidTypeError(f"corpus must be a fastppl.Corpus, got {type(corpus).__name__}")
        oov = check_oov(oov)
        token_logprobs = check_bool("token_logprobs", token_logprobs)
        self._check_normalized(allow_unnormalized)
        with reporter(progress) as report:
            scores = self._inner.evaluate(corpus._inner, oov, token_logprobs, progress=report)
        return self._result(scores, oov)

    def evaluate_texts(
        self,
        texts: Sequence[str],
        oov: OovPolicy = "unk",
        *,
        tokenizer: Tokenizer = "nltk",
        sentences: SentenceMode | None = None,
        lowercase: bool = False,
        skip_line_prefixes: Sequence[str] = (),
        language: str = "english",
        allow_unnormalized: bool = False,
    ) -> EvaluationResult:
        """Scores each text as a document: ``evaluate(Corpus.from_texts(texts, ...), oov)``, the
        same numbers, in one Rust call that reads and scores the whole batch with the GIL
        released (no Python work per text: for batches of many short documents, as the scoring
        actors of `fastppl.ray` get). Options as in `Corpus.from_texts` (its native tokenizers)
        and :meth:`evaluate`.

        Raises:
            InvalidTypeError: ``texts`` is a single str or holds something else than str.
            InvalidArgumentError: a bad option (``skip_line_prefixes`` as in
                `Corpus.from_text`; ``oov`` as in :meth:`evaluate`), or a text holding a lone
                surrogate (not UTF-8, which the core reads; the message names it, ``texts[3]``,
                and the position).
            NotNormalizedError: a stupid-backoff model, unless ``allow_unnormalized``.

        >>> m = NGramModel.fit(Corpus.from_sentences([["a", "b"], ["b", "a"]]), order=2,
        ...                    smoothing="witten_bell")
        >>> r = m.evaluate_texts(["a b", "", "b b a"], tokenizer="whitespace")
        >>> r.document_num_tokens.tolist(), r.num_tokens
        ([3, 0, 4], 7)
        """
        oov = check_oov(oov)
        texts = list(check_iterable(texts, "texts", "str"))
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidTypeError(f"texts[{index}] must be a str, got {type(text).__name__}")
        options = _TextOptions.checked(
            tokenizer, sentences, lowercase, skip_line_prefixes, language, "native"
        )
        prefixes = list(options.skip_line_prefixes)
        punkt = punkt_model(options.language) if options.native_nltk() else None
        self._check_normalized(allow_unnormalized)
        lines = texts
        if options.tokenizer != "kenlm":  # lines as Corpus.from_texts reads them
            lines = [python_newlines(text) for text in texts]
        with utf8_strings({"texts": texts}):
            scores = self._inner.evaluate_texts(
                lines,
                options.tokenizer,
                options.sentences,
                punkt,
                prefixes,
                options.lowercase,
                oov,
            )
        return self._result(scores, oov)

    def _check_normalized(self, allow_unnormalized: bool) -> None:
        """Refuses to score with a stupid-backoff model unless allowed (then warns)."""
        if not self.normalized:
            if not allow_unnormalized:
                raise NotNormalizedError(
                    f"{self.smoothing} gives scores, not probabilities: their 'perplexity' is "
                    "not a perplexity. Pass allow_unnormalized=True to compute it anyway."
                )
            warnings.warn(
                f"{self.smoothing} scores are not normalized: this is not a perplexity",
                stacklevel=3,
            )

    def _result(self, scores: _core.Scores, oov: str) -> EvaluationResult:
        """The result of the core's scores; warns of probability-0 tokens."""
        result = EvaluationResult.from_scores(scores, skip_oov=oov == "skip")
        if result.num_zero_probability:
            warnings.warn(
                f"{result.num_zero_probability} sentence(s) contain a token of probability 0 "
                f"under {self.smoothing}: the perplexity is infinite",
                ZeroProbabilityWarning,
                stacklevel=3,
            )
        return result

    def perplexity(self, corpus: Corpus, oov: OovPolicy = "unk") -> float:
        """Shorthand for ``evaluate(corpus, oov).perplexity``."""
        return self.evaluate(corpus, oov).perplexity

    def __repr__(self) -> str:
        return (
            f"NGramModel(order={self.order}, smoothing={self.smoothing!r}, "
            f"vocab_size={self.vocab_size}, ngrams={self.ngram_counts})"
        )
