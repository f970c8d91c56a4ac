"""fastppl vs KenLM (lmplz, build_binary, query) on the same text and machine.

KenLM is not part of fastppl and is not built by this script: build it yourself from its
public source (its README explains how; ``lmplz``, ``build_binary`` and ``query`` are what is
needed) and pass the directory of its binaries:

    python benches/bench_kenlm.py --kenlm-bin /path/to/kenlm/build/bin [--order 5] [--memory 8G]

Text: the Project Gutenberg shards of ``../shared/corpora/gutenberg`` (~56 M tokens), one
sentence per line, tokens split on whitespace (lmplz's input format; fastppl reads the same file
with ``tokenizer="kenlm"``, KenLM's own splitting, so both count the same tokens). Every
measurement runs in its own process under ``/usr/bin/time -v`` (wall time and peak RSS);
repeated runs report medians. ``--memory`` is both lmplz's ``-S`` and fastppl's
``train_arpa(memory=...)``; ``NGramModel.fit`` (all counts in memory) is timed beside them.

Scoring uses lmplz's model of the estimation step: ``query`` on its probing binary (load time,
measured by a run with no input, subtracted) against ``NGramModel.evaluate`` on the same model,
read from lmplz's ARPA once (``from_arpa``, timed), saved in fastppl's format, then loaded by each
run either into memory (``mmap=False``, which asks for huge pages) or memory-mapped, on one core
(``RAYON_NUM_THREADS=1``) and on all. Input: the first Gutenberg shard.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import CpuTimes, describe

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
GUTENBERG = sorted((SHARED / "corpora" / "gutenberg").glob("gutenberg-*.txt.xz"))

FIT = """
import json, sys, time, fastppl
t = time.perf_counter()
c = fastppl.Corpus.from_file(sys.argv[1], tokenizer="kenlm")
read = time.perf_counter() - t
t = time.perf_counter()
m = fastppl.NGramModel.fit(c, order=int(sys.argv[2]), smoothing="modified_kneser_ney")
fit = time.perf_counter() - t
t = time.perf_counter()
if sys.argv[3] != "-":
    m.to_arpa(sys.argv[3])
write = time.perf_counter() - t
print(json.dumps({"read": read, "fit": fit, "write": write, "ngrams": m.ngram_counts}))
"""

TRAIN = """
import json, sys, time, fastppl
t = time.perf_counter()
c = fastppl.Corpus.from_file(sys.argv[1], tokenizer="kenlm")
read = time.perf_counter() - t
t = time.perf_counter()
s = fastppl.train_arpa(c, sys.argv[3], order=int(sys.argv[2]), memory=sys.argv[4],
                       temp_dir=sys.argv[5])
train = time.perf_counter() - t
print(json.dumps({"read": read, "train": train, "ngrams": s.ngram_counts,
                  "runs": s.sorted_runs, "spilled_bytes": s.bytes_spilled}))
"""

CONVERT = """
import json, os, sys, time, fastppl
t = time.perf_counter()
m = fastppl.NGramModel.from_arpa(sys.argv[1])
load = time.perf_counter() - t
m.save(sys.argv[2])
print(json.dumps({"from_arpa": load, "arpa_bytes": os.path.getsize(sys.argv[1])}))
"""

EVAL = """
import json, sys, time, fastppl
t = time.perf_counter()
m = fastppl.NGramModel.load(sys.argv[1], mmap=sys.argv[3] == "map")
load = time.perf_counter() - t
c = fastppl.Corpus.from_file(sys.argv[2], tokenizer="kenlm")
t = time.perf_counter()
r = m.evaluate(c)
score = time.perf_counter() - t
out = {"load": load, "score": score, "tokens": r.num_tokens, "perplexity": r.perplexity}
print(json.dumps(out))
"""


def timed(cmd: list[str], stdin: Path | None = None, env: dict | None = None) -> dict:
    """Runs `cmd` under /usr/bin/time -v; wall seconds, peak RSS (MB) and its stdout."""
    with open(stdin or os.devnull, "rb") as inp:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdin=inp,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed:\n{proc.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    h, m, s = wall.groups()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    return {"seconds": seconds, "peak_mb": rss / 1024, "stdout": proc.stdout, "stderr": proc.stderr}


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def median_phases(runs: list[dict], timed_keys: tuple[str, ...]) -> dict:
    """The first run's figures, with the median over `runs` of each of `timed_keys` (seconds)."""
    return {**runs[0], **{k: statistics.median(r[k] for r in runs) for k in timed_keys}}


