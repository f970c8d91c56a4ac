"""Training and scoring on a Ray cluster (extra ``fastppl[ray]``; ``import fastppl`` never
imports Ray).

* :func:`score`: per-document perplexity of a Ray Data dataset; each actor memory-maps the
  binary model by path (processes on a node share its pages), none is pickled or broadcast.
* :func:`train`: an ARPA model of many text files, byte-identical to ``fastppl train`` /
  :func:`fastppl.training.train_arpa` on their concatenation, estimated by Ray tasks that
  exchange sorted record files through a directory every worker can read (see the README,
  "Training and scoring on a Ray cluster"); a stupid-backoff model (binary format) of the
  same counts, equal to ``NGramModel.fit(...).save`` as :func:`canonical_binary` compares them.
* :func:`canonical_binary`: a binary model rewritten in the table layout that depends on its
  n-grams alone, so that two models are equal exactly when those files have the same bytes.

Connect first (``ray.init()`` or ``ray.init(address)``); otherwise Ray starts a local cluster.
"""

from __future__ import annotations

import os
import reprlib
import shutil
import stat
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from fastppl import _core
from fastppl._checks import check_int, check_iterable, check_number, check_oov, same_file
from fastppl.corpus import Corpus, _TextOptions
from fastppl.errors import (
    CorpusFileNotFoundError,
    DistributedTaskError,
    EmptyCorpusError,
    FastpplError,
    FastpplWarning,
    InvalidArgumentError,
    InvalidTypeError,
)
from fastppl.model import ARPA_SMOOTHINGS, NGramModel, fit_arguments, is_binary_name
from fastppl.text import decoder_for, is_url, refuse_unread_compression, url_filesystem
from fastppl.tokenize import punkt_model
from fastppl.training import parse_budget

try:
    import pyarrow as pa
    import ray
except ImportError as err:  # pragma: no cover - exercised without the extra only
    raise ImportError("fastppl.ray needs Ray: pip install 'fastppl[ray]'") from err

__all__ = ["DistributedSummary", "canonical_binary", "score", "train"]

#: Retries of a task whose worker died (Ray's own retry; fastppl's errors are not retried).
MAX_RETRIES = 3
# Batches Ray Data queues at each scoring actor. With its default (2) an actor often finished
# its batches before the driver's scheduling loop sent the next: scoring 259,084 documents in
# 200 blocks with 2 actors (benches/bench_ray.py), each actor waited 1.0-1.5 s between batches,
# 0.55 s with 4. A queued batch only holds a reference to a block already in the object store.
_BATCHES_QUEUED_PER_ACTOR = 4


#: Folders of the job directory that no task reads once a pass is done: removed then, so that
#: the job's disk use peaks lower (a retried task only reads its own pass's inputs).
_DONE_WITH = {
    "vocabulary merge": ("vocab",),
    "adjust": ("counts",),
    "context": ("adjusted",),
    "join": ("terms",),
    "write": ("probs", "weights", "first"),
}


class _CrashOnce(NamedTuple):
    """A test hook (`train`'s private ``_crash_once``): task `index` of `stage` exits its process
    if the file `marker` does not exist yet, after creating it, so that its first attempt dies
    and Ray's retry runs. Passed to the tasks as an argument: nothing a user sets by accident
    (such as an environment variable) can reach it."""

    stage: str
    index: int
    marker: str

    def __call__(self, stage: str, index: int) -> None:
        if (self.stage, self.index) == (stage, index) and not os.path.exists(self.marker):
            with open(self.marker, "w"):
                pass
            os._exit(1)


class DistributedSummary(NamedTuple):
    """What :func:`train` did."""

    ngram_counts: list[int]
    """N-grams per order as the ARPA header states them (the unigrams include ``<s>``)."""
    shards: int
    """Input files, one count task each."""
    partitions: int
    """Hash partitions of the n-grams (one adjust and one join task each), and ranges of first
    words (one context and one write task each)."""
    seconds: dict[str, float]
    """Wall-clock seconds of each pass (``vocabulary``, ``vocabulary merge``, ``count``,
    ``adjust``, ``context``, ``join``, ``write``, ``assemble``, and ``binary`` for a binary
    output; for stupid backoff, ``stupid backoff`` after ``adjust``), from submitting its tasks
    to their last result."""


def _no_crash(stage: str, index: int) -> None:
    """What tasks run in place of a `_CrashOnce` hook: nothing."""


def _read_shard(path: str, text_options: dict[str, Any]) -> Corpus:
    return Corpus.from_file(path, **text_options)


Crash = Callable[[str, int], None]


@ray.remote(max_retries=MAX_RETRIES)
def _vocab_task(
    path: str, job: str, shard: int, text_options: dict[str, Any], crash: Crash
) -> None:
    crash("vocab", shard)
    _core.distributed_shard_vocab(_read_shard(path, text_options)._inner, job, shard)


@ray.remote(max_retries=MAX_RETRIES)
def _merge_vocab_task(job: str, shards: int) -> int:
    return _core.distributed_merge_vocab(job, shards)


@ray.remote(max_retries=MAX_RETRIES)
def _count_task(
    path: str,
    job: str,
    shard: int,
    partitions: int,
    memory: int,
    text_options: dict[str, Any],
    args: dict[str, Any],
    crash: Crash,
) -> None:
    crash("count", shard)
    corpus = _read_shard(path, text_options)
    _core.distributed_count(corpus._inner, job, shard, args["order"], partitions, memory)


@ray.remote(max_retries=MAX_RETRIES)
def _adjust_task(
    job: str,
    partition: int,
    shards: int,
    smoothing: str,
    memory: int,
    args: dict[str, Any],
    crash: Crash,
) -> tuple[list[list[int]], list[int]]:
    crash("adjust", partition)
    coc, counts = _core.distributed_adjust(
        job, partition, shards, smoothing=smoothing, memory=memory, **args
    )
    return [list(c) for c in coc], counts


