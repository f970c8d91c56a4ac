"""Loading KenLM's binary files: ``NGramModel.from_kenlm_binary`` vs the ``kenlm`` module.

    python benches/bench_kenlm_binary.py [--repeats 5]

For each file of ``../shared/arpa/kenlm-binary/`` (``build_binary`` of ``machado.o3.arpa.gz``):
the load time of ``NGramModel.from_kenlm_binary(path)``, of ``kenlm.Model(path)`` (which maps the
file lazily: pages are read when scoring touches them) and of ``kenlm.Model`` with
``load_method=READ`` (the whole file read into memory, as fastppl reads it), timed in turn in this
process, medians of ``--repeats``; then the scoring throughput of each converted model on
``machado.test.txt`` (``evaluate``, one Rust call, ``--passes`` times per timing, the models in
turn in each repeat; tokens = words + one ``</s>`` a sentence), with the model read from the ARPA
file as the baseline, and the
``kenlm`` module's ``score`` over the same sentences (a Python loop, as its API goes), and
``fastppl.kenlm``'s (its stand-in, the same loop). Prints one JSON object.

    python benches/bench_kenlm_binary.py --large DIR --query /path/to/kenlm/bin/query

adds the large files: ``DIR/g5.probing.bin`` and ``DIR/g5.trie.bin`` (``build_binary`` of a
large model, e.g. lmplz's Gutenberg 5-gram) and ``DIR/test1m.txt`` (one sentence a line). For
each file, in turn in each repeat: fastppl's load time (``from_kenlm_binary``: the probing file
mapped and used in place, the trie converted, which ``--skip-trie-load`` leaves out as it takes
minutes), and ``query``'s start-up (``query FILE < /dev/null``, wall time of the process, with
its default ``populate`` mapping and with ``-l lazy``); then one thread's scoring throughput on
``test1m.txt`` (tokens = words + one ``</s>`` a line): fastppl's ``evaluate`` of a
``tokenizer="kenlm"`` corpus (``RAYON_NUM_THREADS=1``, set by this script before anything
starts a thread pool) against ``query -v summary FILE < test1m.txt``, whose scoring time is its
wall time less its start-up's. Medians of ``--repeats``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if "--large" in sys.argv:  # one scoring thread, before rayon's pool starts
    os.environ["RAYON_NUM_THREADS"] = "1"

import kenlm

import fastppl.kenlm
from fastppl import Corpus, NGramModel

ARPA = Path(__file__).resolve().parents[1].parent / "shared" / "arpa"
KINDS = ("trie", "trie-a22", "trie-q8b8", "probing")


def _median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _run_seconds(command: list[str], stdin: Path) -> float:
    """Wall time of one run of ``command`` reading ``stdin`` (its output discarded)."""
    with stdin.open("rb") as f:
        t = time.perf_counter()
        subprocess.run(command, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t


def bench_large(large: Path, query: str, repeats: int, skip_trie_load: bool) -> dict[str, Any]:
    """Load times and one thread's scoring throughput against ``query`` on the large files."""
    text = large / "test1m.txt"
    with text.open(encoding="utf-8") as f:
        tokens = sum(len(line.split()) + 1 for line in f)
    corpus = Corpus.from_file(text, tokenizer="kenlm", sentences="lines")
    report: dict[str, Any] = {"tokens": tokens, "threads": os.environ["RAYON_NUM_THREADS"]}
    for kind in ("probing", "trie"):
        path = large / f"g5.{kind}.bin"
        entry: dict[str, Any] = {"bytes": path.stat().st_size}
        loads: list[float] = []
        populate, lazy = [], []
        for _ in range(repeats):
            if kind == "probing" or not skip_trie_load:
                t = time.perf_counter()
                NGramModel.from_kenlm_binary(path)
                loads.append(time.perf_counter() - t)
            populate.append(_run_seconds([query, str(path)], Path(os.devnull)))
            lazy.append(_run_seconds([query, "-l", "lazy", str(path)], Path(os.devnull)))
        if loads:
            entry["fastppl_load_s"] = statistics.median(loads)
        entry["query_startup_s"] = statistics.median(populate)
        entry["query_lazy_startup_s"] = statistics.median(lazy)
        if kind == "probing" or not skip_trie_load:
            model = NGramModel.from_kenlm_binary(path)
            ours, theirs = [], []
            for _ in range(repeats):
                t = time.perf_counter()
                result = model.evaluate(corpus)
                ours.append(time.perf_counter() - t)
                theirs.append(_run_seconds([query, "-v", "summary", str(path)], text))
            entry["perplexity"] = result.perplexity
            entry["fastppl_tokens_per_s"] = tokens / statistics.median(ours)
            entry["query_tokens_per_s"] = tokens / (
                statistics.median(theirs) - entry["query_startup_s"]
            )
            entry["ratio"] = entry["fastppl_tokens_per_s"] / entry["query_tokens_per_s"]
        report[kind] = entry
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--passes", type=int, default=10, help="scorings of the text per timing")
    parser.add_argument("--large", type=Path, help="folder of g5.{probing,trie}.bin, test1m.txt")
    parser.add_argument("--query", default="query", help="KenLM's query binary (with --large)")
    parser.add_argument("--skip-trie-load", action="store_true", help="(with --large)")
    args = parser.parse_args()
    if args.large:
        report = bench_large(args.large, args.query, args.repeats, args.skip_trie_load)
        print(json.dumps(report, indent=2))
        return
    test = ARPA / "machado.test.txt"
    lines = test.read_text(encoding="utf-8").splitlines()
    corpus = Corpus.from_file(test, tokenizer="whitespace", sentences="lines")
    tokens = sum(len(line.split()) + 1 for line in lines)
    report: dict[str, Any] = {"repeats": args.repeats, "passes": args.passes, "tokens": tokens}
    read_config = kenlm.Config()
    read_config.load_method = kenlm.LoadMethod.READ

    def passes(run) -> None:
        for _ in range(args.passes):
            run()

    report["arpa"] = {
        "load_s": _median_seconds(
            lambda: NGramModel.from_arpa(ARPA / "machado.o3.arpa.gz"), args.repeats
        ),
    }
    # scored in turn in each repeat, so that every model sees the same machine load
    models = {"arpa": NGramModel.from_arpa(ARPA / "machado.o3.arpa.gz")}
    for kind in KINDS:
        path = ARPA / "kenlm-binary" / f"machado.o3.{kind}.bin"
        ours, lazy, read = [], [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            NGramModel.from_kenlm_binary(path)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            kenlm.Model(str(path))
            lazy.append(time.perf_counter() - t)
            t = time.perf_counter()
            kenlm.Model(str(path), read_config)
            read.append(time.perf_counter() - t)
        entry: dict[str, object] = {
            "bytes": path.stat().st_size,
            "kenlm_module_load_s": statistics.median(lazy),
            "kenlm_module_read_load_s": statistics.median(read),
        }
        km = kenlm.Model(str(path))
        seconds = _median_seconds(
            lambda km=km: passes(lambda: sum(km.score(line) for line in lines)), args.repeats
        )
        entry["kenlm_module_tokens_per_s"] = tokens * args.passes / seconds
        # fastppl's stand-in for the module, used the same way: one score() call a sentence
        drop_in = fastppl.kenlm.Model(str(path))
        seconds = _median_seconds(
            lambda m=drop_in: passes(lambda: sum(m.score(line) for line in lines)), args.repeats
        )
        entry["fastppl_kenlm_module_tokens_per_s"] = tokens * args.passes / seconds
        entry["fastppl_load_s"] = statistics.median(ours)
        models[kind] = NGramModel.from_kenlm_binary(path)
        report[kind] = entry
    seconds: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(args.repeats):
        for name, model in models.items():
            t = time.perf_counter()
            passes(lambda model=model: model.evaluate(corpus))
            seconds[name].append(time.perf_counter() - t)
    for name, times in seconds.items():
        key = "tokens_per_s" if name == "arpa" else "fastppl_tokens_per_s"
        report[name][key] = tokens * args.passes / statistics.median(times)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
