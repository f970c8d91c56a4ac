"""Benchmark of fastppl.ray: distributed estimation vs single-machine ``train_arpa`` (``fastppl
train -S``), its scaling from 1 to 2 Ray workers, and scoring throughput with 1 and 2 actors.

    python benches/bench_ray.py                      # the 5 Gutenberg shards (~56 M tokens)
    python benches/bench_ray.py --shards 2 --order 4 # a subset
    python benches/bench_ray.py --json out.json      # also the raw measurements
    python benches/bench_ray.py --skip-train --repeats 5  # scoring only, medians of 5

Every case runs in a fresh subprocess (a fresh Ray cluster of ``num_cpus=W`` for W workers;
each task or actor reserves 1 CPU and runs its Rust code on 1 thread). Estimation times exclude
``ray.init`` (reported apart); the ARPA files of every case are compared byte for byte. The
report gives medians over ``--repeats`` and the ratios against the single-machine baseline
measured in the same run. Use a release build (``maturin develop --release``).

Scoring: an order-3 model of the first shard scores documents of 20 lines of the next shards,
read as ``fastppl.ray.score`` reads them by default (``--score-tokenizer nltk``: raw text,
``word_tokenize``, sentences ended by ``. ! ?``) or as pre-tokenized lines (``whitespace``, the
least work per token, where Ray's own costs weigh most). The documents are written once to a
JSON-lines file in ``--workdir``; each repeat runs
the in-process baseline, then 1 and 2 actors (in alternating order, so that a change in the
machine's load weighs on both arms alike), each in a fresh cluster of ``num_cpus=2``. The
report gives the whole run (what a user waits for: actors started, model mapped, every batch
scored) and the rate after the fixed cost (a one-row dataset's run, measured in the same
cluster just before), with their 2-vs-1 ratios, medians and every repeat's ratio.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUTENBERG = sorted((ROOT.parent / "shared" / "corpora" / "gutenberg").glob("gutenberg-*.txt.xz"))
TEXT = {"tokenizer": "whitespace", "sentences": "lines"}

SINGLE = """
import json, sys, time
from fastppl import Corpus
from fastppl.training import train_arpa
shards, out, order, memory, temp = json.loads(sys.argv[1])
t0 = time.perf_counter()
corpus = Corpus.from_files(shards, tokenizer="whitespace", sentences="lines")
summary = train_arpa(corpus, out, order=order, memory=memory, temp_dir=temp)
print(json.dumps({"seconds": time.perf_counter() - t0, "tokens": corpus.num_tokens}))
"""

DISTRIBUTED = """
import json, sys, time
import ray
import fastppl.ray as fray
shards, out, order, memory, temp, workers, partitions = json.loads(sys.argv[1])
t0 = time.perf_counter()
ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR")
t1 = time.perf_counter()
summary = fray.train(shards, out, order=order, partitions=partitions, memory=memory,
                     work_dir=temp, tokenizer="whitespace", sentences="lines")
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t1, "init_seconds": t1 - t0, "passes": summary.seconds}))
"""

SCORE = """
import json, sys, time
import ray
import fastppl.ray as fray
model, docs_path, actors, batch_size, options = json.loads(sys.argv[1])
with open(docs_path, encoding="utf-8") as f:
    docs = [json.loads(line) for line in f]
ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
def timed(ds):
    t0 = time.perf_counter()
    scored = fray.score(model, ds, concurrency=actors, batch_size=batch_size,
                        **options).materialize()
    seconds = time.perf_counter() - t0  # (the count below is another Ray job: not timed)
    return seconds, int(scored.sum("num_tokens"))
# Ray Data's first job in a session starts its own helper actors: not part of scoring
ray.data.from_items([{"text": "a"}]).materialize()
# the fixed cost apart: actors started, model verified once (by score) and mapped by each, one
# row scored
startup, _ = timed(ray.data.from_items([{"text": docs[0]}]).materialize())
ds = ray.data.from_items([{"text": d} for d in docs]).materialize()
seconds, tokens = timed(ds)
print(json.dumps({"seconds": seconds, "tokens": tokens, "docs": len(docs),
                  "blocks": ds.num_blocks(), "startup_seconds": startup}))