@ray.remote(max_retries=MAX_RETRIES)
def _interpolate_task(
    stage: str,
    job: str,
    partitions: int,
    index: int,
    smoothing: str,
    totals: tuple[list[list[int]], list[int]],
    memory: int,
    args: dict[str, Any],
    crash: Crash,
) -> None:
    """Range or partition `index` of step 4a, 4b or 4c (`stage`: context, join, write)."""
    crash(stage, index)
    coc, counts = totals
    _core.distributed_interpolate(
        stage,
        job,
        partitions,
        index,
        smoothing=smoothing,
        count_of_counts=coc,
        ngram_counts=counts,
        memory=memory,
        **args,
    )


@ray.remote(max_retries=MAX_RETRIES)
def _assemble_task(
    job: str, partitions: int, ngram_counts: list[int], path: str, crash: Crash
) -> list[int]:
    crash("assemble", 0)
    return _core.distributed_assemble(job, partitions, ngram_counts, path)


@ray.remote(max_retries=MAX_RETRIES)
def _stupid_backoff_task(
    job: str,
    partitions: int,
    ngram_counts: list[int],
    memory: int,
    path: str,
    args: dict[str, Any],
    crash: Crash,
) -> list[int]:
    """Step 4 for stupid backoff: the binary model from the adjust step's raw counts, saved at
    `path` (under a temporary name renamed over it)."""
    crash("stupid backoff", 0)
    return _core.distributed_stupid_backoff(
        job, partitions, ngram_counts, memory, path, smoothing="stupid_backoff", **args
    )


@ray.remote(max_retries=MAX_RETRIES)
def _save_binary_task(arpa: str, path: str) -> None:
    """Reads the ARPA file the write pass made and saves it in fastppl's binary format
    (written under a temporary name and renamed, as every model output)."""
    NGramModel.from_arpa(arpa).save(path)


def _threads(num_cpus: float) -> str:
    """Rust threads for a task or actor that reserves `num_cpus` CPUs (at least one)."""
    return str(max(1, int(num_cpus)))


def _with_threads(options: dict[str, Any]) -> dict[str, Any]:
    """Ray task options that also cap the Rust thread pool of its worker at the CPUs it reserves
    (``num_cpus``), so that tasks side by side do not oversubscribe a node."""
    runtime_env = dict(options.get("runtime_env") or {})
    env_vars = {"RAYON_NUM_THREADS": _threads(options.get("num_cpus", 1))}
    runtime_env["env_vars"] = {**env_vars, **runtime_env.get("env_vars", {})}
    return {**options, "runtime_env": runtime_env}


