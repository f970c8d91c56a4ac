"""Training within a memory budget: `train_arpa` writes an ARPA model with the counts on disk.

`NGramModel.fit` keeps every n-gram count in memory (about 60 bytes per n-gram, fastest).
`train_arpa` computes the same model, byte for byte, the way KenLM's ``lmplz -S`` does: it sorts
the n-grams in runs that fit in what ``memory`` leaves beside the corpus, spills the runs to
``temp_dir`` and merges them, so the counts never need to fit in memory; the model goes straight
to an ARPA file.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from typing import Any, NamedTuple

from fastppl import _core
from fastppl.corpus import Corpus
from fastppl.errors import InvalidArgumentError, InvalidTypeError
from fastppl.model import fit_arguments
from fastppl.progress import Progress, reporter


class TrainingSummary(NamedTuple):
    """What `train_arpa` wrote."""

    ngram_counts: list[int]
    """N-grams per order as the ARPA header states them (the unigrams include ``<s>``)."""
    sorted_runs: int
    """Sorted runs written to the temporary directory (more runs: a smaller budget)."""
    bytes_spilled: int
    """Bytes written to the temporary directory, runs and intermediate files."""


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_memory(memory: int | str) -> int:
    """Bytes from a memory size: an int (bytes), ``"512M"``, ``"4G"``, ``"1.5g"``, ``"80%"``
    (of physical memory, as lmplz ``-S`` accepts). K, M, G, T are powers of 1024.

    >>> parse_memory("2G"), parse_memory(1024), parse_memory("1.5k")
    (2147483648, 1024, 1536)
    """
    if isinstance(memory, bool) or not isinstance(memory, (int, str)):
        raise InvalidTypeError(f"memory must be an int or a str, got {type(memory).__name__}")
    if isinstance(memory, int):
        if memory <= 0:
            raise InvalidArgumentError(f"memory must be positive, got {memory}")
        return memory
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([kmgtb%]?)\s*", memory, re.IGNORECASE)
    if match is None:
        raise InvalidArgumentError(
            f"memory must look like 4G, 512M, 80% or a number of bytes, got {memory!r}"
        )
    value, unit = float(match.group(1)), match.group(2).lower()
    if unit == "%":
        if not 0 < value <= 100:
            raise InvalidArgumentError(f"memory percentage must be in (0, 100], got {memory!r}")
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return int(physical * value / 100)
    size = int(value * _UNITS[unit])
    if size <= 0:
        raise InvalidArgumentError(f"memory must be positive, got {memory!r}")
    return size


def parse_budget(memory: int | str) -> int:
    """Bytes of an estimation's memory budget (`train_arpa`'s, or each task's of
    `fastppl.ray.train`): :func:`parse_memory`'s, refused with :class:`InvalidArgumentError`
    below ``fastppl._core.MIN_MEMORY`` (16 MiB), the least the core's sorts work in.

    >>> parse_budget("16M") == 16 << 20
    True
    >>> parse_budget(10)
    Traceback (most recent call last):
    ...
    fastppl.errors.InvalidArgumentError: memory must be at least 16 MiB, got 10 bytes (10)
    """
    size = parse_memory(memory)
    if size < _core.MIN_MEMORY:
        raise InvalidArgumentError(
            f"memory must be at least {_core.MIN_MEMORY >> 20} MiB, got {size} bytes ({memory!r})"
        )
    return size


def train_arpa(
    corpus: Corpus,
    path: str | os.PathLike[str],
    order: int = 3,
    smoothing: str = "modified_kneser_ney",
    *,
    memory: int | str = "1G",
    temp_dir: str | os.PathLike[str] | None = None,
    prune: Sequence[int] | None = None,
    min_count: int = 1,
    vocab_file: str | os.PathLike[str] | None = None,
    progress: Progress = False,
    **params: Any,
) -> TrainingSummary:
    """Estimates an n-gram model on ``corpus`` within a memory budget and writes it as ARPA.

    The result is the file ``NGramModel.fit(corpus, order, smoothing, **params).to_arpa(path)``
    would write, byte for byte, but the n-gram counts live in sorted runs on disk: the corpus
    (its token ids, 4 bytes per token, and its vocabulary) and the sort buffers share the
    ``memory`` budget, as in lmplz, and each run is sorted and written in the background while
    the next one fills. Use it when a model's counts do not fit in memory
    (``fit`` needs about 60 bytes per n-gram); load the result with ``NGramModel.from_arpa``
    or ``fastppl eval``. Sentences are padded ``<s> ... </s>`` as ARPA models require.

    Args:
        corpus: the training text.
        path: the ARPA file to write (``.gz``, ``.xz``, ``.bz2`` compress it; the name of
            another compression, ``.zst``, ``.lz4``..., is refused). A failed run leaves no file
            behind.
        order: n-gram order N, 2 to ``fastppl.MAX_ORDER``.
        smoothing: an interpolated estimator: ``"modified_kneser_ney"`` (as lmplz;
            ``discount_fallback``), ``"kneser_ney"`` or ``"absolute_discounting"``
            (``discount``), ``"witten_bell"``.
        memory: the memory budget of the estimation, like lmplz's ``-S``: an int, ``"4G"``,
            ``"512M"``, ``"80%"``. It covers the corpus held in memory and the sort buffers (not
            the Python interpreter, nor reading the text, which `Corpus.from_file` does in
            pieces). At least ``fastppl._core.MIN_MEMORY`` (16 MiB), and more than the corpus.
        temp_dir: an existing directory where the sorted runs go (a fresh subdirectory,
            removed afterwards), like lmplz's ``-T``; default: the system's temporary
            directory. It needs room for about three times the counts (24 bytes per 5-gram
            occurrence at most).
        prune: pruning thresholds per order, as in `NGramModel.fit` (lmplz's ``--prune``).
        min_count, vocab_file: vocabulary limits, as in `NGramModel.fit`.
        progress: ``True`` for a progress bar on stderr, or a callable ``(stage, done, total)``;
            see :mod:`fastppl.progress`. Ctrl-C stops the run within a fraction of a second,
            removing its temporary files and leaving ``path`` as it was.
        **params: the estimator's parameters.

    Returns:
        A `TrainingSummary`: the number of n-grams of each order, as the file's header states
        them, and how much went through the disk.

    Raises:
        InvalidArgumentError: bad order, estimator, parameter or memory, a ``prune``
            threshold or ``min_count`` out of range (as in `NGramModel.fit`), a ``temp_dir``
            that is not an existing directory, or a ``path`` in a compression fastppl does not
            write.
        EmptyCorpusError: the corpus has no token.
        OSError: the file or the temporary directory cannot be written (the message names it).
            A ``path`` that cannot be written (a directory, in a directory that does not exist)
            is refused before the n-grams are counted.

    >>> import tempfile, pathlib
    >>> c = Corpus.from_sentences([["a", "b", "a"], ["b", "a"]])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "m.arpa"
    >>> train_arpa(c, out, order=2, smoothing="witten_bell", memory="16M").ngram_counts
    [5, 5]
    """
    directory = tempfile.gettempdir() if temp_dir is None else os.fspath(temp_dir)
    if not os.path.isdir(directory):
        raise InvalidArgumentError(
            f"temp_dir {directory!r} is not an existing directory (create it first)"
        )
    corpus, args = fit_arguments(
        corpus,
        order,
        smoothing,
        True,
        params,
        prune=prune,
        min_count=min_count,
        vocab_file=vocab_file,
    )
    del args["bos_eos"]
    size = parse_budget(memory)
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if size > physical:
        raise InvalidArgumentError(
            f"memory {memory!r} is more than this machine's physical memory "
            f"({physical / 2**30:.1f} GiB): give at most that, e.g. '80%'"
        )
    if args["order"] < 2:
        raise InvalidArgumentError(
            "train_arpa needs order >= 2 (a unigram model is small: use NGramModel.fit)"
        )
    with reporter(progress) as report:
        counts, runs, spilled = _core.train_arpa(
            corpus._inner,
            os.fspath(path),
            smoothing=smoothing,
            memory=size,
            temp_dir=directory,
            progress=report,
            **args,
        )
    return TrainingSummary(counts, runs, spilled)
