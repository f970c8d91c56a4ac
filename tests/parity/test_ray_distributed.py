"""fastppl.ray on a real local Ray cluster (2 CPUs): distributed estimation byte-identical to
single-machine training, retries of a killed worker, clean failures, distributed scoring."""

from __future__ import annotations

import gzip
import itertools
import json
import lzma
import os
import secrets
import stat
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import fastppl
from fastppl import Corpus, NGramModel
from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    InvalidArgumentError,
    InvalidTypeError,
    PunktDataNotFoundError,
)
from fastppl.training import train_arpa

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'fastppl[ray]')")
fray = pytest.importorskip("fastppl.ray")

pytestmark = pytest.mark.ray

TEXT = {"tokenizer": "whitespace", "sentences": "lines"}
SHARDS = 8
PARTITIONS = 4


@pytest.fixture(scope="module")
def cluster():
    # a session another test left behind would make ray.init fail ("called ray.init twice")
    # and would not be the two-CPU cluster these tests are written for
    assert not ray.is_initialized(), "a Ray session is still open from an earlier test"
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 << 20)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> tuple[list[Path], Path]:
    """The first 1,500 lines of the bundled Machado text (about 65,000 tokens), in 8 files of
    uneven sizes, and their concatenation."""
    with lzma.open(fastppl.datasets.machado(), "rt", encoding="utf-8") as f:
        lines = list(itertools.islice(f, 1500))
    lines = [line for line in lines if not line.startswith(("#", "%"))]
    d = tmp_path_factory.mktemp("shards")
    cuts = [0, 10, 200, 210, 600, 900, 901, 1200, len(lines)]
    paths = []
    for i in range(SHARDS):
        path = d / f"part-{i}.txt"
        path.write_text("".join(lines[cuts[i] : cuts[i + 1]]), encoding="utf-8")
        paths.append(path)
    whole = d / "whole.txt"
    whole.write_text("".join(lines), encoding="utf-8")
    return paths, whole


class TaskSubmittedError(Exception):
    """Raised by `no_task` when `train` submits its first task."""


@pytest.fixture
def no_task(monkeypatch):
    """`train`'s first task replaced by one that raises `TaskSubmittedError` when submitted: what
    `train` checks before a task starts is refused without Ray (no cluster is needed)."""

    def submitted(**options):
        raise TaskSubmittedError("train submitted a task")

    monkeypatch.setattr(fray, "_vocab_task", SimpleNamespace(options=submitted))


ESTIMATORS = [
    ("modified_kneser_ney", {"discount_fallback": True}),
    ("kneser_ney", {"discount": 0.7}),
    ("witten_bell", {}),
    ("absolute_discounting", {"discount": 0.5}),
]
ORDERS = [(2, None), (3, None), (4, None), (5, None), (3, [0, 1]), (5, [0, 0, 1, 2])]


@pytest.mark.parametrize(("smoothing", "params"), ESTIMATORS)
@pytest.mark.parametrize(("order", "prune"), ORDERS)
def test_distributed_arpa_is_byte_identical(
    cluster, shards, tmp_path, smoothing, params, order, prune
):
    paths, whole = shards
    expected = tmp_path / "single.arpa"
    train_arpa(
        Corpus.from_file(whole, **TEXT),
        expected,
        order=order,
        smoothing=smoothing,
        prune=prune,
        memory="64M",
        **params,
    )
    out = tmp_path / "ray.arpa"
    summary = fray.train(
        paths,
        out,
        order=order,
        smoothing=smoothing,
        partitions=PARTITIONS,
        memory="16M",
        prune=prune,
        **TEXT,
        **params,
    )
    assert out.read_bytes() == expected.read_bytes()
    assert (summary.shards, summary.partitions) == (SHARDS, PARTITIONS)
    # the header's counts: the unigrams include <s>
    loaded = NGramModel.from_arpa(out).ngram_counts
    assert summary.ngram_counts == [loaded[0] + 1, *loaded[1:]]
    # the job directory is gone, only the two models are left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ray.arpa", "single.arpa"]


def _stupid_backoff(shards, tmp_path, order: int, **params) -> tuple[Path, Path]:
    """The single-machine stupid-backoff model of the shards (``fastppl train --smoothing
    stupid_backoff``: fit, then save) in the canonical layout, and the path of its fit."""
    _, whole = shards
    fitted, expected = tmp_path / "fitted.fppl", tmp_path / "single.fppl"
    corpus = Corpus.from_file(whole, **TEXT)
    NGramModel.fit(corpus, order=order, smoothing="stupid_backoff", **params).save(fitted)
    fray.canonical_binary(fitted, expected)
    return expected, fitted


@pytest.mark.parametrize(("order", "params"), [(2, {}), (3, {"alpha": 0.25}), (4, {}), (5, {})])
def test_distributed_stupid_backoff_is_the_canonical_fit(cluster, shards, tmp_path, order, params):
    paths, _ = shards
    expected, fitted = _stupid_backoff(shards, tmp_path, order, **params)
    out = tmp_path / "ray.fppl"
    summary = fray.train(
        paths,
        out,
        order=order,
        smoothing="stupid_backoff",
        partitions=PARTITIONS,
        memory="16M",
        **TEXT,
        **params,
    )
    assert out.read_bytes() == expected.read_bytes()
    model = NGramModel.load(out)
    assert model.smoothing == "stupid_backoff" and not model.normalized
    # as an ARPA header would count them: every vocabulary word among the unigrams
    assert summary.ngram_counts == [model.ngram_counts[0] + 1, *model.ngram_counts[1:]]
    assert "stupid backoff" in summary.seconds and "context" not in summary.seconds
    # the same scores as the fit itself, which only its layout tells apart
    text = ["a b c", "Se não houver", "que eu não sei"]
    for t in text:
        tokens = t.split()
        assert model.logprobs(tokens).tolist() == NGramModel.load(fitted).logprobs(tokens).tolist()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fitted.fppl", "ray.fppl", "single.fppl"]


