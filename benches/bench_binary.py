"""Load time and file size of fastppl's binary model format against ARPA text.

Models: KenLM's order-3 Machado model (``../shared/arpa/machado.o3.arpa.gz``, read with
``from_arpa``) and an order-3 modified Kneser-Ney model fitted on the Gutenberg shards
(``../shared/corpora/gutenberg``, ~56 M whitespace tokens, one sentence per line). For each: the
sizes of the ``.arpa``, ``.arpa.gz`` and binary files, and the median wall time of loading each
(``from_arpa`` for ARPA; ``load(verify=True)`` and ``load(verify=False)`` for the binary file),
with the files in the page cache (warm: each is read once before timing). When the ``kenlm``
module is installed, its ARPA load time (``kenlm.Model``) is given too for reference. Also:
scoring time of the held-out Machado text with the model as built and as memory-mapped.

    python benches/bench_binary.py                 # both models
    python benches/bench_binary.py --quick         # the KenLM model only
    python benches/bench_binary.py --json out.json

Use a release build (``maturin develop --release`` or ``pip install .``).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import lzma
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastppl
from fastppl import Corpus, NGramModel

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
ARPA = SHARED / "arpa"
GUTENBERG = sorted((SHARED / "corpora" / "gutenberg").glob("gutenberg-*.txt.xz"))


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs (its result is dropped each time)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        del out
    return statistics.median(times)


def warm(path: Path) -> None:
    """Reads a file once so that it is in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def gutenberg_corpus() -> Corpus:
    inner = fastppl._core.Corpus()
    for path in GUTENBERG:
        with lzma.open(path, "rt", encoding="utf-8") as f:
            inner.add_whitespace_text(f.read(), "lines")
        inner.end_document()
    return Corpus(inner)


def heldout() -> Corpus:
    lines = (ARPA / "machado.test.txt").read_text(encoding="utf-8").splitlines()
    return Corpus.from_sentences([s.split() for s in lines if s.split()])


def measure(
    name: str, model: NGramModel, work: Path, arpa_gz: Path | None, repeats: int, arpa_repeats: int
) -> dict[str, Any]:
    """Writes the model's files (unless ``arpa_gz`` is given) and times loading each."""
    binary = work / f"{name}.fppl"
    arpa = work / f"{name}.arpa"
    t = time.perf_counter()
    model.save(binary)
    save_s = time.perf_counter() - t
    if arpa_gz is None:
        arpa_gz = work / f"{name}.arpa.gz"
        model.to_arpa(arpa)
        with open(arpa, "rb") as src, gzip.open(arpa_gz, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 24)
    else:
        with gzip.open(arpa_gz, "rb") as src, open(arpa, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 24)
    for p in (binary, arpa, arpa_gz):
        warm(p)
    row: dict[str, Any] = {
        "model": name,
        "ngrams": model.ngram_counts,
        "size_binary": binary.stat().st_size,
        "size_arpa": arpa.stat().st_size,
        "size_arpa_gz": arpa_gz.stat().st_size,
        "save_binary_s": save_s,
        "load_binary_verify_s": median_time(lambda: NGramModel.load(binary), repeats),
        "load_binary_noverify_s": median_time(
            lambda: NGramModel.load(binary, verify=False), repeats
        ),
        "load_arpa_s": median_time(lambda: NGramModel.from_arpa(arpa), arpa_repeats),
        "load_arpa_gz_s": median_time(lambda: NGramModel.from_arpa(arpa_gz), arpa_repeats),
    }
    try:
        import kenlm

        row["kenlm_load_arpa_s"] = median_time(lambda: kenlm.Model(str(arpa)), arpa_repeats)
    except ImportError:
        pass
    test = heldout()
    mapped = NGramModel.load(binary, verify=False)
    model.evaluate(test)
    mapped.evaluate(test)
    row["evaluate_built_s"] = median_time(lambda: model.evaluate(test), repeats)
    row["evaluate_mapped_s"] = median_time(lambda: mapped.evaluate(test), repeats)
    return row


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def ms(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 10 else f"{s:.1f} s"


def report(row: dict[str, Any]) -> None:
    print(f"\n## {row['model']} (n-grams per order {row['ngrams']})")
    print(f"{'file':<32} {'size':>12} {'load (median)':>15}")
    print(f"{'binary, verify=True':<32} {mib(row['size_binary']):>12} "
          f"{ms(row['load_binary_verify_s']):>15}")  # fmt: skip
    print(f"{'binary, verify=False':<32} {'':>12} {ms(row['load_binary_noverify_s']):>15}")
    print(f"{'ARPA (.arpa)':<32} {mib(row['size_arpa']):>12} {ms(row['load_arpa_s']):>15}")
    print(f"{'ARPA (.arpa.gz)':<32} {mib(row['size_arpa_gz']):>12} {ms(row['load_arpa_gz_s']):>15}")
    if "kenlm_load_arpa_s" in row:
        print(f"{'kenlm.Model(.arpa), for reference':<32} {'':>12} "
              f"{ms(row['kenlm_load_arpa_s']):>15}")  # fmt: skip
    speedup = row["load_arpa_s"] / row["load_binary_verify_s"]
    print(f"binary load (verified) is {speedup:.0f}x faster than .arpa; "
          f"saving took {ms(row['save_binary_s'])}")  # fmt: skip
    print(f"scoring machado.test.txt: built {ms(row['evaluate_built_s'])}, "
          f"memory-mapped {ms(row['evaluate_mapped_s'])}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the KenLM model only")
    parser.add_argument("--repeats", type=int, default=7, help="runs per binary load")
    parser.add_argument("--arpa-repeats", type=int, default=3, help="runs per ARPA load")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--workdir", type=Path, help="where to write the model files")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="fastppl-bench-binary-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        kenlm_o3 = ARPA / "machado.o3.arpa.gz"
        model = NGramModel.from_arpa(kenlm_o3)
        rows.append(
            measure("kenlm-machado-o3", model, work, kenlm_o3, args.repeats, args.arpa_repeats)
        )
        report(rows[-1])
        del model
        if not args.quick:
            t = time.perf_counter()
            corpus = gutenberg_corpus()
            model = NGramModel.fit(corpus, order=3, smoothing="modified_kneser_ney")
            del corpus
            print(f"\n(gutenberg fit: {time.perf_counter() - t:.1f} s)")
            rows.append(
                measure("gutenberg-mkn-o3", model, work, None, args.repeats, args.arpa_repeats)
            )
            report(rows[-1])
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
