"""Benchmark report: throughput vs corpus size, fastppl vs its pure-Python reference vs NLTK.

    python benches/report.py            # sizes up to the whole bundled corpus, 3 repeats
    python benches/report.py --quick    # small sizes, one repeat (a minute)
    python benches/report.py --from-json benches/report.json   # redraw from saved measurements

Writes ``report.md``, ``report-throughput.png``, ``report-memory.png`` and ``report.json`` into
``--out`` (default: this folder). Needs matplotlib (``pip install '.[bench]'``) and a release
build of fastppl for meaningful figures.

Text: the bundled Machado de Assis corpus (``fastppl.datasets.machado()``, ``#``/``%`` lines
dropped, lowercased, whitespace tokens, one sentence per line: a paragraph), cut to the first
lines holding each size's number of tokens. Tasks, each timed on its own in a fresh
process (corpus loading excluded from the time, included in the peak memory):

- count: the n-grams of orders 1-3 (fastppl ``_core.count_ngrams``, ``reference.count_ngrams``,
  ``nltk.lm.NgramCounter``);
- estimate: a modified Kneser-Ney trigram model (``NGramModel.fit``, ``ReferenceModel``; KenLM's
  ``lmplz -o 3`` writing ARPA when ``$KENLM_BIN`` names its folder). NLTK's line is its
  ``Laplace`` trigram: its ``KneserNeyInterpolated`` scores a few tokens a second, too slow to
  plot, and its ``fit`` only counts for every estimator (it estimates while scoring);
- score: perplexity of the same text under that model (NLTK: the Laplace model; KenLM:
  ``query`` on the ARPA file, its load included).

Throughput is tokens per second, tokens counting one ``</s>`` per sentence; each point is the
median of the repeats. The slow implementations stop at the sizes given in ``LIMITS``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS = ("count", "estimate", "score")
IMPLS = ("fastppl", "reference", "nltk", "kenlm")
SIZES = (10_000, 30_000, 100_000, 300_000, 600_000)
QUICK_SIZES = (3_000, 10_000, 30_000)
#: The largest size each slow implementation runs at, per task (tokens).
LIMITS = {
    ("nltk", "count"): 300_000,
    ("nltk", "estimate"): 300_000,
    ("nltk", "score"): 100_000,
    ("reference", "score"): 300_000,
}
COLORS = {"fastppl": "C0", "reference": "C1", "nltk": "C2", "kenlm": "C3"}
LABELS = {
    "fastppl": "fastppl",
    "reference": "pure-Python reference",
    "nltk": "NLTK nltk.lm (Laplace)",
    "kenlm": "KenLM (lmplz / query)",
}


# ---- one measurement (inside its own process) -------------------------------------------------
def _sentences(tokens: int) -> list[list[str]]:
    """The first sentences of the bundled corpus holding at least `tokens` tokens with </s>."""
    from fastppl import Corpus, datasets

    corpus = Corpus.from_file(
        datasets.machado(),
        tokenizer="whitespace",
        sentences="lines",
        lowercase=True,
        skip_line_prefixes=datasets.MACHADO_SKIP_LINE_PREFIXES,
    )
    out, n = [], 0
    for sentence in corpus:
        if n >= tokens:
            break
        out.append(sentence)
        n += len(sentence) + 1
    return out


def _kenlm_tool(name: str) -> str:
    return str(Path(os.environ["KENLM_BIN"]) / name)


def _run_kenlm(task: str, sentences: list[list[str]]) -> float:
    """Seconds of lmplz (estimate) or lmplz then query (score, query's time only)."""
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "text.txt"
        text.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
        arpa = Path(tmp) / "model.arpa"

        def lmplz() -> None:
            with text.open("rb") as f, arpa.open("wb") as out:
                subprocess.run(
                    [_kenlm_tool("lmplz"), "-o", "3", "-S", "1G", "-T", tmp],
                    stdin=f,
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                    check=True,
                )

        def query() -> None:
            with text.open("rb") as f:
                subprocess.run(
                    [_kenlm_tool("query"), "-v", "summary", str(arpa)],
                    stdin=f,
                    capture_output=True,
                    check=True,
                )

        t = time.perf_counter()
        lmplz()
        if task == "estimate":
            return time.perf_counter() - t
        t = time.perf_counter()
        query()
        return time.perf_counter() - t


def measure_here(task: str, impl: str, tokens: int) -> dict:
    """Times one task of one implementation on the first `tokens` tokens of the corpus."""
    sentences = _sentences(tokens)
    n = sum(len(s) + 1 for s in sentences)
    if impl == "kenlm":
        seconds = _run_kenlm(task, sentences)
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return {"seconds": seconds, "tokens": n, "peak_rss_mb": child / 1024}
    job = _job(task, impl, sentences)
    t = time.perf_counter()
    job()
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"seconds": seconds, "tokens": n, "peak_rss_mb": peak}