def _gather(refs: list[Any], stage: str) -> list[Any]:
    """The results of `refs`; a failed task raises its fastppl error as it is, anything else
    as one `DistributedTaskError` naming the stage. On failure the other tasks are waited for,
    so that none writes into the job directory once it is removed. They are not cancelled:
    cancelling a Ray task whose reply is on its way can end the driver itself (Ray 2.60 aborts
    on "Check failed: it != submissible_tasks_.end() Tried to complete task that was not
    pending", a race between cancellation and the task's reply, ray-project/ray#54846; seen in
    this project's CI when every task of a stage failed at once), and the tasks of a stage
    take about as long as each other."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayError as err:
        ray.wait(refs, num_returns=len(refs))
        cause = getattr(err, "cause", None)
        if isinstance(err, ray.exceptions.RayTaskError) and isinstance(
            cause, (FastpplError, OSError)
        ):
            raise cause from None
        raise DistributedTaskError(
            f"a {stage} task failed for good (after up to {MAX_RETRIES} retries if its "
            f"worker died): {err}"
        ) from err


def _check_output(output: str) -> None:
    """Refuses, before a task starts, an output `train` could not write or would wrongly
    replace: a directory, a device, FIFO or socket (the finished model is renamed over the
    output, which would replace ``/dev/null`` itself as root), or a path whose directory does
    not exist (it is not created: a typo would otherwise leave new directories behind).
    `output` is absolute."""
    try:
        mode: int | None = os.stat(output).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise InvalidArgumentError(f"the output {output!r} is a directory: name a file in it")
    if mode is not None and not stat.S_ISREG(mode):
        raise InvalidArgumentError(
            f"the output {output!r} is not a regular file (a device, FIFO or socket): train "
            "renames the finished model over its output, which would replace it; write to a "
            "regular file (fastppl train --ray copies one to '-' or a device)"
        )
    parent = os.path.dirname(output)
    if not os.path.isdir(parent):
        raise InvalidArgumentError(
            f"the output's directory {parent!r} does not exist (create it first)"
        )


#: The protocols of fsspec's local filesystem (``local://`` is its other name for ``file://``).
_LOCAL_PROTOCOLS = ("file://", "local://")


def _local_path(path: str) -> str | None:
    """The local file that the input `path` names (a path, or a ``file://`` or ``local://``
    URL), or None for a URL of another filesystem."""
    if not is_url(path):
        return path
    if path.lower().startswith(_LOCAL_PROTOCOLS):
        return url_filesystem(path)[1]
    return None


def _absolute(path: str) -> str:
    """The input `path` with a local file named absolutely, as the driver's current directory
    resolves it: a relative path, or a relative ``file://`` or ``local://`` URL (as
    ``file:///abs/...``, which fsspec reads as before). A task resolves a relative name against
    its worker's directory, which is another on another node (and on the driver's once the
    driver changed directory after ``ray.init``): the driver's checks would look at one file and
    the tasks read another (or none). A URL of another filesystem is left as it is."""
    if not is_url(path):
        return os.path.abspath(path)
    local = _local_path(path)  # (fsspec names a local file absolutely)
    return path if local is None else f"file://{local}"


def _check_not_an_input(output: str, paths: Sequence[str]) -> None:
    """Refuses an output that is one of the input files: the model renamed over it at the end
    would replace the training text."""
    for i, path in enumerate(paths):
        if same_file(_local_path(path), output):
            raise InvalidArgumentError(
                f"the output {output!r} is the input file inputs[{i}] = {path!r}: refusing to "
                "overwrite it (give another output path)"
            )


def _check_inputs(paths: Sequence[str]) -> None:
    """Refuses, before a task starts, a local input (a path, a ``file://`` or ``local://`` URL)
    that is missing (`CorpusFileNotFoundError`, as `Corpus.from_file` raises), a directory or
    not a regular file (`InvalidArgumentError`), that cannot be opened (the `OSError` of opening
    it, such as `PermissionError`), or that is compressed in a format fastppl does not read
    (`CorpusDecodeError`, `refuse_unread_compression`): each task would fail on it once the job
    had started (a directory with a bare IsADirectoryError), and a FIFO or device would block,
    or give another text to each of the two passes that read every file. The driver sees the
    files as the workers do (a shared mount at the same path, as it sees the job directory and
    the output); a URL of another filesystem (``s3://...``) is read by the workers alone, and
    checked only by them."""
    for i, path in enumerate(paths):
        local = _local_path(path)
        if local is None:
            continue
        try:
            mode = os.stat(local).st_mode
            if stat.S_ISREG(mode):
                with open(local, "rb") as raw:  # (only a regular file: opening a FIFO would block)
                    refuse_unread_compression(path, raw)
        except FileNotFoundError:
            raise CorpusFileNotFoundError(
                f"corpus file not found: inputs[{i}] = {path!r}", path
            ) from None
        except OSError as err:  # PermissionError, NotADirectoryError ... naming the input
            raise OSError(err.errno, f"inputs[{i}] cannot be read ({err.strerror})", path) from None
        if stat.S_ISDIR(mode):
            raise InvalidArgumentError(
                f"inputs[{i}] = {path!r} is a directory: list the text files in it "
                "(fastppl train --ray DIRECTORY reads its files)"
            )
        if not stat.S_ISREG(mode):
            raise InvalidArgumentError(
                f"inputs[{i}] = {path!r} is not a regular file (a device, FIFO or socket): the "
                "vocabulary and count tasks each read every input; copy it to a file"
            )


def train(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    order: int = 3,
    smoothing: str = "modified_kneser_ney",
    *,
    partitions: int | None = None,
    memory: int | str = "1G",
    work_dir: str | os.PathLike[str] | None = None,
    prune: Sequence[int] | None = None,
    tokenizer: str = "nltk",
    sentences: str | None = None,
    lowercase: bool = False,
    skip_line_prefixes: Sequence[str] = (),
    encoding: str = "utf-8",
    errors: str = "strict",
    language: str = "english",
    ray_options: dict[str, Any] | None = None,
    format: str | None = None,
    _crash_once: tuple[str, int, str] | None = None,
    **params: Any,
) -> DistributedSummary:
    """Estimates an n-gram model of many text files with Ray tasks and writes it as ARPA (or in
    fastppl's binary format; stupid backoff only in that).

    The file is the one :func:`fastppl.training.train_arpa` (``fastppl train``) writes for
    ``Corpus.from_files(inputs, ...)``, byte for byte (the same as for the concatenation of the
    files when sentences do not cross file ends, e.g. one per line). The passes:

    1. one task per file lists its words in order of first appearance; one task merges the
       lists into the vocabulary (the ids of ``Corpus.from_files``);
    2. one task per file counts its highest-order n-grams (Rust) and writes them sorted, one file
       per hash partition of their last word;
    3. one task per partition merges its files and derives the adjusted counts (every n-gram
       sharing a suffix is in one partition) and its count-of-counts, which the driver sums;
    4. interpolation and writing, partitioned too (each task derives the discounts from the
       summed count-of-counts): one task per range of first words computes its contexts'
       statistics and weights (``context``); one task per partition joins each order with the
       order below (``join``: an n-gram's suffix ends with the same last word); one task per
       range writes its lines of every ARPA section (``write``); one task puts the header and
       the pieces together (``assemble``);
    5. for a binary output only, one task reads that ARPA file into a model and saves it (that
       task holds the whole model in memory, as loading it will).

    **Stupid backoff** (binary output only: it has no ARPA form) runs passes 1 to 3, which give
    every order's raw counts, then one task merges each order's partitions in prefix order,
    scores each n-gram c(hw)/c(h.) and saves the model, its tables in the canonical layout
    (:func:`canonical_binary`). Its bytes are those of ``canonical_binary`` on the file
    ``fastppl train --smoothing stupid_backoff`` (``NGramModel.fit(...).save``) writes for
    ``Corpus.from_files(inputs, ...)``: a fitted model's own layout depends on the order in
    which its counting threads met colliding n-grams, so two fits can differ in layout too.

    No n-gram passes through the driver or the object store: tasks exchange files in a job
    directory under ``work_dir``, which every worker must be able to read and write (shared
    storage on a cluster), and which is removed on success and on failure. A task whose worker
    dies is retried (``MAX_RETRIES``); the output is written under a temporary name and renamed,
    so a failed job leaves no file.

    Args:
        inputs: the text files, readable by every worker (gzip, xz, bzip2 compressed too; a
            file compressed otherwise, zstd, lz4..., is refused):
            paths on a shared mount, or URLs on any filesystem fsspec knows
            (``s3://bucket/shards/a.txt.xz``; see `fastppl.text.is_url`). Local ones (paths,
            ``file://`` and ``local://`` URLs) are named absolutely by the driver, a relative
            one from its current directory (a worker's may be another), and checked by it
            before a task starts: it must see them where the workers do; other URLs are checked
            only by the tasks that read them.
        output: the model file: ARPA (``.gz``, ``.xz``, ``.bz2`` compress it; the name of another
            compression, ``.zst``, ``.lz4``..., is refused), or fastppl's
            binary format (:meth:`NGramModel.load`) for ``.fppl``/``.fastppl`` or
            ``format="binary"`` (never compressed: a name ending in ``.gz``, ``.zst``... is
            refused, as :meth:`NGramModel.save` refuses it).
        order: n-gram order, 2 to ``fastppl.MAX_ORDER``.
        smoothing: ``"modified_kneser_ney"`` (``discount_fallback``), ``"kneser_ney"``,
            ``"absolute_discounting"`` (``discount``), ``"witten_bell"``, or
            ``"stupid_backoff"`` (``alpha``; binary output only). MLE and additive
            smoothing raise `InvalidArgumentError`: fit them on one machine.
        partitions: hash partitions of the n-grams, and ranges of first words (default: the
            number of inputs).
        memory: sort buffers of each task (``"1G"``, ``"512M"``, bytes; at least 16 MiB), as
            in ``train_arpa``.
        work_dir: an existing directory where the job directory goes (default: the output's
            directory).
        prune: pruning thresholds per order, as in `NGramModel.fit`.
        tokenizer, sentences, lowercase, skip_line_prefixes, encoding, errors, language:
            how each file is read, as in `Corpus.from_file`.
        format: ``"arpa"`` or ``"binary"``; None: by the output's name, as ``fastppl train``.
        ray_options: options for every task (``.options(**ray_options)``), e.g. ``num_cpus``
            (default 1; each task's Rust threads are capped to it), ``resources`` or
            ``runtime_env``. On a cluster this process started (``ray.init()`` without an
            address), which never adds a node, a ``num_cpus``, ``num_gpus``, ``memory`` or
            one of ``resources`` above what its largest node holds is refused before a task
            starts (a task runs on one node). On any other cluster such a request is not
            refused: Ray keeps the tasks pending, since an autoscaler may add a node that
            holds them, and train cannot tell that none will; where none does (nodes started
            by hand) they wait forever, while Ray prints "No available node types can fulfill
            resource request"; a cluster started with ``RAY_enable_autoscaler_v2=1`` and
            ``RAY_enable_infeasible_task_early_exit=true`` in its environment fails them
            instead (`DistributedTaskError` naming the pass).
        _crash_once: a test hook, ``(stage, index, marker)``: see `_CrashOnce`.
        **params: the estimator's parameters.

    Returns:
        A `DistributedSummary`.

    Raises:
        InvalidArgumentError: bad order, estimator, parameter, memory, inputs, text option
            (tokenizer, sentences, encoding, errors, line prefixes) or work_dir, or an output
            that is a directory, a device, FIFO or socket, or in a directory that does not
            exist, or in a compression fastppl does not write (any compression, for the
            binary format), or that is one of the inputs,
            or a local input that is a directory or not a regular file (a device, FIFO or
            socket), or ``ray_options`` asking more than the largest node of a cluster
            started by this process holds; all checked before a task starts.
        InvalidTypeError: ``inputs`` is a single path, not a list of them; ``lowercase`` is
            not a bool; ``partitions`` is not an int; ``ray_options`` is not a mapping.
        PunktDataNotFoundError: no Punkt parameters for ``language`` (``tokenizer="nltk"``).
        CorpusFileNotFoundError: an input does not exist (a local one before a task starts).
        OSError: a local input cannot be opened (``PermissionError`` ...), or the output's
            directory cannot be written, both checked before a task starts.
        CorpusDecodeError: an input is not text in ``encoding``, or is compressed in a format
            fastppl does not read (zstd, lz4...; a local one before a task starts).
        DistributedTaskError: a task failed for good for another reason.

    >>> import pathlib, tempfile, ray
    >>> _ = ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True)
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("a b a\\n"), (d / "b.txt").write_text("b a\\n")
    >>> train([d / "a.txt", d / "b.txt"], d / "m.arpa", order=2, smoothing="witten_bell",
    ...       tokenizer="whitespace", sentences="lines").ngram_counts
    [5, 5]
    """
    # named absolutely once, here: the checks below and the tasks then see the same files
    paths = [_absolute(os.fspath(p)) for p in check_iterable(inputs, "inputs", "paths")]
    if not paths:
        raise InvalidArgumentError("inputs must name at least one text file")
    _check_inputs(paths)
    if ray_options is not None and not isinstance(ray_options, Mapping):
        raise InvalidTypeError(
            f"ray_options must be a mapping of Ray task options (num_cpus=...), got "
            f"{type(ray_options).__name__}"
        )
    _check_nodes_hold(ray_options or {})
    if format not in (None, "arpa", "binary"):
        raise InvalidArgumentError(f"format must be 'arpa', 'binary' or None, got {format!r}")
    binary = format == "binary" or (format is None and is_binary_name(output))
    if smoothing not in (*ARPA_SMOOTHINGS, "stupid_backoff"):
        raise InvalidArgumentError(
            f"distributed estimation: smoothing must be one of "
            f"{', '.join(ARPA_SMOOTHINGS)} or stupid_backoff, got {smoothing!r}"
        )
    if smoothing == "stupid_backoff" and not binary:
        raise InvalidArgumentError(
            f"stupid_backoff models have no ARPA form: write {os.fspath(output)!r} in the binary "
            "format (a .fppl name, or format='binary')"
        )
    _, args = fit_arguments(Corpus(_core.Corpus()), order, smoothing, True, params, prune=prune)
    del args["bos_eos"]
    _core.distributed_check(smoothing=smoothing, **args)
    partitions = len(paths) if partitions is None else check_int("partitions", partitions)
    if partitions < 1:
        raise InvalidArgumentError(f"partitions must be a positive int, got {partitions!r}")
    task_memory = parse_budget(memory)
    # the text options checked here, before a task starts (each task reads its files with them)
    options = _TextOptions.checked(
        tokenizer, sentences, lowercase, skip_line_prefixes, language, "native"
    )
    decoder_for(encoding, errors)
    if options.native_nltk():
        punkt_model(language)  # PunktDataNotFoundError now, not in every task
    if work_dir is not None and not os.path.isdir(work_dir):
        raise InvalidArgumentError(
            f"work_dir {os.fspath(work_dir)!r} is not an existing directory (create it first)"
        )
    text_options = {
        "tokenizer": tokenizer,
        "sentences": sentences,
        "lowercase": lowercase,
        "skip_line_prefixes": options.skip_line_prefixes,
        "encoding": encoding,
        "errors": errors,
        "language": language,
    }
    output = os.path.abspath(os.fspath(output))
    _check_output(output)
    _core.check_output(output, not binary)  # a compression not written; an unwritable folder
    _check_not_an_input(output, paths)
    parent = os.path.dirname(output) if work_dir is None else os.fspath(work_dir)
    job = os.path.join(os.path.abspath(parent), f"fastppl-ray-{uuid.uuid4().hex}")
    # the output's extension picks its compression: keep it at the end of the temporary name;
    # a binary output is first written as ARPA in the job directory (stupid backoff: straight
    # to the output, renamed over it by the save)
    partial = (
        os.path.join(job, "model.arpa")
        if binary
        else os.path.join(
            os.path.dirname(output), f".partial-{uuid.uuid4().hex}-" + os.path.basename(output)
        )
    )
    options = _with_threads({"num_cpus": 1, **(ray_options or {})})
    crash: Crash = _no_crash if _crash_once is None else _CrashOnce(*_crash_once)

    seconds: dict[str, float] = {}

    def run(stage: str, task: Any, *calls: tuple[Any, ...]) -> list[Any]:
        start = time.perf_counter()
        results = _gather([task.options(**options).remote(*call) for call in calls], stage)
        for folder in _DONE_WITH.get(stage, ()):
            shutil.rmtree(os.path.join(job, folder), ignore_errors=True)
        seconds[stage] = time.perf_counter() - start
        return results

    os.makedirs(job)
    try:
        shards = range(len(paths))
        run(
            "vocabulary",
            _vocab_task,
            *[(p, job, i, text_options, crash) for i, p in enumerate(paths)],
        )
        run("vocabulary merge", _merge_vocab_task, (job, len(paths)))
        run(
            "count",
            _count_task,
            *[
                (paths[i], job, i, partitions, task_memory, text_options, args, crash)
                for i in shards
            ],
        )
        summaries = run(
            "adjust",
            _adjust_task,
            *[(job, p, len(paths), smoothing, task_memory, args, crash) for p in range(partitions)],
        )
        coc = np.sum([s[0] for s in summaries], axis=0, dtype=np.uint64).tolist()
        counts = np.sum([s[1] for s in summaries], axis=0, dtype=np.uint64).tolist()
        if smoothing == "stupid_backoff":
            (ngram_counts,) = run(
                "stupid backoff",
                _stupid_backoff_task,
                (job, partitions, counts, task_memory, output, args, crash),
            )
            return DistributedSummary(ngram_counts, len(paths), partitions, seconds)
        for stage in ("context", "join", "write"):
            run(
                stage,
                _interpolate_task,
                *[
                    (stage, job, partitions, i, smoothing, (coc, counts), task_memory, args, crash)
                    for i in range(partitions)
                ],
            )
        (ngram_counts,) = run("assemble", _assemble_task, (job, partitions, counts, partial, crash))
        if binary:  # (save renames its temporary over the output itself)
            run("binary", _save_binary_task, (partial, output))
        else:
            os.replace(partial, output)
    finally:
        shutil.rmtree(job, ignore_errors=True)
        if os.path.exists(partial):
            os.remove(partial)
    return DistributedSummary(ngram_counts, len(paths), partitions, seconds)


def canonical_binary(model_path: str | os.PathLike[str], output: str | os.PathLike[str]) -> None:
    """Writes the binary model ``model_path`` (its checksum verified) to ``output`` with its
    tables in the canonical layout: each order's n-grams inserted in ascending order of their
    word ids into tables sized by their number, as :func:`train` builds stupid-backoff models.

    The layout then depends on the n-grams alone, not on the order in which a fit's threads
    counted them, so two models are the same model (vocabulary, every n-gram's ln probability,
    weight and count, bit for bit) exactly when their canonical files have the same bytes. The
    output scores exactly as the input does; it is written under a temporary name and renamed.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> c = Corpus.from_sentences([["a", "b", "a"], ["b", "a"]])
    >>> NGramModel.fit(c, order=2, smoothing="stupid_backoff").save(d / "m.fppl")
    >>> canonical_binary(d / "m.fppl", d / "c.fppl")
    >>> NGramModel.load(d / "c.fppl").ngram_counts
    [4, 5]
    """
    _core.canonical_binary(os.fspath(model_path), os.fspath(output))


class _FileToken(NamedTuple):
    """What identifies one version of a file: a file renamed over it (as fastppl saves) has
    another inode, and one written in place another size or modification and change times
    (the change time cannot be set back by a program)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, path: str) -> _FileToken:
        st = os.stat(path)
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _verify(path: str) -> _FileToken:
    """Verifies the binary model at `path` (fastppl's error if it is missing or corrupt) and
    returns the token of the file verified."""
    try:
        before: _FileToken | None = _FileToken.of(path)
    except OSError:
        before = None  # the load below says why, with fastppl's error
    NGramModel.load(path)
    if before is None or _FileToken.of(path) != before:
        raise InvalidArgumentError(f"the model file {path!r} changed while it was being verified")
    return before


def _load_verified_once(path: str, verified: _FileToken) -> NGramModel:
    """The binary model at `path`, whose checksum the driver verified when its file had the token
    `verified`: it is mapped without a second verification if the file has that token before
    and after mapping, and verified again otherwise (it changed, or this worker sees another
    file under that path, e.g. on another node)."""
    if _FileToken.of(path) == verified:
        model = NGramModel.load(path, verify=False)
        if _FileToken.of(path) == verified:
            return model
    return NGramModel.load(path)


def _most_cpus(now: float) -> float | None:
    """The most CPUs the cluster can ever have, or None where that cannot be told; `now`: the
    CPUs it has now.

    A cluster that this process started (``ray.init()`` without an address) has those it has
    now: it runs no autoscaler. One whose autoscaler publishes its node groups (autoscaler v2,
    as on KubeRay) has at most theirs, which Ray Data and Ray Train read the same way. Any
    other (an autoscaler v1, or none: nodes started by hand) may or may not add nodes. This is
    Ray's private state, as those libraries read it: a Ray where it moved gives None, and so
    does a config whose node groups declare no CPU (Ray then leaves "CPU" out, or gives 0: the
    config does not tell, and a cluster running this driver has some). Never fewer than the
    cluster has now (nodes outside the node groups, such as a head started by hand)."""
    if _started_here():
        return now
    try:
        from ray._private import state

        most = state.state.get_max_resources_from_cluster_config()
    except Exception:  # (an attribute or call of another Ray version: it cannot be told)
        return None
    declared = (most or {}).get("CPU")
    return max(float(declared), now) if declared else None


def _started_here() -> bool:
    """Whether this process started the Ray cluster it is connected to (``ray.init()`` without
    an address): such a cluster runs no autoscaler, and never has other nodes than those it has
    now. Ray's private state, as Ray Data and Ray Train read it: False where it moved."""
    try:
        from ray._private import worker

        node = worker._global_node  # None for a Ray Client driver (ray://...), or before init
        return node is not None and bool(node.ray_init_cluster)
    except Exception:  # (an attribute of another Ray version: it cannot be told)
        return False


#: The task options of `train` that ask each task for an amount of a node's resource.
_TASK_RESOURCES = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}


def _check_nodes_hold(ray_options: Mapping[str, Any]) -> None:
    """Refuses `ray_options` that ask each task for more of a resource (``num_cpus``,
    ``num_gpus``, ``memory``, one of ``resources``) than the largest node holds, on a cluster
    this process started, which never adds one: Ray would keep the tasks pending forever (a
    task runs on one node). Another cluster may add a node that holds them: not checked."""
    if not _started_here():
        return
    asked = [(f"ray_options[{o!r}]", r, ray_options.get(o)) for o, r in _TASK_RESOURCES.items()]
    custom = ray_options.get("resources")
    if isinstance(custom, Mapping):
        asked += [(f"ray_options['resources'][{r!r}]", r, v) for r, v in custom.items()]
    nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
    for name, resource, amount in asked:
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            continue  # none asked, or a value Ray itself refuses
        largest = max((node.get(resource, 0.0) for node in nodes), default=0.0)
        if amount > largest:
            raise InvalidArgumentError(
                f"{name} = {amount!r} is more than any node of the cluster holds (the largest "
                f"has {largest:.15g} {resource}): a task runs on one node, and this cluster, "
                "started by ray.init() in this process, never adds one, so the tasks would "
                "wait forever"
            )


def _check_room_for_reads(dataset: ray.data.Dataset, actor_cpus: float) -> None:
    """Refuses a dataset still to be read or transformed when the scoring actors would take
    every CPU the cluster can ever have: its tasks would wait for a CPU forever (Ray Data only
    warns). Where they take every CPU it has now but it may add nodes (`_most_cpus` cannot
    tell), it warns instead: an autoscaler adds a node for the waiting tasks, and refusing
    would turn down work that runs (every lazy dataset, on a cluster whose worker nodes scale
    from zero)."""
    from ray.data.dataset import MaterializedDataset

    if isinstance(dataset, MaterializedDataset):
        return
    advice = "materialize it first (dataset.materialize()) or use fewer actors"
    cpus = float(ray.cluster_resources().get("CPU", 0.0))
    most = _most_cpus(cpus)
    if most is not None and actor_cpus >= most:
        raise InvalidArgumentError(
            f"the scoring actors (concurrency * num_cpus = {actor_cpus:g}) would take all "
            f"{most:g} CPUs the cluster can have, and the dataset still has tasks to run "
            f"(reading or transforming it) that need one: it would never finish; {advice}"
        )
    if most is None and actor_cpus >= cpus:
        warnings.warn(
            f"the scoring actors (concurrency * num_cpus = {actor_cpus:g}) take all {cpus:g} "
            "CPUs the cluster has now, and the dataset still has tasks to run (reading or "
            "transforming it) that need one: the job finishes only if the cluster adds a node "
            f"(an autoscaler does; fastppl cannot tell whether this cluster has one); {advice}",
            FastpplWarning,
            stacklevel=3,
        )


class _Scorer:
    """A Ray Data actor: the model mapped once, then each batch of texts read and scored in one
    Rust call with the GIL released (`NGramModel.evaluate_texts`).

    Its Rust threads are capped at `threads` by ``RAYON_NUM_THREADS``, set here, before the
    actor's first Rust call starts the thread pool, rather than by a ``runtime_env``: a runtime
    environment of its own would keep Ray from giving the actor an idle worker of the job and
    start a new process for it through the runtime-environment agent, which made the fixed cost
    of `score` about 0.5-1 s longer (see the README). The cap holds in any process that has
    not run fastppl's threads yet, as an actor's worker has not (a worker that ran tasks using
    them would keep the pool it made)."""

    def __init__(
        self,
        model_path: str,
        column: str,
        oov: str,
        text_options: dict[str, Any],
        names: tuple[str, str, str],
        verified: _FileToken,
        threads: str = "1",
    ) -> None:
        os.environ["RAYON_NUM_THREADS"] = threads
        self.model = _load_verified_once(model_path, verified)
        self.column, self.oov, self.text_options, self.names = column, oov, text_options, names

    def __call__(self, batch: pa.Table) -> pa.Table:
        if self.column not in batch.column_names:
            raise InvalidArgumentError(
                f"the dataset has no column {self.column!r} "
                f"(columns: {', '.join(batch.column_names)})"
            )
        _check_no_clash(batch.column_names, self.names)
        texts = batch.column(self.column).to_pylist()
        try:
            result = self.model.evaluate_texts(texts, self.oov, **self.text_options)
            columns = (
                result.document_perplexities,
                result.document_log_probs,
                result.document_num_tokens,
            )
        except EmptyCorpusError:
            # no document of the batch has a counted token: what evaluate gives each of them
            n = len(texts)
            columns = (np.full(n, np.nan), np.zeros(n), np.zeros(n, dtype=np.int64))
        except InvalidTypeError:  # (searched only now: the batches that succeed pay nothing)
            index = next((i for i, text in enumerate(texts) if not isinstance(text, str)), None)
            if index is None:
                raise
            raise _not_a_text(batch, self.column, index) from None
        for name, values in zip(self.names, columns, strict=True):
            batch = batch.append_column(name, pa.array(values))
        return batch


def _not_a_text(batch: pa.Table, column: str, index: int) -> InvalidTypeError:
    """The error for row `index` of `batch`, whose text `column` holds no str (None, a number).
    Ray Data does not tell an actor where its batch is in the dataset, so the row is named by
    its other columns' values (an id, a path), shortened as `reprlib.repr` does."""
    row = batch.slice(index, 1).to_pylist()[0]
    value = row.pop(column)
    what = (
        "None (a missing value)"
        if value is None
        else f"{reprlib.repr(value)} (of type {type(value).__name__})"
    )
    which = (
        f", in the row {reprlib.repr(row)}"
        if row
        else " (the dataset has no other column to tell which row: add an id column)"
    )
    return InvalidTypeError(
        f"the text column {column!r} holds {what}, not a str{which}: "
        f"drop or fill such rows first, e.g. "
        f"dataset.filter(lambda row: isinstance(row[{column!r}], str))"
    )


def _check_no_clash(existing: Sequence[str], names: Sequence[str]) -> None:
    """Refuses added column `names` that the dataset already has (its `existing` columns):
    Arrow would hold two columns of one name, which Ray Data then fails on with a KeyError
    of its own."""
    clashing = [name for name in names if name in existing]
    if clashing:
        raise InvalidArgumentError(
            f"the dataset already has a column {clashing[0]!r} that score would add: pass "
            f"columns=(...) with three names it does not have (columns: {', '.join(existing)})"
        )


def _check_columns(
    dataset: ray.data.Dataset, text_column: str, columns: Sequence[str]
) -> tuple[str, str, str]:
    """`columns` as a tuple, refused unless three distinct str other than `text_column`; when
    the dataset's schema is known without running it, a missing `text_column` or an added
    column it already has is refused too (otherwise each actor checks its batches)."""
    if (
        isinstance(columns, str)
        or not isinstance(columns, Sequence)
        or not all(isinstance(c, str) for c in columns)
    ):
        raise InvalidTypeError(f"columns must be three str, got {columns!r}")
    if not isinstance(text_column, str):
        raise InvalidTypeError(f"text_column must be a str, got {text_column!r}")
    if text_column in columns:
        raise InvalidArgumentError(
            f"columns {tuple(columns)!r} would replace the text column {text_column!r}"
        )
    schema = dataset.schema(fetch_if_missing=False)
    if schema is not None:
        if text_column not in schema.names:
            raise InvalidArgumentError(
                f"the dataset has no column {text_column!r} (columns: {', '.join(schema.names)})"
            )
        _check_no_clash(schema.names, columns)
    return (columns[0], columns[1], columns[2])


def _check_actors(concurrency: int, num_cpus: float, batch_size: int) -> tuple[int, float, int]:
    """`score`'s actor options, refused with fastppl's errors before Ray is used (Ray raised
    its own ValueError or TypeError for them, such as "('size must be >= 1', 0)"), and given
    back as Python numbers (Ray refuses numpy's: "The type of keyword 'num_cpus' must be ...")."""
    concurrency = check_int("concurrency", concurrency)
    batch_size = check_int("batch_size", batch_size)
    cpus = check_number("num_cpus", num_cpus)
    for name, value, least in (("concurrency", concurrency, 1), ("batch_size", batch_size, 1)):
        if value < least:
            raise InvalidArgumentError(f"{name} must be at least {least}, got {value!r}")
    if not 0 <= cpus < float("inf"):
        raise InvalidArgumentError(f"num_cpus must be a finite number >= 0, got {num_cpus!r}")
    return concurrency, cpus, batch_size


def score(
    model_path: str | os.PathLike[str],
    dataset: ray.data.Dataset,
    *,
    text_column: str = "text",
    oov: str = "unk",
    tokenizer: str = "nltk",
    sentences: str | None = None,
    lowercase: bool = False,
    skip_line_prefixes: Sequence[str] = (),
    language: str = "english",
    concurrency: int = 2,
    num_cpus: float = 1,
    batch_size: int = 1024,
    columns: tuple[str, str, str] = ("perplexity", "log_prob", "num_tokens"),
) -> ray.data.Dataset:
    """Adds each document's perplexity, ln-probability and counted tokens to a Ray dataset.

    Each of ``concurrency`` actors loads the binary model (``NGramModel.save``) from
    ``model_path`` (a path every worker can read; copy it to local disk first if it is on
    network storage): the file is memory-mapped, so actors on a node share its pages, and the
    model never goes through the object store. Its checksum is verified once, by the caller;
    an actor that sees the same file (device, inode, size, modification and change times) maps
    it without reading it all again, and verifies any other file under that path itself. Each
    batch of texts is read and scored in one Rust call with the GIL released
    (`NGramModel.evaluate_texts`); the numbers are those of ``NGramModel.evaluate`` on each
    document (``nan`` perplexity for a document with no counted token, as there). Ray Data
    hands whole blocks to actors: give the dataset at least as many blocks as actors
    (``dataset.repartition(n)``), or some actors wait. A dataset still to be read
    (``read_json`` ...) needs CPUs for its read tasks beside the actors' ``concurrency *
    num_cpus``: where the actors would take every CPU the cluster can ever have (one this
    process started with ``ray.init()``, or one whose autoscaler publishes its largest size,
    as autoscaler v2 does), the reads would wait for one forever, so `score` refuses such a
    dataset with `InvalidArgumentError`; where they take every CPU it has now and it may add
    nodes (any other cluster: fastppl cannot tell whether an autoscaler runs), it warns
    (`FastpplWarning`), and the job finishes once a node is added. Materialize it first
    (``dataset.materialize()``), or leave CPUs free.

    Args:
        model_path: the binary model file.
        dataset: the documents, one per row, with their text in ``text_column`` (e.g. from
            ``ray.data.read_json``, ``read_parquet`` or ``read_text``, whose column is "text").
        oov: out-of-vocabulary policy, as in `NGramModel.evaluate` (``"error"`` fails the job).
        tokenizer, sentences, lowercase, skip_line_prefixes, language: as in
            `Corpus.from_text`.
        concurrency: scoring actors.
        num_cpus: CPUs each actor reserves, and the threads it scores with.
        batch_size: documents per batch.
        columns: names of the columns added: perplexity, log-probability (natural log), tokens.

    Returns:
        The dataset (lazy, as Ray Data is) with the three columns added.

    Raises:
        InvalidArgumentError, InvalidTypeError: a bad text option (tokenizer, sentences,
            lowercase, line prefixes, as `Corpus.from_text` refuses them) or ``oov`` (as
            `NGramModel.evaluate` refuses it), ``concurrency`` or ``batch_size`` not an int
            >= 1, ``num_cpus`` not a number >= 0, checked before Ray is used; ``columns`` not
            three distinct str, or naming the text column; a dataset without the text column,
            or with a column of those names (before Ray is used when its schema is known
            without running it, else when the job runs); a dataset still to be read whose
            actors would take every CPU the cluster can have (see above).
        InvalidTypeError: when the job runs, a row whose text is not a str (None, a number),
            named by its other columns' values (Ray Data does not tell a row's place in the
            dataset to the actor scoring it); Ray raises it wrapped in its ``RayTaskError``.

    >>> import pathlib, tempfile, ray
    >>> from fastppl import NGramModel
    >>> _ = ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.fppl"
    >>> c = Corpus.from_sentences([["a", "b"], ["b", "a"]])
    >>> NGramModel.fit(c, order=2, smoothing="witten_bell").save(path)
    >>> ds = ray.data.from_items([{"text": "a b"}, {"text": "b b a"}])
    >>> rows = score(path, ds, tokenizer="whitespace", concurrency=1).take_all()
    >>> [row["num_tokens"] for row in rows]
    [3, 4]
    """
    if len(columns) != 3 or len(set(columns)) != 3:
        raise InvalidArgumentError(f"columns must be three distinct names, got {columns!r}")
    # the text options checked here, before Ray is used, not by each actor once the job started
    oov = check_oov(oov)
    options = _TextOptions.checked(
        tokenizer, sentences, lowercase, skip_line_prefixes, language, "native"
    )
    concurrency, num_cpus, batch_size = _check_actors(concurrency, num_cpus, batch_size)
    columns = _check_columns(dataset, text_column, columns)
    _check_room_for_reads(dataset, concurrency * num_cpus)
    text_options = {
        "tokenizer": tokenizer,
        "sentences": sentences,
        "lowercase": lowercase,
        "skip_line_prefixes": options.skip_line_prefixes,
        "language": language,
    }
    # verified once, here: a missing or corrupt file fails now, with fastppl's error, not in an
    # actor; actors that see this same file map it without checksumming it again
    path = os.path.abspath(os.fspath(model_path))
    verified = _verify(path)
    return dataset.map_batches(
        _Scorer,
        fn_constructor_args=(
            path,
            text_column,
            oov,
            text_options,
            columns,
            verified,
            _threads(num_cpus),
        ),
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(
            size=concurrency, max_tasks_in_flight_per_actor=_BATCHES_QUEUED_PER_ACTOR
        ),
        num_cpus=num_cpus,
    )