def estimate(args: argparse.Namespace, text: Path) -> dict:
    """lmplz, fastppl's in-memory fit and its budgeted train on `text`: times and peaks."""
    work, py, bin_ = args.workdir, sys.executable, args.kenlm_bin

    def lmplz(order: int, arpa: Path) -> list[str]:
        """lmplz's command line for an order-`order` model of `text` written to `arpa`."""
        return [str(bin_ / "lmplz"), "-o", str(order), "-S", args.memory, "-T", str(work),
                "--text", str(text), "--arpa", str(arpa)]  # fmt: skip

    arpa = {name: work / f"{name}.o{args.order}.arpa" for name in ("kenlm", "fastppl")}
    budget_arpa = work / f"fastppl-budget.o{args.order}.arpa"
    commands = {
        "lmplz": (lmplz(args.order, arpa["kenlm"]), arpa["kenlm"]),
        "fastppl": ([py, "-c", FIT, str(text), str(args.order), str(arpa["fastppl"])],
                    arpa["fastppl"]),
        "fastppl_budget": ([py, "-c", TRAIN, str(text), str(args.order), str(budget_arpa),
                            args.memory, str(work)], budget_arpa),
    }  # fmt: skip
    # The three in turn, each repeat (the machine's speed drifts from hour to hour: runs one
    # after the other would favour whichever came first in a slowing hour); each output is
    # removed before its run, untimed, so that no program pays for freeing the 4.9 GB file the
    # run before wrote (lmplz when it truncates it, fastppl when its rename replaces it); and the
    # page cache is written out (`sync`, untimed) so that none pays for writing back the file of
    # the run before it either (4.9 GB at about 280 MB/s on the Intel host: the first 15-20 s of
    # the next run shared the disk with it).
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, (cmd, out) in commands.items():
            out.unlink(missing_ok=True)
            os.sync()
            runs[name].append(timed(cmd))
    lm, fp, budget = runs["lmplz"], runs["fastppl"], runs["fastppl_budget"]
    phases = [json.loads(r["stdout"]) for r in fp]
    budget_phases = [json.loads(r["stdout"]) for r in budget]
    return {
        "lmplz_seconds": median_of(lm, "seconds"),
        "lmplz_peak_mb": median_of(lm, "peak_mb"),
        "fastppl_seconds": median_of(fp, "seconds"),
        "fastppl_peak_mb": median_of(fp, "peak_mb"),
        "fastppl_phases": median_phases(phases, ("read", "fit", "write")),
        "fastppl_budget_seconds": median_of(budget, "seconds"),
        "fastppl_budget_peak_mb": median_of(budget, "peak_mb"),
        "fastppl_budget_phases": median_phases(budget_phases, ("read", "train")),
        "runs_seconds": {
            "lmplz": [r["seconds"] for r in lm],
            "fastppl": [r["seconds"] for r in fp],
            "fastppl_budget": [r["seconds"] for r in budget],
        },
    }


def score(args: argparse.Namespace, test: Path) -> dict:
    """build_binary + query against from_arpa + evaluate on lmplz's model, scoring `test`."""
    work, py, bin_ = args.workdir, sys.executable, args.kenlm_bin
    # lmplz's model of the estimation: query on its probing binary against fastppl on the same
    # model (read from lmplz's ARPA once, saved in fastppl's format, loaded by each run)
    arpa = work / f"kenlm.o{args.order}.arpa"
    binary = work / f"kenlm.o{args.order}.probing"
    build = timed([str(bin_ / "build_binary"), "probing", str(arpa), str(binary)])
    query = [
        timed([str(bin_ / "query"), "-v", "summary", str(binary)], stdin=test)
        for _ in range(max(args.repeats, 3))
    ]
    empty = [
        timed([str(bin_ / "query"), "-v", "summary", str(binary)], stdin=None) for _ in range(3)
    ]
    fppl = work / f"kenlm.o{args.order}.fppl"
    convert = json.loads(timed([py, "-c", CONVERT, str(arpa), str(fppl)])["stdout"])

    def fastppl_score(mode: str, threads: str | None) -> list[dict]:
        """Three runs of EVAL, the model read (`mode="read"`) or mapped, on 1 or all cores."""
        env = {"RAYON_NUM_THREADS": threads} if threads else None
        cmd = [py, "-c", EVAL, str(fppl), str(test), mode]
        return [json.loads(timed(cmd, env=env)["stdout"]) for _ in range(3)]

    runs = {
        (mode, threads): fastppl_score(mode, threads)
        for mode in ("read", "map")
        for threads in ("1", None)
    }
    kenlm_ppl = float(re.search(r"Perplexity including OOVs:\s+([\d.]+)", query[0]["stdout"])[1])
    tokens = runs["read", None][0]["tokens"]
    query_s = median_of(query, "seconds") - median_of(empty, "seconds")
    return {
        "order": args.order,
        "tokens": tokens,
        "kenlm_perplexity": kenlm_ppl,
        "fastppl_perplexity": runs["read", None][0]["perplexity"],
        "query_seconds_excluding_load": query_s,
        "query_tokens_per_second": tokens / query_s,
        **{
            f"fastppl_{mode}_{'1thread' if threads else 'all'}_tokens_per_second": tokens
            / statistics.median(r["score"] for r in rs)
            for (mode, threads), rs in runs.items()
        },
        "build_binary_seconds": build["seconds"],
        "query_load_seconds": median_of(empty, "seconds"),
        "fastppl_from_arpa_seconds": convert["from_arpa"],
        "fastppl_from_arpa_mb_per_second": convert["arpa_bytes"] / convert["from_arpa"] / 1e6,
        "fastppl_load_read_seconds": statistics.median(r["load"] for r in runs["read", "1"]),
        "fastppl_load_map_seconds": statistics.median(r["load"] for r in runs["map", "1"]),
    }