def _job(task: str, impl: str, sentences: list[list[str]]):
    """The timed work (a closure) after the untimed setup (fitting, for scoring)."""
    if impl == "fastppl":
        import fastppl

        corpus = fastppl.Corpus.from_sentences(sentences)
        if task == "count":
            return lambda: fastppl._core.count_ngrams(corpus._inner, 3)
        if task == "estimate":
            return lambda: fastppl.NGramModel.fit(corpus, order=3)
        model = fastppl.NGramModel.fit(corpus, order=3)
        return lambda: model.evaluate(corpus).perplexity
    if impl == "reference":
        from fastppl import reference

        if task == "count":
            return lambda: reference.count_ngrams(sentences, 3)
        if task == "estimate":
            return lambda: reference.ReferenceModel(sentences, 3, "modified_kneser_ney")
        model = reference.ReferenceModel(sentences, 3, "modified_kneser_ney")
        return lambda: model.perplexity(sentences)
    from nltk.lm import Laplace
    from nltk.lm.counter import NgramCounter
    from nltk.lm.preprocessing import padded_everygram_pipeline, padded_everygrams

    if task == "count":
        return lambda: NgramCounter(padded_everygrams(3, s) for s in sentences)

    def fit() -> Laplace:
        grams, vocab = padded_everygram_pipeline(3, sentences)
        model = Laplace(3)
        model.fit(grams, vocab)
        return model

    if task == "estimate":
        return fit
    model = fit()
    trigrams = [g for s in sentences for g in padded_everygrams(3, s) if len(g) == 3]
    return lambda: model.perplexity(trigrams)


# ---- the driver -------------------------------------------------------------------------------
def measure(task: str, impl: str, tokens: int, repeats: int) -> dict:
    """Median of `repeats` runs, each in a fresh process."""
    runs = []
    for _ in range(repeats):
        proc = subprocess.run(
            [sys.executable, __file__, "--case", json.dumps([task, impl, tokens])],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{task} {impl} {tokens}: failed\n{proc.stderr}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    seconds = statistics.median(r["seconds"] for r in runs)
    peak = statistics.median(r["peak_rss_mb"] for r in runs)
    tokens_done = runs[0]["tokens"]
    row = {
        "task": task,
        "impl": impl,
        "tokens": tokens_done,
        "seconds": seconds,
        "tokens_per_second": tokens_done / seconds if seconds > 0 else float("inf"),
        "peak_rss_mb": peak,
        "repeats": repeats,
    }
    print(
        f"  {task:<9} {impl:<10} {tokens_done:>9,} tokens {seconds:9.4f} s "
        f"{row['tokens_per_second'] / 1e6:9.3f} M tok/s {peak:7.0f} MB",
        flush=True,
    )
    return row


def run_all(sizes: tuple[int, ...], repeats: int) -> list[dict]:
    impls = [i for i in IMPLS if i != "kenlm" or os.environ.get("KENLM_BIN")]
    rows = []
    for task in TASKS:
        for impl in impls:
            if impl == "kenlm" and task == "count":
                continue  # lmplz does not count apart from estimating
            for size in sizes:
                if size > LIMITS.get((impl, task), size):
                    break
                rows.append(measure(task, impl, size, 1 if impl != "fastppl" else repeats))
    return rows


def _size_axis(ax, rows: list[dict]) -> None:
    """Log x axis with one labelled tick per measured size (10k, 300k...)."""
    from matplotlib.ticker import NullFormatter

    sizes = sorted({r["tokens"] for r in rows})
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n / 1000:.0f}k" if n < 10**6 else f"{n / 1e6:.1f}M" for n in sizes])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("corpus size (tokens)")