# The tests that kill workers run in a driver process of their own, on a cluster of its own
# (`fault_runs`): a cluster that loses its local raylet or GCS ends its driver with exit status
# 1 and nothing on stdout (the reason goes to Ray's log files), and in this process that driver
# would be pytest itself. One driver runs every case in turn; a case's failure is reported with
# the tails of Ray's logs.
FAULT_DRIVER = """
import json, sys, traceback
import ray
import fastppl.ray as fray
cases = json.loads(sys.argv[1])
ray.init(address="local", num_cpus=2, include_dashboard=False,
         object_store_memory=256 << 20, logging_level="ERROR")
print(json.dumps({"logs": ray._private.worker._global_node.get_logs_dir_path()}), flush=True)
for name, kwargs in cases.items():
    try:
        fray.train(**kwargs)
        result = {"error": None}
    except Exception as e:
        result = {"error": type(e).__name__, "message": str(e),
                  "traceback": traceback.format_exc()}
    print(json.dumps({"case": name, **result}), flush=True)
"""

STUPID_BACKOFF_CRASHES = [("count", 2), ("adjust", 3), ("stupid backoff", 0)]
CRASHES = [("count", 1), ("adjust", 1), ("context", 1), ("join", 2), ("write", 3), ("assemble", 0)]


def _log_tails(folder: str | None, lines: int = 15) -> str:
    """The last lines of the raylet's, the GCS's and the drivers' logs in Ray's log `folder`."""
    if folder is None or not Path(folder).is_dir():
        return "(no Ray log folder)"
    tails = []
    for pattern in ("raylet.out", "gcs_server.out", "python-core-driver-*.log"):
        for path in sorted(Path(folder).glob(pattern)):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            tails.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(tails)


