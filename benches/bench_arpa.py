"""ARPA reading and writing speed: ``from_arpa`` and ``to_arpa`` against ``kenlm.Model``.

For each ARPA file given: the median wall time of ``NGramModel.from_arpa`` (and its MB/s),
of ``kenlm.Model`` on the same file (the ``kenlm`` pip module, when installed), and of
``to_arpa`` of the model read back, with the sha256 of the file written. With ``--baseline DIR``
(a directory holding another build of the ``fastppl`` package, e.g. one built from ``main`` and
copied aside), that build is measured the same way in the same run, so that before and after
can be compared on a noisy machine as ratios. Every measurement runs in its own process, one
after the other; files are read once first so that they are in the page cache.

    python benches/bench_arpa.py /tmp/arpa-bench/o3.arpa [more.arpa ...] \\
        [--baseline /tmp/arpa-bench/base] [--repeats 3] [--json out.json]

Use a release build (``maturin develop --release``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

FASTPPL = """
import hashlib, json, sys, time
import fastppl
path, out, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
reads, writes = [], []
for _ in range(repeats):
    t = time.perf_counter()
    model = fastppl.NGramModel.from_arpa(path)
    reads.append(time.perf_counter() - t)
for _ in range(repeats):
    t = time.perf_counter()
    model.to_arpa(out)
    writes.append(time.perf_counter() - t)
digest = hashlib.sha256()
with open(out, "rb") as f:
    while block := f.read(1 << 24):
        digest.update(block)
print(json.dumps({"read": reads, "write": writes, "sha256": digest.hexdigest(),
                  "ngrams": model.ngram_counts, "package": fastppl.__file__}))
"""

KENLM = """
import json, sys, time
import kenlm
path, repeats = sys.argv[1], int(sys.argv[2])
reads = []
for _ in range(repeats):
    t = time.perf_counter()
    model = kenlm.Model(path)
    reads.append(time.perf_counter() - t)
    del model
print(json.dumps({"read": reads}))
"""


def child(code: str, args: list[str], package: Path | None = None) -> dict:
    """Runs `code` in a fresh interpreter (with `package` first on its path); its JSON output."""
    env = dict(os.environ)
    if package is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(package), env.get("PYTHONPATH", "")])
    cmd = ["nice", sys.executable, "-c", code, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sha256(path: Path) -> str:
    """The sha256 of a file (which also puts it in the page cache)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def has_kenlm() -> bool:
    try:
        import kenlm  # noqa: F401
    except ImportError:
        return False
    return True


def measure(path: Path, builds: dict[str, Path | None], repeats: int, tmp: Path) -> dict:
    """The timings of one ARPA file for each build, and kenlm's."""
    size_mb = path.stat().st_size / 1e6
    result: dict = {"file": str(path), "mb": size_mb, "sha256": sha256(path)}
    for name, package in builds.items():
        out = tmp / f"{name}.arpa"
        r = child(FASTPPL, [str(path), str(out), str(repeats)], package)
        out.unlink()
        r["read_s"] = statistics.median(r["read"])
        r["write_s"] = statistics.median(r["write"])
        r["read_mb_s"] = size_mb / r["read_s"]
        result[name] = r
    if has_kenlm():
        k = child(KENLM, [str(path), str(repeats)])
        k["read_s"] = statistics.median(k["read"])
        result["kenlm"] = k
    return result


def report(r: dict, builds: list[str]) -> str:
    """The lines printed for one file."""
    lines = [f"{r['file']} ({r['mb']:.0f} MB, sha256 {r['sha256'][:16]}...)"]
    kenlm = r.get("kenlm", {}).get("read_s")
    for name in builds:
        b = r[name]
        vs = f", {b['read_s'] / kenlm:.2f}x kenlm.Model's {kenlm:.1f} s" if kenlm else ""
        lines.append(
            f"  {name:>8}: from_arpa {b['read_s']:.1f} s ({b['read_mb_s']:.0f} MB/s{vs}); "
            f"to_arpa {b['write_s']:.1f} s; written sha256 {b['sha256'][:16]}..."
        )
    if len(builds) == 2:
        before, after = (r[n] for n in builds)
        same = "identical" if before["sha256"] == after["sha256"] else "DIFFERENT"
        lines.append(
            f"  after/before: from_arpa {after['read_s'] / before['read_s']:.2f}x, "
            f"to_arpa {after['write_s'] / before['write_s']:.2f}x; written files {same}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("arpa", nargs="+", type=Path, help="plain ARPA files to read")
    parser.add_argument("--baseline", type=Path, help="directory holding another fastppl build")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()
    builds: dict[str, Path | None] = {}
    if args.baseline is not None:
        builds["before"] = args.baseline
    builds["after" if args.baseline is not None else "fastppl"] = None
    results = []
    with tempfile.TemporaryDirectory(dir=args.arpa[0].parent) as tmp:
        for path in args.arpa:
            r = measure(path, builds, args.repeats, Path(tmp))
            print(report(r, list(builds)), flush=True)
            results.append(r)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