def plot(rows: list[dict], out: Path) -> list[Path]:
    """The throughput figure (one panel per task) and the peak-memory figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = [out / "report-throughput.png", out / "report-memory.png"]
    fig, axes = plt.subplots(1, len(TASKS), figsize=(13, 4.2), sharey=True)
    for ax, task in zip(axes, TASKS, strict=True):
        for impl in IMPLS:
            pts = sorted((r["tokens"], r["tokens_per_second"]) for r in rows
                         if r["task"] == task and r["impl"] == impl)  # fmt: skip
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, "o-", color=COLORS[impl], label=LABELS[impl])
        _size_axis(ax, rows)
        ax.set_yscale("log")
        ax.set_title({"count": "counting (orders 1-3)", "estimate": "estimation (MKN, order 3)",
                      "score": "scoring (order 3)"}[task])  # fmt: skip
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("throughput (tokens / s)")
    axes[-1].legend(loc="best", fontsize=8)
    fig.suptitle("fastppl vs the pure-Python reference vs NLTK (Machado corpus, log axes)")
    fig.tight_layout()
    fig.savefig(paths[0], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for impl in IMPLS:
        pts = sorted((r["tokens"], r["peak_rss_mb"]) for r in rows
                     if r["task"] == "estimate" and r["impl"] == impl)  # fmt: skip
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.plot(xs, ys, "o-", color=COLORS[impl], label=LABELS[impl])
    _size_axis(ax, rows)
    ax.set_yscale("log")
    ax.set_ylabel("peak memory of the process (MB)")
    ax.set_title("peak memory, estimation (MKN, order 3)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(paths[1], dpi=110)
    plt.close(fig)
    return paths


def write_markdown(rows: list[dict], pngs: list[Path], out: Path) -> Path:
    lines = [
        "# Benchmark report",
        "",
        "Written by `python benches/report.py` (see its docstring for the tasks); medians of the",
        "repeats, each run in a fresh process; peak memory is the process's (Python, corpus and",
        "model included).",
        "",
        *(f"![{p.stem}]({p.name})" for p in pngs),
        "",
        "| task | implementation | tokens | seconds | tokens/s | peak MB | vs fastppl |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    fast = {(r["task"], r["tokens"]): r for r in rows if r["impl"] == "fastppl"}
    for r in rows:
        base = fast.get((r["task"], r["tokens"]))
        slower = f"{r['seconds'] / base['seconds']:.1f}x slower" if base and r is not base else ""
        lines.append(
            f"| {r['task']} | {LABELS[r['impl']]} | {r['tokens']:,} | {r['seconds']:.4f} | "
            f"{r['tokens_per_second']:,.0f} | {r['peak_rss_mb']:.0f} | {slower} |"
        )
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeats", type=int, default=3, help="runs per fastppl point")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write the report into")
    parser.add_argument("--from-json", type=Path, help="redraw from a saved report.json")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        task, impl, tokens = json.loads(args.case)
        print(json.dumps(measure_here(task, impl, tokens)))
        return
    if args.from_json:
        rows = json.loads(args.from_json.read_text(encoding="utf-8"))["rows"]
    else:
        sizes = QUICK_SIZES if args.quick else SIZES
        rows = run_all(sizes, 1 if args.quick else args.repeats)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps({"rows": rows}, indent=1), encoding="utf-8")
    pngs = plot(rows, args.out)
    print(f"wrote {write_markdown(rows, pngs, args.out)} and {', '.join(p.name for p in pngs)}")


if __name__ == "__main__":
    main()