"""

# the same documents scored in this process on one thread: the work one actor has to do
SCORE_IN_PROCESS = """
import json, sys, time
from fastppl import NGramModel
model, docs_path, batch_size, options = json.loads(sys.argv[1])
with open(docs_path, encoding="utf-8") as f:
    docs = [json.loads(line) for line in f]
m = NGramModel.load(model)
t0 = time.perf_counter()
tokens = 0
for i in range(0, len(docs), batch_size):
    tokens += int(m.evaluate_texts(docs[i : i + batch_size], **options).num_tokens)
print(json.dumps({"seconds": time.perf_counter() - t0, "tokens": tokens}))
"""


def write_documents(shards: list[str], lines_per_doc: int, max_lines: int, out: Path) -> int:
    """Writes documents of `lines_per_doc` lines (the first `max_lines` of each shard) to `out`,
    one JSON string a line; returns their number."""
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for shard in shards:
            with lzma.open(shard, "rt", encoding="utf-8") as text:
                lines = list(itertools.islice(text, max_lines))
            for i in range(0, len(lines), lines_per_doc):
                f.write(json.dumps("".join(lines[i : i + lines_per_doc])) + "\n")
                n += 1
    return n


def run(code: str, *args: object, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"case failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shards", type=int, default=len(GUTENBERG), help="Gutenberg shards used")
    ap.add_argument("--order", type=int, default=5)
    ap.add_argument("--memory", default="2G", help="train -S of the single-machine baseline")
    ap.add_argument("--task-memory", default="1G", help="sort buffers of each Ray task")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument(
        "--score-shards", type=int, default=4, help="Gutenberg shards scored (from the second)"
    )
    ap.add_argument("--score-lines", type=int, default=2_000_000, help="lines scored per shard")
    ap.add_argument("--batch-size", type=int, default=2000, help="documents per scoring batch")
    ap.add_argument(
        "--score-tokenizer",
        choices=("nltk", "whitespace"),
        default="nltk",
        help="how the scored documents are read (and the model's text): nltk, fastppl.ray.score's"
        " default (raw text: word_tokenize, sentences ended by . ! ?), or whitespace (text taken"
        " as tokenized already, a sentence per line: the least work per token)",
    )
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "fastppl-ray")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if len(GUTENBERG) < args.shards:
        sys.exit(f"need {args.shards} Gutenberg shards in ../shared/corpora/gutenberg")
    shards = [str(p) for p in GUTENBERG[: args.shards]]
    args.workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict]] = {}

    if not args.skip_train:
        single_out = args.workdir / "single.arpa"
        for _ in range(args.repeats):
            results.setdefault("single", []).append(
                run(SINGLE, shards, str(single_out), args.order, args.memory, str(args.workdir))
            )
        expected = digest(single_out)
        for workers in (1, 2):
            out = args.workdir / f"ray{workers}.arpa"
            for _ in range(args.repeats):
                r = run(
                    DISTRIBUTED,
                    shards,
                    str(out),
                    args.order,
                    args.task_memory,
                    str(args.workdir),
                    workers,
                    args.partitions,
                )
                r["identical"] = digest(out) == expected
                results.setdefault(f"ray-{workers}", []).append(r)
            out.unlink()
        single_out.unlink()

    # scoring: an order-3 model of the first shard, the next shards' lines as documents, both
    # read the same way
    model = args.workdir / "score-model.fppl"
    # (sentences=None: score's default, sentences ended by . ! ? for the NLTK reading)
    options = {
        "tokenizer": args.score_tokenizer,
        "sentences": "lines" if args.score_tokenizer == "whitespace" else None,
    }
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fastppl.cli",
            "train",
            "-q",
            "-o",
            "3",
            "--tokenizer",
            args.score_tokenizer,
            "--sentences",
            options["sentences"] or "terminators",
            GUTENBERG[0],
            str(model),
        ],
        check=True,
    )
    scored = [str(p) for p in GUTENBERG[1 : 1 + args.score_shards]]
    docs = args.workdir / "score-docs.jsonl"
    write_documents(scored, 20, args.score_lines, docs)
    load_before = os.getloadavg()
    for repeat in range(args.repeats):
        results.setdefault("score-in-process", []).append(
            run(
                SCORE_IN_PROCESS,
                str(model),
                str(docs),
                args.batch_size,
                options,
                env={"RAYON_NUM_THREADS": "1"},
            )
        )
        for actors in (1, 2) if repeat % 2 == 0 else (2, 1):
            results.setdefault(f"score-{actors}", []).append(
                run(SCORE, str(model), str(docs), actors, args.batch_size, options)
            )
    model.unlink()
    docs.unlink()

    def med(case: str, key: str = "seconds") -> float:
        return statistics.median(r[key] for r in results[case])

    print(f"order {args.order}, {args.shards} Gutenberg shards, {args.partitions} partitions")
    print(f"  scoring: documents read with tokenizer={args.score_tokenizer!r}")
    print(
        "  load average (1, 5, 15 min) before scoring: "
        + " ".join(f"{x:.1f}" for x in load_before)
        + "; at the end: "
        + " ".join(f"{x:.1f}" for x in os.getloadavg())
    )
    if not args.skip_train:
        base = med("single")
        tokens = results["single"][0]["tokens"]
        print(f"  tokens: {tokens:,}")
        print(f"  single-machine train_arpa -S {args.memory}: {base:.1f} s")
        for w in (1, 2):
            t = med(f"ray-{w}")
            same = all(r["identical"] for r in results[f"ray-{w}"])
            print(
                f"  ray, {w} worker(s): {t:.1f} s ({t / base:.2f}x single; ray.init "
                f"{med(f'ray-{w}', 'init_seconds'):.1f} s apart); byte-identical: {same}"
            )
            passes = results[f"ray-{w}"][0]["passes"]
            print("    passes: " + ", ".join(f"{k} {v:.1f} s" for k, v in passes.items()))
        print(f"  scaling 1 -> 2 workers: {med('ray-1') / med('ray-2'):.2f}x")
    local = statistics.median(r["tokens"] / r["seconds"] for r in results["score-in-process"])
    print(f"  scoring in process, 1 thread: {local / 1e6:.2f} M tokens/s")

    def pairs() -> list[tuple[dict, dict]]:
        """Each repeat's 1-actor and 2-actor runs."""
        return list(zip(results["score-1"], results["score-2"], strict=True))

    def rate(case: str) -> float:
        return statistics.median(r["tokens"] / r["seconds"] for r in results[case])

    def after(r: dict) -> float:
        """A run's tokens/s after the fixed cost (the one-row dataset's time) is taken off."""
        return r["tokens"] / max(r["seconds"] - r["startup_seconds"], 1e-9)

    def steady(case: str) -> float:
        return statistics.median(after(r) for r in results[case])

    for a in (1, 2):
        first = results[f"score-{a}"][0]
        print(
            f"  scoring, {a} actor(s): {rate(f'score-{a}') / 1e6:.2f} M tokens/s "
            f"({med(f'score-{a}'):.1f} s for {first['tokens']:,} tokens in {first['blocks']} "
            f"blocks; a one-row dataset alone takes {med(f'score-{a}', 'startup_seconds'):.1f} s:"
            f" actors started, model mapped; {steady(f'score-{a}') / 1e6:.2f} M tokens/s after"
            " that)"
        )
    whole = [one["seconds"] / two["seconds"] for one, two in pairs()]
    steady_ratios = [after(two) / after(one) for one, two in pairs()]
    print(
        f"  scoring 2 actors vs 1, whole run: {rate('score-2') / rate('score-1'):.2f}x "
        f"(each repeat: {', '.join(f'{x:.2f}' for x in whole)}); after the fixed cost: "
        f"{steady('score-2') / steady('score-1'):.2f}x "
        f"(each repeat: {', '.join(f'{x:.2f}' for x in steady_ratios)}); goal >= 1.6x"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