def report_estimate(e: dict, args: argparse.Namespace, text: Path) -> None:
    """Prints the estimation figures of `estimate` with their goals."""
    print(f"estimation, order {args.order}, {text} :")
    print(f"  lmplz -S {args.memory}: {e['lmplz_seconds']:.1f} s, {e['lmplz_peak_mb']:.0f} MB peak")
    print(
        f"  fastppl: {e['fastppl_seconds']:.1f} s, {e['fastppl_peak_mb']:.0f} MB peak "
        f"(read {e['fastppl_phases']['read']:.1f} s, fit {e['fastppl_phases']['fit']:.1f} s, "
        f"write ARPA {e['fastppl_phases']['write']:.1f} s)"
    )
    print(
        f"  => time {e['fastppl_seconds'] / e['lmplz_seconds']:.2f}x lmplz (goal <= 0.5), "
        f"memory {e['fastppl_peak_mb'] / e['lmplz_peak_mb']:.2f}x (goal <= 3)"
    )
    runs = ", ".join(
        f"{name} {' / '.join(f'{t:.1f}' for t in times)}"
        for name, times in e["runs_seconds"].items()
    )
    print(f"  each run (s; the figures above are medians): {runs}")
    b = e["fastppl_budget_phases"]
    print(
        f"  fastppl train_arpa(memory={args.memory!r}): {e['fastppl_budget_seconds']:.1f} s, "
        f"{e['fastppl_budget_peak_mb']:.0f} MB peak (read {b['read']:.1f} s, count, estimate "
        f"and write ARPA {b['train']:.1f} s; {b['runs']} runs, "
        f"{b['spilled_bytes'] / 2**30:.1f} GiB through {args.workdir})"
    )
    print(
        f"  => time {e['fastppl_budget_seconds'] / e['lmplz_seconds']:.2f}x lmplz "
        "(goal <= 0.5), "
        f"memory {e['fastppl_budget_peak_mb'] / e['lmplz_peak_mb']:.2f}x (goal <= 1)"
    )


def report_score(s: dict, args: argparse.Namespace) -> None:
    """Prints the scoring figures of `score` with their goals."""
    q = s["query_tokens_per_second"]
    print(f"scoring {s['tokens']:,} tokens with lmplz's order-{args.order} model:")
    print(f"  query (probing binary, 1 thread): {q / 1e6:.2f} M tok/s")
    print(f"  perplexity: query {s['kenlm_perplexity']}, fastppl {s['fastppl_perplexity']}")
    for mode in ("read", "map"):
        one, both = (s[f"fastppl_{mode}_{t}_tokens_per_second"] for t in ("1thread", "all"))
        print(
            f"  fastppl (model {'read into memory' if mode == 'read' else 'memory-mapped'}): "
            f"{one / 1e6:.2f} M tok/s on one core ({one / q:.2f}x query, goal >= 2), "
            f"{both / 1e6:.2f} M on all ({both / q:.2f}x)"
        )
    print(
        f"load: build_binary probing {s['build_binary_seconds']:.1f} s, query on the probing "
        f"binary {s['query_load_seconds']:.2f} s (process start included); fastppl from_arpa "
        f"{s['fastppl_from_arpa_seconds']:.1f} s "
        f"({s['fastppl_from_arpa_mb_per_second']:.0f} MB/s), its file loaded: read "
        f"{s['fastppl_load_read_seconds']:.1f} s, mapped {s['fastppl_load_map_seconds']:.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kenlm-bin", type=Path, required=True)
    ap.add_argument("--order", type=int, default=5)
    ap.add_argument("--memory", default="8G", help="lmplz -S, and fastppl train_arpa's memory")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "fastppl-kenlm")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--parts",
        default="estimate,score",
        help="what to run: estimate (lmplz, train -S, fit), score (build_binary, from_arpa, "
        "query vs evaluate; needs lmplz's ARPA of an earlier estimate run in --workdir)",
    )
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    if not parts or parts - {"estimate", "score"}:
        ap.error(f"--parts: a comma-separated subset of estimate,score, not {args.parts!r}")
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    text = work / "gutenberg.txt"
    if not text.exists():
        with open(text, "wb") as out:
            for shard in GUTENBERG:
                with lzma.open(shard) as f:
                    out.write(f.read())
    test = work / "gutenberg-00.txt"  # scoring input: the first shard (~11 M tokens)
    if not test.exists():
        with lzma.open(GUTENBERG[0]) as f:
            test.write_bytes(f.read())
    results: dict = {"uptime": os.getloadavg()}
    start = CpuTimes.now()
    if "estimate" in parts:
        results["estimate"] = estimate(args, text)
    if "score" in parts:
        results["score"] = score(args, test)
    results["machine"] = describe(start)
    print(f"load average at start: {results['uptime']}")
    print(results["machine"])
    if "estimate" in parts:
        report_estimate(results["estimate"], args, text)
    if "score" in parts:
        report_score(results["score"], args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
