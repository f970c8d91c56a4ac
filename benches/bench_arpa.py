"""ARPA reading and writing speed: ``from_arpa`` and ``to_arpa`` against ``kenlm.Model``.

For each ARPA file given: the median wall time (and CPU time, all threads) of
``NGramModel.from_arpa`` (and its MB/s), of ``kenlm.Model`` on the same file (the ``kenlm`` pip
module, when installed), and of ``to_arpa`` of the model read, with the sha256 of the file
written. With ``--baseline DIR`` (a directory holding another build of the ``fastppl`` package,
e.g. one built from ``main`` and copied aside), that build is measured the same way in the same
run, so that before and after can be compared on a noisy machine as ratios. Every measurement
runs in its own process; each repeat runs every build in turn, then kenlm. The file is read
once first so that it is in the page cache. The load averages before and after each file are
printed with it: on a shared machine they say how far wall times stand from an idle one's.

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
path, out = sys.argv[1], sys.argv[2]
wall, cpu = time.perf_counter(), time.process_time()
model = fastppl.NGramModel.from_arpa(path)
read, read_cpu = time.perf_counter() - wall, time.process_time() - cpu
wall, cpu = time.perf_counter(), time.process_time()
model.to_arpa(out)
write, write_cpu = time.perf_counter() - wall, time.process_time() - cpu
digest = hashlib.sha256()
with open(out, "rb") as f:
    while block := f.read(1 << 24):
        digest.update(block)
print(json.dumps({"read": read, "read_cpu": read_cpu, "write": write, "write_cpu": write_cpu,
                  "sha256": digest.hexdigest(), "package": fastppl.__file__}))
"""

KENLM = """
import json, sys, time
import kenlm
wall, cpu = time.perf_counter(), time.process_time()
model = kenlm.Model(sys.argv[1])
print(json.dumps({"read": time.perf_counter() - wall, "read_cpu": time.process_time() - cpu}))
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
    """The timings of one ARPA file for each build, and kenlm's: each repeat runs every build
    once in turn (so that a change in the machine's load falls on all of them), then medians."""
    size_mb = path.stat().st_size / 1e6
    result: dict = {"file": str(path), "mb": size_mb, "sha256": sha256(path)}
    result["load_before"] = os.getloadavg()
    runs: dict[str, list[dict]] = {name: [] for name in [*builds, "kenlm"]}
    for _ in range(repeats):
        for name, package in builds.items():
            out = tmp / f"{name}.arpa"
            runs[name].append(child(FASTPPL, [str(path), str(out)], package))
            out.unlink()
        if has_kenlm():
            runs["kenlm"].append(child(KENLM, [str(path)]))
    for name, rs in runs.items():
        if not rs:
            continue
        keys = [k for k in ("read", "read_cpu", "write", "write_cpu") if k in rs[0]]
        r: dict = {k: statistics.median(x[k] for x in rs) for k in keys}
        r["read_mb_s"] = size_mb / r["read"]
        if "sha256" in rs[0]:
            hashes = {x["sha256"] for x in rs}
            r["sha256"] = rs[0]["sha256"] if len(hashes) == 1 else "differs between runs"
        r["runs"] = rs
        result[name] = r
    result["load_after"] = os.getloadavg()
    return result


def report(r: dict, builds: list[str]) -> str:
    """The lines printed for one file."""
    load = " ".join(f"{x:.1f}" for x in (*r["load_before"], *r["load_after"]))
    lines = [
        f"{r['file']} ({r['mb']:.0f} MB, sha256 {r['sha256'][:16]}...; load averages 1/5/15 min "
        f"before, after: {load})"
    ]
    kenlm = r.get("kenlm")
    if kenlm:
        lines.append(
            f"  {'kenlm':>8}: Model {kenlm['read']:.1f} s ({kenlm['read_mb_s']:.0f} MB/s, "
            f"CPU {kenlm['read_cpu']:.1f} s)"
        )
    for name in builds:
        b = r[name]
        vs = f", {b['read'] / kenlm['read']:.2f}x kenlm.Model's time" if kenlm else ""
        lines.append(
            f"  {name:>8}: from_arpa {b['read']:.1f} s ({b['read_mb_s']:.0f} MB/s, CPU "
            f"{b['read_cpu']:.1f} s{vs}); to_arpa {b['write']:.1f} s (CPU {b['write_cpu']:.1f} "
            f"s); written sha256 {b['sha256'][:16]}..."
        )
    if len(builds) == 2:
        before, after = (r[n] for n in builds)
        same = "identical" if before["sha256"] == after["sha256"] else "DIFFERENT"
        lines.append(
            f"  after/before: from_arpa {after['read'] / before['read']:.2f}x, "
            f"to_arpa {after['write'] / before['write']:.2f}x; written files {same}"
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
