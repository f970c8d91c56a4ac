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
``kenlm`` module's ``score`` over the same sentences (a Python loop, as its API goes). Prints one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import kenlm

from fastppl import Corpus, NGramModel
from fastppl.errors import ModelFormatError

ARPA = Path(__file__).resolve().parents[1].parent / "shared" / "arpa"
KINDS = ("trie", "trie-a22", "trie-q8b8", "probing")


def _median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--passes", type=int, default=10, help="scorings of the text per timing")
    args = parser.parse_args()
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
        ours: list[float] | None = []
        lazy, read = [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            try:
                NGramModel.from_kenlm_binary(path)
            except ModelFormatError:
                ours = None
            if ours is not None:
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
        if ours is None:
            entry["fastppl"] = "refused (probing)"
        else:
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
