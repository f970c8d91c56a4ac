"""Benchmarks for fastppl.metrics.from_logits and fastppl.lda.perplexity.

Build first in release mode: ``maturin develop --release``. Then::

    python benches/bench_metrics.py                 # logits (8, 1024, 50257) + LDA
    python benches/bench_metrics.py --only logits --shape 2 512 50257 --repeat 3

Each method runs in its own subprocess so that its peak memory can be read
from ``ru_maxrss``: the figure reported is the peak resident memory added on
top of the inputs (logits, labels / theta, phi, documents). Times are
medians of ``--repeat`` runs after one warm-up; ratios are relative to the
first (baseline) method of each group, measured in the same invocation.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------- logits


def logits_inputs(shape: list[int]) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    logits = rng.standard_normal(shape, dtype=np.float32)
    logits *= 3
    labels = rng.integers(0, shape[-1], size=shape[:-1])
    return logits, labels


def numpy_log_softmax(logits: np.ndarray, labels: np.ndarray) -> float:
    """The obvious numpy code: log_softmax, then gather the shifted labels."""
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs[:, :-1], labels[:, 1:, None], -1)
    return float(picked.sum(dtype=np.float64))


def logits_methods(name: str, logits: np.ndarray, labels: np.ndarray) -> Callable[[], float]:
    if name == "numpy":
        return lambda: numpy_log_softmax(logits, labels)
    if name == "fastppl":
        from fastppl.metrics import from_logits

        return lambda: from_logits(logits, labels).log_prob
    import torch

    t_logits, t_labels = torch.from_numpy(logits), torch.from_numpy(labels)
    if name == "torch_log_softmax":
        return lambda: float(
            torch.log_softmax(t_logits, -1)[:, :-1].gather(-1, t_labels[:, 1:, None]).sum()
        )
    if name == "torch_cross_entropy":
        vocab = t_logits.shape[-1]

        def cross_entropy() -> float:
            flat = t_logits[:, :-1].reshape(-1, vocab)
            loss = torch.nn.functional.cross_entropy(
                flat, t_labels[:, 1:].reshape(-1), reduction="sum"
            )
            return -float(loss)

        return cross_entropy
    if name in ("fastppl_bf16", "fastppl_f16"):
        from fastppl.metrics import from_logits

        dtype = torch.bfloat16 if name == "fastppl_bf16" else torch.float16
        half = t_logits.to(dtype)
        return lambda: from_logits(half, t_labels).log_prob
    raise ValueError(name)


# ---------------------------------------------------------------- LDA


def lda_inputs(
    docs: int, topics: int, vocab: int, length: int
) -> tuple[np.ndarray, np.ndarray, list]:
    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.full(topics, 0.1), size=docs)
    phi = rng.dirichlet(np.full(vocab, 0.01), size=topics)
    phi = (phi + 1e-12) / (phi + 1e-12).sum(1, keepdims=True)
    lengths = rng.poisson(length, size=docs)
    token_lists = [rng.integers(0, vocab, size=n) for n in lengths]
    return theta, phi, token_lists


def dense_blocked(theta: np.ndarray, phi: np.ndarray, token_lists: list, block: int = 500) -> float:
    """Baseline: theta @ phi one block of documents at a time, then gather."""
    total, count = 0.0, 0
    for start in range(0, len(token_lists), block):
        probs = theta[start : start + block] @ phi
        for row, ids in enumerate(token_lists[start : start + block]):
            total += np.log(probs[row, ids]).sum()
            count += ids.size
    return float(np.exp(-total / count))


def lda_methods(name: str, theta, phi, token_lists) -> Callable[[], float]:
    if name == "dense_blocked":
        return lambda: dense_blocked(theta, phi, token_lists)
    if name == "fastppl":
        from fastppl.lda import perplexity

        return lambda: perplexity(theta, phi, token_lists)
    raise ValueError(name)


# ---------------------------------------------------------------- driver


def worker(args: argparse.Namespace) -> None:
    if args.group == "logits":
        method = logits_methods(args.method, *logits_inputs(args.shape))
    else:
        method = lda_methods(args.method, *lda_inputs(*args.lda))
    before = peak_rss_mb()
    value = method()  # warm-up
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        value = method()
        times.append(time.perf_counter() - start)
    extra = peak_rss_mb() - before
    print(json.dumps({"times": times, "value": value, "extra_peak_mb": extra}))


def run_group(group: str, methods: list[str], args: argparse.Namespace) -> None:
    results = {}
    for method in methods:
        cmd = [sys.executable, __file__, "--worker", group, method, "--repeat", str(args.repeat)]
        cmd += ["--shape", *map(str, args.shape), "--lda", *map(str, args.lda)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"  {method:20s} skipped: {proc.stderr.strip().splitlines()[-1]}")
            continue
        results[method] = json.loads(proc.stdout.strip().splitlines()[-1])
    baseline = statistics.median(next(iter(results.values()))["times"])
    for method, r in results.items():
        times = r["times"]
        median = statistics.median(times)
        print(
            f"  {method:20s} median {median:8.3f} s  (min {min(times):.3f}, n={len(times)})"
            f"  x{baseline / median:6.2f} vs {next(iter(results))}"
            f"  extra peak RSS {r['extra_peak_mb']:8.0f} MiB  value {r['value']:.6g}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["logits", "lda"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shape", type=int, nargs=3, default=[8, 1024, 50257])
    parser.add_argument(
        "--lda", type=int, nargs=4, default=[10_000, 100, 50_000, 200],
        metavar=("DOCS", "TOPICS", "VOCAB", "MEAN_LENGTH"),
    )  # fmt: skip
    parser.add_argument("--worker", nargs=2, metavar=("GROUP", "METHOD"))
    args = parser.parse_args()
    if args.worker:
        args.group, args.method = args.worker
        worker(args)
        return
    if args.only in (None, "logits"):
        mb = np.prod(args.shape) * 4 / 2**20
        print(f"logits {tuple(args.shape)} float32 ({mb:.0f} MiB), causal shift, sum of log-probs")
        methods = ["numpy", "torch_log_softmax", "torch_cross_entropy", "fastppl"]
        run_group("logits", [*methods, "fastppl_f16", "fastppl_bf16"], args)
    if args.only in (None, "lda"):
        docs, topics, vocab, length = args.lda
        print(f"LDA {docs} docs x {topics} topics x {vocab} vocab, ~{length} tokens/doc")
        run_group("lda", ["dense_blocked", "fastppl"], args)


if __name__ == "__main__":
    main()