@pytest.fixture(scope="module")
def fault_runs(shards, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Every injected-crash case run by `FAULT_DRIVER`: case name -> (its folder, its result)."""
    paths, _ = shards
    root = tmp_path_factory.mktemp("faults")
    common = {"inputs": [str(p) for p in paths], "partitions": PARTITIONS, **TEXT}
    cases: dict[str, dict] = {}
    folders: dict[str, Path] = {}

    def case(name: str, order: int, crash: tuple[str, int], out: str, **kwargs: object) -> None:
        folder = root / name.replace(" ", "-")
        folder.mkdir()
        folders[name] = folder
        cases[name] = {
            **common,
            "output": str(folder / out),
            "order": order,
            "_crash_once": [*crash, str(folder / "crashed")],
            **kwargs,
        }

    for stage, index in STUPID_BACKOFF_CRASHES:
        case(f"sb-{stage}-{index}", 4, (stage, index), "ray.fppl", smoothing="stupid_backoff")
    for stage, index in CRASHES:
        case(f"mkn-{stage}-{index}", 4, (stage, index), "ray.arpa")
    case("past-retries", 3, ("join", 0), "ray.arpa", ray_options={"max_retries": 0})
    proc = subprocess.run(
        [sys.executable, "-c", FAULT_DRIVER, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    logs = reports[0].get("logs") if reports else None
    results = {r["case"]: r for r in reports if "case" in r}
    missing = [name for name in cases if name not in results]
    if missing:
        pytest.fail(
            f"the fault driver (exit status {proc.returncode}) reported no result for "
            f"{', '.join(missing)}\nstderr:\n{proc.stderr[-3000:]}\n{_log_tails(logs)}"
        )
    return {name: (folders[name], results[name]) for name in cases}


def _succeeded(run: tuple[Path, dict]) -> Path:
    """The folder of a fault case that must have succeeded after its injected crash."""
    folder, result = run
    assert result["error"] is None, result.get("traceback")
    assert (folder / "crashed").exists(), "the injected crash did not happen"
    return folder


@pytest.mark.parametrize(("stage", "index"), STUPID_BACKOFF_CRASHES)
def test_a_killed_stupid_backoff_worker_gives_the_same_bytes(
    fault_runs, shards, tmp_path, stage, index
):
    folder = _succeeded(fault_runs[f"sb-{stage}-{index}"])
    expected, _ = _stupid_backoff(shards, tmp_path, 4)
    assert (folder / "ray.fppl").read_bytes() == expected.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["crashed", "ray.fppl"]


def test_canonical_binary_is_a_fixed_point_and_checks_its_input(tmp_path):
    fitted = tmp_path / "m.fppl"
    corpus = Corpus.from_sentences([["a", "b", "c", "a"], ["b", "c"], ["c", "a", "b"]] * 50)
    NGramModel.fit(corpus, order=3, smoothing="kneser_ney").save(fitted)
    once, twice = tmp_path / "once.fppl", tmp_path / "twice.fppl"
    fray.canonical_binary(fitted, once)
    fray.canonical_binary(once, twice)
    assert once.read_bytes() == twice.read_bytes()
    NGramModel.load(once).to_arpa(tmp_path / "once.arpa")
    NGramModel.load(fitted).to_arpa(tmp_path / "fitted.arpa")
    assert (tmp_path / "once.arpa").read_bytes() == (tmp_path / "fitted.arpa").read_bytes()
    corrupt = bytearray(fitted.read_bytes())
    corrupt[-9] ^= 0xFF
    (tmp_path / "corrupt.fppl").write_bytes(bytes(corrupt))
    with pytest.raises(fastppl.errors.ModelFormatError, match=r"corrupt\.fppl"):
        fray.canonical_binary(tmp_path / "corrupt.fppl", tmp_path / "out.fppl")
    assert not (tmp_path / "out.fppl").exists()


def test_one_partition_and_compressed_output(cluster, shards, tmp_path):
    paths, whole = shards
    expected = tmp_path / "single.arpa.gz"
    train_arpa(Corpus.from_file(whole, **TEXT), expected, order=3, memory="64M")
    out = tmp_path / "ray.arpa.gz"
    fray.train(paths, out, order=3, partitions=np.int64(1), **TEXT)  # numpy's ints too
    with gzip.open(out) as a, gzip.open(expected) as b:
        assert a.read() == b.read()


def test_inputs_named_by_url_give_the_same_model(cluster, shards, tmp_path):
    """Inputs on any filesystem fsspec knows (``file://`` here: what every worker can read),
    some compressed, listed as `fastppl train --ray URL-GLOB` lists them."""
    from fastppl.cli import _ray_inputs

    paths, whole = shards
    expected = tmp_path / "single.arpa"
    train_arpa(Corpus.from_file(whole, **TEXT), expected, order=3, memory="64M")
    folder = tmp_path / "urls"
    folder.mkdir()
    for i, path in enumerate(paths):  # shard i compressed when i is odd, names in shard order
        data = path.read_bytes()
        if i % 2:
            (folder / f"{i:02}.txt.gz").write_bytes(gzip.compress(data))
        else:
            (folder / f"{i:02}.txt").write_bytes(data)
    urls = _ray_inputs(f"file://{folder}/*.txt*")
    assert len(urls) == SHARDS and all(u.startswith("file://") for u in urls)
    out = tmp_path / "ray.arpa"
    fray.train(urls, out, order=3, partitions=PARTITIONS, **TEXT)
    assert out.read_bytes() == expected.read_bytes()


@ray.remote
def _worker_directory() -> str:
    """The current directory of a worker of the cluster."""
    return os.getcwd()


def test_relative_inputs_are_named_from_the_drivers_directory(cluster, tmp_path, monkeypatch):
    """Relative inputs (paths, ``file://`` URLs) reached the tasks as they were given: each
    task resolved them from its worker's directory (another node's; here, the one the driver
    had when it started the cluster) while the driver's checks resolved them from its own, so
    the checks passed and the tasks failed with CorpusFileNotFoundError, or read other files."""
    monkeypatch.chdir(tmp_path)
    assert ray.get(_worker_directory.remote()) != str(tmp_path)  # (the workers are elsewhere)
    (tmp_path / "a.txt").write_text("a b a\n")
    (tmp_path / "b.txt").write_text("b a\n")
    expected = tmp_path / "single.arpa"
    corpus = Corpus.from_files([tmp_path / "a.txt", tmp_path / "b.txt"], **TEXT)
    train_arpa(corpus, expected, order=2, smoothing="witten_bell")
    fray.train(["a.txt", "file://b.txt"], "m.arpa", order=2, smoothing="witten_bell", **TEXT)
    assert (tmp_path / "m.arpa").read_bytes() == expected.read_bytes()


@pytest.mark.parametrize(("stage", "index"), CRASHES)
def test_a_killed_worker_is_retried_with_identical_output(
    fault_runs, shards, tmp_path, stage, index
):
    _, whole = shards
    folder = _succeeded(fault_runs[f"mkn-{stage}-{index}"])
    expected = tmp_path / "single.arpa"
    train_arpa(Corpus.from_file(whole, **TEXT), expected, order=4, memory="64M")
    assert (folder / "ray.arpa").read_bytes() == expected.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["crashed", "ray.arpa"]


def test_a_worker_dying_past_its_retries_fails_cleanly(fault_runs):
    folder, result = fault_runs["past-retries"]
    assert result["error"] == "DistributedTaskError", result
    assert "join task" in result["message"]
    assert sorted(p.name for p in folder.iterdir()) == ["crashed"]


# A driver on a cluster of its own, started with Ray's early failure of infeasible tasks (set
# in the environment of the cluster's processes, which this process's cluster lacks).
INFEASIBLE_DRIVER = """
import json, sys
import ray
import fastppl.ray as fray
from ray._private import worker
ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
worker._global_node.ray_init_cluster = False  # as a driver of a cluster it did not start
try:
    fray.train([sys.argv[1]], sys.argv[2], order=2, tokenizer="whitespace", sentences="lines",
               ray_options={"num_cpus": 100})
    print(json.dumps({"error": None}))
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""


def test_tasks_no_node_can_hold_fail_where_ray_fails_infeasible_tasks(tmp_path):
    """ray_options={"num_cpus": 100} is not refused on a cluster the driver did not start (an
    autoscaling cluster may add a node for it, which train cannot tell), so on a fixed one it
    waits; a cluster started with the settings the docstring and the README name fails it, as
    DistributedTaskError."""
    text = tmp_path / "a.txt"
    text.write_text("a b\n")
    flags = {"RAY_enable_autoscaler_v2": "1", "RAY_enable_infeasible_task_early_exit": "true"}
    proc = subprocess.run(
        [sys.executable, "-c", INFEASIBLE_DRIVER, str(text), str(tmp_path / "m.arpa")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **flags},
    )
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert reports, proc.stderr[-3000:]
    assert reports[-1]["error"] == "DistributedTaskError", reports[-1]
    assert "a vocabulary task failed for good" in reports[-1]["message"]
    assert "not schedulable" in reports[-1]["message"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@pytest.mark.parametrize(
    ("ray_options", "message"),
    [
        ({"num_cpus": 100}, r"ray_options\['num_cpus'\] = 100 .*largest has 2 CPU\)"),
        ({"num_gpus": 1}, r"ray_options\['num_gpus'\] = 1 .*largest has 0 GPU\)"),
        ({"resources": {"big": 0.5}}, r"ray_options\['resources'\]\['big'\] = 0.5 .*has 0 big\)"),
        (
            {"memory": 1 << 60},
            rf"ray_options\['memory'\] = {1 << 60} .*largest has \d+ memory\)",
        ),
    ],
)
def test_tasks_no_node_can_hold_are_refused_on_a_cluster_started_here(
    cluster, tmp_path, monkeypatch, no_task, ray_options, message
):
    """This driver's ray.init() cluster never adds a node: such tasks waited forever. A cluster
    the driver did not start may add one (an autoscaler): the request goes to Ray."""
    from ray._private import worker

    text = tmp_path / "a.txt"
    text.write_text("a b\n")
    out = tmp_path / "m.arpa"
    with pytest.raises(InvalidArgumentError, match=f"{message}: a task runs on one node"):
        fray.train([text], out, order=2, ray_options=ray_options, **TEXT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    monkeypatch.setattr(worker._global_node, "ray_init_cluster", False)
    with pytest.raises(TaskSubmittedError):
        fray.train([text], out, order=2, ray_options=ray_options, **TEXT)


def test_bad_input_fails_with_fastppl_error_and_no_file(cluster, shards, tmp_path):
    paths, _ = shards
    out = tmp_path / "ray.arpa"
    with pytest.raises(CorpusFileNotFoundError, match=r"missing\.txt"):
        fray.train([*paths, tmp_path / "missing.txt"], out, order=3, **TEXT)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidArgumentError, match="no ARPA form"):
        fray.train(paths, out, order=3, smoothing="stupid_backoff", **TEXT)
    with pytest.raises(InvalidArgumentError, match="cannot prune"):
        fray.train(paths, tmp_path / "m.fppl", 3, "stupid_backoff", prune=[0, 1], **TEXT)
    with pytest.raises(InvalidArgumentError, match="smoothing must be one of"):
        fray.train(paths, tmp_path / "m.fppl", order=3, smoothing="mle", **TEXT)
    with pytest.raises(InvalidArgumentError, match="order"):
        fray.train(paths, out, order=1, **TEXT)
    with pytest.raises(InvalidArgumentError, match="partitions"):
        fray.train(paths, out, order=3, partitions=0, **TEXT)
    with pytest.raises(InvalidTypeError, match="partitions must be an int, got float"):
        fray.train(paths, out, order=3, partitions=2.0, **TEXT)
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_cannot_be_written_is_refused_before_any_task(cluster, tmp_path):
    """A FIFO (or, as root, /dev/null) was replaced by a regular file holding the model, a
    directory failed after the whole job with the temporary file's name, and a missing
    directory was created with its parents; each is now refused before a task starts."""
    text = tmp_path / "a.txt"
    text.write_text("a b\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "folder").mkdir()
    cases = [
        (fifo, r"'.*fifo' is not a regular file \(a device, FIFO or socket\)"),
        (tmp_path / "folder", r"'.*folder' is a directory: name a file in it"),
        (tmp_path / "no" / "such" / "m.arpa", r"directory '.*no/such' does not exist"),
    ]
    for output, message in cases:
        with pytest.raises(InvalidArgumentError, match=message):
            fray.train([text], output, order=2, **TEXT)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert list((tmp_path / "folder").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "fifo", "folder"]


def test_an_output_in_a_compression_not_written_is_refused_before_ray_is_used(tmp_path):
    """It was written as plain ARPA text, or refused once the whole job had run."""
    text = tmp_path / "a.txt"
    text.write_text("a b\n")
    with pytest.raises(InvalidArgumentError, match=r"m\.arpa\.zst: fastppl cannot write \.zst"):
        fray.train([text], tmp_path / "m.arpa.zst", order=2, **TEXT)
    # a binary model is never compressed: it was written uncompressed under a compressed name
    for name in ("m.gz", "m.fppl.zst"):
        with pytest.raises(InvalidArgumentError, match=r"binary models are not compressed"):
            fray.train([text], tmp_path / name, order=2, format="binary", **TEXT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_an_output_that_is_an_input_is_refused(cluster, tmp_path, monkeypatch):
    """The model was renamed over the training file named as the output, which was lost."""
    monkeypatch.chdir(tmp_path)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("a b\n")
    b.write_text("b a\n")
    for inputs, output, index in [
        ([a, b], b, 1),
        ([f"file://{a}", b], "a.txt", 0),  # a URL of the same file, a relative output
    ]:
        with pytest.raises(
            InvalidArgumentError,
            match=rf"is the input file inputs\[{index}\] = .*: refusing to overwrite it",
        ):
            fray.train(inputs, output, order=2, **TEXT)
    assert (a.read_text(), b.read_text()) == ("a b\n", "b a\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_directory_among_the_inputs_is_refused_before_any_task(cluster, tmp_path):
    """It failed in its task with a bare IsADirectoryError, once the job had started."""
    a = tmp_path / "a.txt"
    a.write_text("a b\n")
    (tmp_path / "sub").mkdir()
    for inputs, index in [([a, tmp_path / "sub"], 1), ([f"file://{tmp_path}", a], 0)]:
        with pytest.raises(InvalidArgumentError, match=rf"inputs\[{index}\] = .* is a directory"):
            fray.train(inputs, tmp_path / "m.arpa", order=2, **TEXT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "sub"]


@pytest.mark.parametrize(
    ("option", "error", "message"),
    [
        ({"tokenizer": "words"}, InvalidArgumentError, "tokenizer must be one of"),
        ({"sentences": "paragraphs"}, InvalidArgumentError, "sentences must be one of"),
        ({"lowercase": "yes"}, InvalidTypeError, "lowercase must be True or False"),
        ({"encoding": "utf-9"}, InvalidArgumentError, "encoding='utf-9' is not a known codec"),
        ({"errors": "backslash"}, InvalidArgumentError, "errors"),
        ({"skip_line_prefixes": ("",)}, InvalidArgumentError, "non-empty"),
        ({"skip_line_prefixes": "#%"}, InvalidArgumentError, "not a single string"),
        # (each task's reading in the core refused it, once the job had started)
        (
            {"skip_line_prefixes": ("#", "\ud83d")},
            InvalidArgumentError,
            r"skip_line_prefixes\[1\] holds a lone surrogate",
        ),
        ({"tokenizer": "nltk", "language": "klingon"}, PunktDataNotFoundError, "klingon"),
        ({"work_dir": "no/such/dir"}, InvalidArgumentError, "is not an existing directory"),
        ({"ray_options": [1]}, InvalidTypeError, "ray_options must be a mapping"),
        # (accepted, while train_arpa refuses it: each sort then took its least, 4,096 records)
        ({"memory": 10}, InvalidArgumentError, r"memory must be at least 16 MiB, got 10 bytes"),
    ],
)
def test_text_options_are_checked_before_any_task(
    tmp_path, monkeypatch, no_task, option, error, message
):
    """A bad text option, memory or work_dir is refused by the driver, before Ray is used, not
    by each task once the job has started."""
    monkeypatch.chdir(tmp_path)  # (a relative work_dir is looked for there)
    text = tmp_path / "a.txt"
    text.write_text("a b\n")
    with pytest.raises(error, match=message):
        fray.train([text], tmp_path / "m.arpa", order=2, **{**TEXT, **option})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_inputs_that_cannot_be_read_are_refused_before_any_task(tmp_path, no_task):
    """A missing or unreadable input was found only by its task, once the job had started, and
    a FIFO was read by the first of the two tasks that read each input; now each is refused by
    the driver, with the error `Corpus.from_file` gives a missing file, naming the input."""
    a = tmp_path / "a.txt"
    a.write_text("a b\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    missing = tmp_path / "missing.txt"
    zstd = tmp_path / "a.jsonl.zst"
    zstd.write_bytes(bytes.fromhex("28b52ffd0458110000780aaefde922"))  # zstd's frame of "x\n"
    cases = [
        ([a, missing], CorpusFileNotFoundError, r"not found: inputs\[1\] = '.*missing\.txt'$"),
        ([f"file://{missing}"], CorpusFileNotFoundError, r"inputs\[0\] = 'file://.*missing"),
        ([a, fifo], InvalidArgumentError, r"inputs\[1\] = '.*fifo' is not a regular file"),
        ([a / "b.txt"], NotADirectoryError, r"inputs\[0\] cannot be read \(Not a directory\)"),
        ([a, zstd], CorpusDecodeError, r"^'.*a\.jsonl\.zst' is compressed with zstd, which"),
    ]
    if os.geteuid() != 0:  # (root reads any file)
        unreadable = tmp_path / "unreadable.txt"
        unreadable.write_text("a b\n")
        unreadable.chmod(0)
        cases.append(([unreadable], PermissionError, r"inputs\[0\] cannot be read"))
    for inputs, error, message in cases:
        with pytest.raises(error, match=message) as raised:
            fray.train(inputs, tmp_path / "m.arpa", order=2, **TEXT)
        if isinstance(raised.value, OSError):  # (named as a builtin OSError names its file)
            assert raised.value.filename == str(inputs[-1])
    # a URL of another filesystem is read, and checked, by its tasks alone
    with pytest.raises(TaskSubmittedError):
        fray.train(["memory://corpus/a.txt"], tmp_path / "m.arpa", order=2, **TEXT)


def test_local_urls_are_local_files(tmp_path, monkeypatch, no_task):
    """fsspec's ``local://`` is its ``file://`` (the same filesystem): such an input was taken
    for a remote one, not named absolutely by the driver nor checked before the tasks."""
    fsspec = pytest.importorskip("fsspec")
    assert fsspec.get_filesystem_class("local") is fsspec.get_filesystem_class("file")
    monkeypatch.chdir(tmp_path)
    assert fray._absolute("local://a.txt") == f"file://{tmp_path / 'a.txt'}"
    missing = tmp_path / "missing.txt"
    # (named as the tasks read it, file://)
    with pytest.raises(CorpusFileNotFoundError, match=r"inputs\[0\] = 'file://.*missing"):
        fray.train([f"local://{missing}"], tmp_path / "m.arpa", order=2, **TEXT)


def test_one_path_is_not_taken_for_a_list_of_paths(tmp_path):
    """A str would be iterated as one file per character (refused before Ray is used)."""
    with pytest.raises(InvalidTypeError, match="inputs must be an iterable of paths, not one str"):
        fray.train(str(tmp_path / "a.txt"), tmp_path / "m.arpa", order=2, **TEXT)


# A cluster held by a process of its own, for the CLI's drivers (`fastppl train --ray ADDRESS`)
# to connect to: they come and go as separate jobs on it, never on the cluster pytest drives.
# Ray (2.5x and later) starts a cluster with token authentication, and a driver given an address
# sends a token only when told to (RAY_AUTH_MODE=token): the holder and the drivers get the same
# token in their environment, as a user's cluster and jobs would, and nothing of this process's.
CLUSTER_HOLDER = """
import sys
import ray
ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
         object_store_memory=256 << 20, logging_level="ERROR")
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()  # held until the test closes this process's stdin
"""


@pytest.fixture(scope="module")
def cli_cluster(tmp_path_factory):
    """The GCS address of a Ray cluster (2 CPUs) held by another process for this module, and
    the environment for the drivers that connect to it."""
    log = tmp_path_factory.mktemp("holder") / "stderr.txt"
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    with (
        open(log, "w") as stderr,
        subprocess.Popen(
            [sys.executable, "-c", CLUSTER_HOLDER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
        ) as holder,
    ):
        address = holder.stdout.readline().strip()
        if not address:
            holder.kill()
            pytest.fail(f"the cluster holder did not start a cluster: {log.read_text()[-3000:]}")
        yield address, env
        holder.stdin.close()
        holder.wait(timeout=120)


def test_cli_train_ray_equals_train_memory(cli_cluster, shards, tmp_path):
    paths, whole = shards
    # no --tokenizer: both read with the command line's default (whitespace)
    common = ["-o", "3", "-q"]
    single, distributed = tmp_path / "single.arpa", tmp_path / "ray.arpa"
    address, env = cli_cluster
    cli = [sys.executable, "-m", "fastppl.cli", "train"]
    subprocess.run([*cli, str(whole), str(single), "-S", "100M", *common], check=True)
    glob = str(paths[0].parent / "part-*.txt")
    subprocess.run(
        [*cli, glob, str(distributed), "--ray", address, "--partitions", "3", *common],
        check=True,
        env=env,
    )
    assert distributed.read_bytes() == single.read_bytes()
    binary = tmp_path / "ray.fppl"
    subprocess.run([*cli, glob, str(binary), "--ray", address, *common], check=True, env=env)
    NGramModel.load(binary).to_arpa(tmp_path / "back.arpa")
    assert (tmp_path / "back.arpa").read_bytes() == single.read_bytes()


def test_cli_train_ray_without_the_token_says_how_to_give_it(cli_cluster, shards, tmp_path):
    """A driver that sends no token to a cluster with token authentication fails with Ray's
    message and what to set (Ray itself says only that it could not connect)."""
    paths, _ = shards
    address, env = cli_cluster
    env = {k: v for k, v in env.items() if not k.startswith("RAY_AUTH")}
    glob = str(paths[0].parent / "part-*.txt")
    out = tmp_path / "ray.arpa"
    cli = [sys.executable, "-m", "fastppl.cli", "train", glob, str(out), "--ray", address, "-q"]
    done = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert f"Failed to connect to Ray cluster at {address}" in done.stderr
    assert "RAY_AUTH_MODE=token" in done.stderr
    assert not out.exists()


def test_cli_train_ray_stupid_backoff_equals_train(cli_cluster, shards, tmp_path):
    paths, whole = shards
    common = ["-o", "4", "--tokenizer", "whitespace", "--smoothing", "stupid_backoff", "-q"]
    single, distributed = tmp_path / "single.fppl", tmp_path / "ray.fppl"
    cli = [sys.executable, "-m", "fastppl.cli", "train"]
    subprocess.run([*cli, str(whole), str(single), *common], check=True)
    address, env = cli_cluster
    glob = str(paths[0].parent / "part-*.txt")
    subprocess.run([*cli, glob, str(distributed), "--ray", address, *common], check=True, env=env)
    fray.canonical_binary(single, tmp_path / "canonical.fppl")
    assert distributed.read_bytes() == (tmp_path / "canonical.fppl").read_bytes()


def test_binary_output_holds_the_same_model(cluster, shards, tmp_path):
    """A .fppl output (or format="binary"; `fastppl train --ray ... m.fppl` too) is the binary
    model of the ARPA file: written back as ARPA, the same bytes as train_arpa's; nothing else
    is left behind."""
    paths, whole = shards
    expected = tmp_path / "single.arpa"
    train_arpa(Corpus.from_file(whole, **TEXT), expected, order=3, memory="64M")
    out = tmp_path / "ray.fppl"
    summary = fray.train(paths, out, order=3, partitions=PARTITIONS, **TEXT)
    assert "binary" in summary.seconds
    NGramModel.load(out).to_arpa(tmp_path / "back.arpa")
    assert (tmp_path / "back.arpa").read_bytes() == expected.read_bytes()
    named = tmp_path / "named.model"
    fray.train(paths, named, order=3, partitions=PARTITIONS, format="binary", **TEXT)
    assert named.read_bytes()[:8] == out.read_bytes()[:8]  # the binary format's magic
    with pytest.raises(InvalidArgumentError, match="format must be"):
        fray.train(paths, tmp_path / "x.arpa", order=3, format="json", **TEXT)
    names = ["back.arpa", "named.model", "ray.fppl", "single.arpa"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names


def test_score_equals_in_process_evaluation(cluster, shards, tmp_path):
    _, whole = shards
    model = NGramModel.fit(Corpus.from_file(whole, **TEXT), order=3)
    path = tmp_path / "model.fppl"
    model.save(path)
    lines = whole.read_text(encoding="utf-8").splitlines()
    # 10,000 documents of 1 to 4 lines, some empty
    rng = np.random.default_rng(0)
    docs, start = [], 0
    for i in range(10_000):
        n = int(rng.integers(0, 5))
        docs.append("\n".join(lines[start % len(lines) : start % len(lines) + n]))
        start += n + i % 7
    ds = ray.data.from_items([{"id": i, "text": t} for i, t in enumerate(docs)])
    rows = fray.score(path, ds, concurrency=2, batch_size=500, **TEXT).take_all()
    rows.sort(key=lambda r: r["id"])
    assert [r["text"] for r in rows] == docs
    expected = model.evaluate(Corpus.from_texts(docs, **TEXT))
    np.testing.assert_array_equal([r["log_prob"] for r in rows], expected.document_log_probs)
    np.testing.assert_array_equal([r["num_tokens"] for r in rows], expected.document_num_tokens)
    np.testing.assert_array_equal([r["perplexity"] for r in rows], expected.document_perplexities)
    # and one document at a time, independently of how the batches were cut
    for i in range(0, 10_000, 997):
        if not docs[i]:
            continue
        one = model.evaluate(Corpus.from_text(docs[i], **TEXT))
        assert rows[i]["log_prob"] == one.log_prob
        assert rows[i]["num_tokens"] == one.num_tokens


def test_score_takes_numpy_numbers_for_its_actor_options(cluster, tmp_path):
    # numpy numbers pass fastppl's checks (as everywhere in its API); Ray's own option checks
    # refuse them ("The type of keyword 'num_cpus' must be ..."), so score hands Ray the
    # Python numbers
    path = tmp_path / "m.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="witten_bell").save(path)
    ds = ray.data.from_items([{"text": "a b"}, {"text": "b a b"}])
    expected = fray.score(path, ds, tokenizer="whitespace", concurrency=1).take_all()
    rows = fray.score(
        path,
        ds,
        tokenizer="whitespace",
        concurrency=np.int64(1),
        num_cpus=np.float32(0.5),
        batch_size=np.int32(1),
    ).take_all()
    assert rows == expected


def test_score_rejects_a_missing_model_or_column(cluster, tmp_path):
    ds = ray.data.from_items([{"body": "a b"}])
    with pytest.raises(fastppl.errors.FastpplError):
        fray.score(tmp_path / "none.fppl", ds)
    path = tmp_path / "m.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="witten_bell").save(path)
    with pytest.raises(Exception, match="no column 'text'"):
        fray.score(path, ds, tokenizer="whitespace", concurrency=1).take_all()


def test_score_refuses_added_columns_the_dataset_has(cluster, tmp_path):
    """A dataset with a column named as one score adds (or a text column among `columns`) got
    a second column of that name, on which Ray Data failed with 'KeyError: Field "perplexity"
    exists 2 times in schema' from its own code; now a clear InvalidArgumentError, before Ray
    is used when the schema is known, else from the actor."""
    path = tmp_path / "m.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="witten_bell").save(path)
    ds = ray.data.from_items([{"text": "a b", "perplexity": 1.0}])
    clash = r"the dataset already has a column 'perplexity' that score would add"
    with pytest.raises(InvalidArgumentError, match=clash):
        fray.score(path, ds, tokenizer="whitespace", concurrency=1)
    with pytest.raises(InvalidArgumentError, match=r"would replace the text column 'text'"):
        fray.score(path, ds, tokenizer="whitespace", columns=("p", "text", "n"))
    with pytest.raises(InvalidTypeError, match=r"columns must be three str, got \('p', 'l', 3\)"):
        fray.score(path, ds, tokenizer="whitespace", columns=("p", "l", 3))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"the dataset has no column 'body'"):
        fray.score(path, ds, tokenizer="whitespace", text_column="body")
    docs = tmp_path / "docs.jsonl"  # read when the job runs: the actor refuses the batch
    docs.write_text('{"text": "a b", "log_prob": 0.5}\n')
    lazy = fray.score(path, ray.data.read_json(str(docs)), tokenizer="whitespace", concurrency=1)
    with pytest.raises(Exception, match=clash.replace("perplexity", "log_prob")):
        lazy.take_all()
    rows = fray.score(path, ds, tokenizer="whitespace", concurrency=1, columns=("p", "l", "n"))
    rows = rows.take_all()
    assert [(r["perplexity"], r["n"]) for r in rows] == [(1.0, 3)]


def test_score_names_the_row_of_a_text_that_is_not_a_str(cluster, tmp_path):
    """A None (or a number) in the text column was reported as "texts[1] must be a str, got
    NoneType", its index in the batch of the actor that met it, which names no row of the
    dataset (Ray Data does not tell an actor where its batch is); now the column, the value and
    the row's other columns, which the user can look for."""
    path = tmp_path / "m.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="witten_bell").save(path)
    cases = [
        (
            [{"id": 1, "text": "a b"}, {"id": 7, "text": None}],
            "text",
            r"the text column 'text' holds None \(a missing value\), not a str, in the row "
            r"\{'id': 7\}: drop or fill such rows first",
        ),
        (
            [{"body": 5}],
            "body",
            r"the text column 'body' holds 5 \(of type int\), not a str \(the dataset has no "
            r"other column to tell which row: add an id column\)",
        ),
    ]
    for items, column, message in cases:
        scored = fray.score(
            path,
            ray.data.from_items(items),
            text_column=column,
            tokenizer="whitespace",
            concurrency=1,
        )
        with pytest.raises(ray.exceptions.RayTaskError, match=message):
            scored.take_all()


@pytest.mark.parametrize(
    ("option", "error", "message"),
    [
        ({"tokenizer": "words"}, InvalidArgumentError, "tokenizer must be one of"),
        ({"lowercase": "yes"}, InvalidTypeError, "lowercase must be True or False"),
        ({"skip_line_prefixes": ("",)}, InvalidArgumentError, r"skip_line_prefixes\[0\]: every"),
        ({"skip_line_prefixes": "#%"}, InvalidArgumentError, "not a single string"),
        (
            {"skip_line_prefixes": ("#", "\ud83d")},
            InvalidArgumentError,
            r"skip_line_prefixes\[1\] holds a lone surrogate",
        ),
        ({"oov": "ignore"}, InvalidArgumentError, "oov must be 'unk', 'skip' or 'error'"),
        ({"oov": None}, InvalidTypeError, "oov must be 'unk', 'skip' or 'error', got None"),
        # (Ray's own ValueError or TypeError, e.g. "('size must be >= 1', 0)")
        ({"concurrency": 0}, InvalidArgumentError, "concurrency must be at least 1, got 0"),
        ({"concurrency": 1.5}, InvalidTypeError, "concurrency must be an int, got float"),
        ({"batch_size": 0}, InvalidArgumentError, "batch_size must be at least 1, got 0"),
        ({"batch_size": "10"}, InvalidTypeError, "batch_size must be an int, got str"),
        ({"num_cpus": -1}, InvalidArgumentError, "num_cpus must be a finite number >= 0, got -1"),
        ({"num_cpus": "1"}, InvalidTypeError, "num_cpus must be a number, got str"),
    ],
)
def test_score_checks_text_options_before_ray_is_used(tmp_path, option, error, message):
    """Refused by the driver, before the dataset is looked at (the dataset here is none), not
    by each actor once the job has started."""
    with pytest.raises(error, match=message):
        fray.score(tmp_path / "m.fppl", None, **option)  # type: ignore[arg-type]


def _lazy_documents(tmp_path: Path) -> tuple[Path, ray.data.Dataset]:
    """A binary model, and a dataset of two documents still to be read (`read_json`)."""
    path = tmp_path / "m.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="witten_bell").save(path)
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"text": "a b"}\n{"text": "b a b"}\n')
    return path, ray.data.read_json(str(docs))


def test_score_refuses_a_lazy_dataset_when_actors_take_every_cpu(cluster, tmp_path):
    # the read tasks of a lazy dataset need a CPU beside the actors: with both CPUs taken by
    # actors they would wait forever (the job hung before this check)
    path, lazy = _lazy_documents(tmp_path)
    with pytest.raises(
        fastppl.errors.InvalidArgumentError, match=r"all 2 CPUs the cluster can have.*materialize"
    ):
        fray.score(path, lazy, tokenizer="whitespace", concurrency=2)
    # one actor leaves a CPU for the reads; a materialized dataset needs none
    rows = fray.score(path, lazy, tokenizer="whitespace", concurrency=1).take_all()
    assert sorted(r["num_tokens"] for r in rows) == [3, 4]
    rows = fray.score(path, lazy.materialize(), tokenizer="whitespace", concurrency=2).take_all()
    assert sorted(r["num_tokens"] for r in rows) == [3, 4]


def test_score_only_warns_of_a_lazy_dataset_on_a_cluster_that_may_grow(
    cluster, tmp_path, monkeypatch
):
    """The check counted the CPUs the cluster has now: on an autoscaling cluster it refused a
    lazy dataset whose reads get a node the autoscaler adds (every one, where worker nodes
    scale from zero). It refuses now where the cluster can never have more CPUs than the
    actors take, and warns where it cannot tell. (Nothing runs: this cluster does not grow.)"""
    from ray._private import state, worker

    path, lazy = _lazy_documents(tmp_path)
    # a driver that connected to a cluster it did not start (an autoscaler v1, or none)
    monkeypatch.setattr(worker._global_node, "ray_init_cluster", False)
    with pytest.warns(fastppl.FastpplWarning, match=r"all 2 CPUs the cluster has now.*adds a"):
        fray.score(path, lazy, tokenizer="whitespace", concurrency=2)
    # an autoscaler v2 whose node groups hold 8 CPUs at most: room for the reads, no warning
    monkeypatch.setattr(state.state, "get_max_resources_from_cluster_config", lambda: {"CPU": 8})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fray.score(path, lazy, tokenizer="whitespace", concurrency=2)
    assert not [w for w in caught if issubclass(w.category, fastppl.FastpplWarning)]
    # ... 2 CPUs at most: never room for them
    monkeypatch.setattr(state.state, "get_max_resources_from_cluster_config", lambda: {"CPU": 2})
    with pytest.raises(fastppl.errors.InvalidArgumentError, match="all 2 CPUs the cluster can"):
        fray.score(path, lazy, tokenizer="whitespace", concurrency=2)
    # node groups holding 1 CPU at most, while the cluster has 2 now (a node outside them):
    # the 2 count, not 1 (one actor leaves room for the reads: it runs)
    monkeypatch.setattr(state.state, "get_max_resources_from_cluster_config", lambda: {"CPU": 1})
    rows = fray.score(path, lazy, tokenizer="whitespace", concurrency=1).take_all()
    assert sorted(r["num_tokens"] for r in rows) == [3, 4]
    # node groups that declare no CPU (Ray leaves the key out, or gives 0): it cannot be told,
    # as for an autoscaler v1 (this was read as 0 CPUs, and every lazy dataset was refused)
    for declared in ({"GPU": 4}, {"CPU": 0, "GPU": 4}):
        monkeypatch.setattr(
            state.state, "get_max_resources_from_cluster_config", lambda d=declared: d
        )
        with pytest.warns(fastppl.FastpplWarning, match=r"all 2 CPUs the cluster has now"):
            fray.score(path, lazy, tokenizer="whitespace", concurrency=2)


def test_doctests(cluster):
    import doctest

    result = doctest.testmod(fray, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_import_fastppl_does_not_import_ray():
    code = "import sys, fastppl, fastppl.cli; assert 'ray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc smaps")
def test_scoring_actors_share_the_model_mapping(cluster, shards, tmp_path):
    import pyarrow as pa

    _, whole = shards
    path = tmp_path / "model.fppl"
    NGramModel.fit(Corpus.from_file(whole, **TEXT), order=3).save(path)

    @ray.remote(num_cpus=1)
    class Probe:
        def __init__(self) -> None:
            # a token of no file: each actor verifies the model itself, which reads every page
            self.scorer = fray._Scorer(
                str(path),
                "text",
                "unk",
                TEXT,
                ("perplexity", "log_prob", "num_tokens"),
                fray._FileToken(0, 0, 0, 0, 0),
            )

        def score(self) -> None:
            self.scorer(pa.table({"text": ["a b c", "the end"]}))

        def mapped(self) -> dict[str, int]:
            """Rss and Shared_Clean (KiB) of this actor's mappings of the model file."""
            totals = {"Rss": 0, "Shared_Clean": 0}
            inside = False
            with open("/proc/self/smaps", encoding="utf-8") as f:
                for line in f:
                    fields = line.split()
                    if "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
                        inside = len(fields) >= 6 and fields[-1] == str(path)
                    elif inside and fields[0].rstrip(":") in totals:
                        totals[fields[0].rstrip(":")] += int(fields[1])
            return totals

    actors = [Probe.remote(), Probe.remote()]
    # both have mapped the model and scored with it before either looks
    ray.get([a.score.remote() for a in actors])
    results = ray.get([a.mapped.remote() for a in actors])
    size_kib = path.stat().st_size // 1024
    for r in results:
        # loading verified the checksum, so every page is resident, and shared by both actors
        assert r["Rss"] >= size_kib // 2, r
        assert r["Shared_Clean"] >= size_kib // 2, r


def test_actors_trust_only_the_file_the_driver_verified(tmp_path):
    """`score` verifies the model once; an actor maps it unverified only if it is the same file
    (device, inode, size, times), and verifies it otherwise: a file corrupted in place since is
    caught there, with fastppl's error."""
    path = tmp_path / "m.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b", "c"]] * 9), 3, "witten_bell").save(path)
    verified = fray._FileToken.of(str(path))
    assert fray._load_verified_once(str(path), verified).order == 3
    data = bytearray(path.read_bytes())
    data[-9] ^= 0xFF
    with open(path, "r+b") as f:  # in place: same inode and size
        f.write(bytes(data))
    # a write a second later (a clock tick apart is enough; made certain here)
    os.utime(path, ns=(verified.mtime_ns + 10**9, verified.mtime_ns + 10**9))
    changed = fray._FileToken.of(str(path))
    assert (changed.inode, changed.size) == (verified.inode, verified.size)
    assert changed != verified
    with pytest.raises(fastppl.errors.ModelFormatError):
        fray._load_verified_once(str(path), verified)
