"""Benchmark: fastppl's native NLTK tokenizer vs NLTK's ``word_tokenize``, and the seed tutorial's
whole job (raw file -> perplexity) vs plain Python + NLTK.

Each case runs in a fresh subprocess (its peak memory, ``ru_maxrss``, is its own) ``--repeats``
times; the report gives medians and ratios against the baseline measured in the same run.

    python benches/bench_tokenize.py               # Machado + Gutenberg (needs ../shared)
    python benches/bench_tokenize.py --quick       # Machado only, one repeat
    python benches/bench_tokenize.py --quick --repeats 5   # Machado only, medians of 5
    python benches/bench_tokenize.py --json out.json

Cases:
- ``tokenize``: ``word_tokenize(text)`` (English Punkt, then the word rules) on text already in
  memory; MB/s of UTF-8 input, for fastppl of its first call in the process and (``later calls``)
  the median of three more (see ``LATER_CALLS``), each on a new ``str`` holding the text (CPython
  caches a ``str``'s UTF-8 form, which the native engine reads: calls on the same object would skip
  encoding it, as calls on new documents cannot). NLTK runs on Machado (3.1 MB) and on the first
  ``--nltk-mb`` MB of Gutenberg shard 0 (NLTK takes ~1.5 min for a whole 64 MB shard, and needs its
  5 s regex time limit lifted to finish at all); fastppl on Machado and on the whole shard. On
  Machado NLTK also runs at its defaults (``nltk_defaults``: the time limit on, as users call it), a
  second baseline. Also on Machado: ``preserve_line=True`` (the whole text as one line: no Punkt
  pass; the native engine cuts it where its tokens cannot change and runs the parts on all cores).
  And ``fixed_costs``: what a native call costs besides Punkt and the word rules, the ceiling
  of any faster implementation of them: the same list of Machado's tokens (its tokens joined by
  spaces, each split off by the core's ``str.split`` rule, no Punkt pass), with all the rest a
  call does (encoding the ``str``, the batches on all cores, interning, one ``str`` per type, the
  list); its MB/s are those of Machado's own text, for comparison with the real call.
- ``tutorial``: read Machado, drop ``#``/``%`` lines, lowercase, ``word_tokenize``, sentences
  ended by ``.!?`` tokens, unigram + bigram MLE perplexity (base 2, no ``<s>``/``</s>``): plain
  Python + NLTK vs ``Corpus.from_file(tokenizer="nltk")`` + ``NGramModel.fit`` + ``evaluate``.
- ``gutenberg_corpus``: the five Gutenberg shards (~320 MB) into a ``Corpus`` with
  ``tokenizer="nltk"``; peak memory against the size of the token output (the tokens' UTF-8
  bytes plus one separator each).

Use a release build (``maturin develop --release``).
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

from machine import CpuTimes, describe

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MACHADO = SHARED / "corpora" / "machado" / "machadodeassiscorpus.txt"
GUTENBERG = sorted((SHARED / "corpora" / "gutenberg").glob("gutenberg-*.txt.xz"))


def _text(corpus: str, mb: float | None) -> str:
    from fastppl.text import read_text

    if corpus == "machado":
        text = read_text(MACHADO, skip_line_prefixes=("#", "%"))
    else:
        text = read_text(GUTENBERG[0])
    if mb:
        text = text[: int(mb * 1e6)]
    return text


def case_tokenize(
    engine: str,
    corpus: str,
    mb: float | None = None,
    nltk_defaults: bool = False,
    preserve_line: bool = False,
    later_calls: int = 0,
    fixed_costs: bool = False,
) -> dict:
    from fastppl import _core
    from fastppl.tokenize import word_tokenize

    def tokenize(s: str) -> list[str]:
        if fixed_costs:
            return _core.nltk_word_tokenize(s, None, words="whitespace")
        return word_tokenize(s, preserve_line=preserve_line, engine=engine)  # type: ignore[arg-type]

    if engine == "python":  # (NLTK only where it runs, as in the tutorial case)
        import nltk.redos

        if not nltk_defaults:  # NLTK times out on large texts with its default regex time limit
            nltk.redos.DEFAULT_TIMEOUT = None
    text = _text(corpus, mb)
    text_mb = len(text.encode()) / 1e6
    if fixed_costs:
        expected = word_tokenize(text)
        text = " ".join(expected)

    start = time.perf_counter()
    tokens = tokenize(text)
    seconds = time.perf_counter() - start
    if fixed_costs:
        assert tokens == expected
    out = {"seconds": seconds, "mb": text_mb, "tokens": len(tokens)}
    if later_calls:
        del tokens
        later = []
        for _ in range(later_calls):
            # a new str holding the text, as a new document would be: CPython keeps a str's
            # UTF-8 form, which the native engine reads, once made (about 2.5 ms for Machado)
            fresh = text[:-1] + text[-1:]
            start = time.perf_counter()
            tokens = tokenize(fresh)
            later.append(time.perf_counter() - start)
            # freed after the clock stops, as the first call's list and NLTK's are
            del tokens, fresh
        out["later_seconds"] = statistics.median(later)
    return out


def _python_tutorial() -> float:
    """The seed tutorial's code: plain Python and NLTK."""
    import math
    from collections import Counter
    from itertools import pairwise

    from nltk.tokenize import word_tokenize

    with open(MACHADO, encoding="utf-8") as f:
        text = "".join(line.lower() for line in f if not line.startswith(("#", "%")))
    tokens = word_tokenize(text)
    sentences, current = [], []
    for t in tokens:
        current.append(t)
        if t in ".!?":
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    unigrams = Counter(tokens)
    bigrams = Counter(b for s in sentences for b in pairwise(s))
    n = len(tokens)
    log2p = 0.0
    for s in sentences:
        log2p += math.log2(unigrams[s[0]] / n)
        for a, b in pairwise(s):
            log2p += math.log2(bigrams[(a, b)] / unigrams[a])
    uni = sum(math.log2(unigrams[t] / n) for t in tokens)
    return 2 ** (-uni / n) + 2 ** (-log2p / n)


def _fastppl_tutorial(stages: dict[str, float]) -> float:
    """The same job with fastppl; the seconds of each stage go to ``stages``."""
    import fastppl

    start = time.perf_counter()
    corpus = fastppl.Corpus.from_file(
        MACHADO, tokenizer="nltk", lowercase=True, skip_line_prefixes=("#", "%")
    )
    stages["corpus"] = time.perf_counter() - start
    uni = fastppl.NGramModel.fit(corpus, order=1, smoothing="mle", bos_eos=False)
    bi = fastppl.NGramModel.fit(corpus, order=2, smoothing="mle", bos_eos=False)
    stages["fit"] = time.perf_counter() - start - stages["corpus"]
    value = uni.evaluate(corpus).perplexity + bi.evaluate(corpus).perplexity
    stages["evaluate"] = time.perf_counter() - start - stages["corpus"] - stages["fit"]
    return value


def case_tutorial(impl: str) -> dict:
    # each job's library imported before the clock starts, and only its own: NLTK imports
    # NumPy, whose BLAS threads spin on the cores for a while after it loads, and fastppl's
    # job (which never loads NumPy) would pay for that
    if impl == "python":
        import nltk.redos

        nltk.redos.DEFAULT_TIMEOUT = None
    else:
        import fastppl

        assert fastppl.__version__
    stages: dict[str, float] = {}
    start = time.perf_counter()
    value = _python_tutorial() if impl == "python" else _fastppl_tutorial(stages)
    return {"seconds": time.perf_counter() - start, "value": value, **stages}


def case_gutenberg_corpus() -> dict:
    import resource

    import fastppl

    start = time.perf_counter()
    corpus = fastppl.Corpus.from_files(GUTENBERG, tokenizer="nltk", sentences="punkt")
    seconds = time.perf_counter() - start
    # the peak of the tokenizing itself, before the token counts below build a Python dict
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    counts = corpus.token_counts()
    output = sum((len(t.encode()) + 1) * n for t, n in counts.items())
    return {
        "seconds": seconds,
        "tokens": corpus.num_tokens,
        "output_mb": output / 1e6,
        "tokenizing_peak_rss_mb": peak_mb,
    }


#: native calls timed after the first in the same process: the first call of a process also
#: pays for its fresh memory (a page fault per 4 KiB it touches, a few microseconds each on this
#: project's VM) and for the UTF-8 copy Python caches in the `str`; later calls show the
#: tokenizer's own speed. NLTK's first call is not singled out: on the same text it takes
#: seconds, of which such costs are a negligible part.
LATER_CALLS = 3

CASES = {
    "tokenize": case_tokenize,
    "tutorial": case_tutorial,
    "gutenberg_corpus": case_gutenberg_corpus,
}


def measure(name: str, repeats: int, **kwargs: object) -> dict:
    runs = []
    for _ in range(repeats):
        proc = subprocess.run(
            [sys.executable, __file__, "--case", name, "--kwargs", json.dumps(kwargs)],
            capture_output=True,
            text=True,
            env={**os.environ, "NLTK_DATA": str(SHARED / "nltk_data")},  # for plain NLTK
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"case {name} {kwargs} failed:\n{proc.stderr}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out = {**runs[0], "name": name, "kwargs": kwargs, "runs": len(runs)}
    for key in ("seconds", "later_seconds", "peak_rss_mb", "corpus", "fit", "evaluate"):
        if key in out:
            out[key] = statistics.median(r[key] for r in runs)
    if "mb" in out:
        out["mb_per_s"] = out["mb"] / out["seconds"]
    if "later_seconds" in out:
        out["later_mb_per_s"] = out["mb"] / out["later_seconds"]
    label = " ".join(f"{k}={v}" for k, v in kwargs.items() if k != "later_calls")
    extra = f"{out['mb_per_s']:8.2f} MB/s" if "mb" in out else ""
    if "later_mb_per_s" in out:
        extra += f" (later calls {out['later_mb_per_s']:.2f} MB/s)"
    print(
        f"  {name:<17} {label:<40} {out['seconds']:8.3f} s {extra}  "
        f"{out['peak_rss_mb']:7.0f} MB peak (median of {len(runs)})",
        flush=True,
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="Machado only, one repeat unless --repeats"
    )
    parser.add_argument("--repeats", type=int, help="runs of each case (default 3)")
    parser.add_argument("--nltk-mb", type=float, default=8.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--kwargs", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        import resource

        out = CASES[args.case](**json.loads(args.kwargs))
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(out))
        return
    reps = args.repeats or (1 if args.quick else 3)
    start = CpuTimes.now()
    results = []
    native = measure("tokenize", reps, engine="native", corpus="machado", later_calls=LATER_CALLS)
    nltk = measure("tokenize", reps, engine="python", corpus="machado")
    nltk_defaults = measure("tokenize", reps, engine="python", corpus="machado", nltk_defaults=True)
    results += [native, nltk, nltk_defaults]
    print(
        f"  => Machado: {native['mb_per_s'] / nltk['mb_per_s']:.0f}x NLTK's word_tokenize "
        f"(regex time limit lifted), {native['mb_per_s'] / nltk_defaults['mb_per_s']:.0f}x "
        f"at NLTK's defaults; later calls {native['later_mb_per_s'] / nltk['mb_per_s']:.0f}x "
        f"and {native['later_mb_per_s'] / nltk_defaults['mb_per_s']:.0f}x"
    )
    fixed = measure(
        "tokenize",
        reps,
        engine="native",
        corpus="machado",
        later_calls=LATER_CALLS,
        fixed_costs=True,
    )
    results.append(fixed)
    print(
        f"  => Machado's call without Punkt and the word rules (its tokens split off by spaces): "
        f"{fixed['seconds'] * 1e3:.1f} ms first call, {fixed['later_seconds'] * 1e3:.1f} ms later "
        f"calls against {native['seconds'] * 1e3:.1f} / {native['later_seconds'] * 1e3:.1f} ms: "
        f"any implementation of the rules is at most {fixed['later_mb_per_s']:.0f} MB/s on later "
        f"calls, {fixed['later_mb_per_s'] / nltk['mb_per_s']:.0f}x NLTK (limit lifted), "
        f"{fixed['later_mb_per_s'] / nltk_defaults['mb_per_s']:.0f}x at its defaults"
    )
    native = measure(
        "tokenize",
        reps,
        engine="native",
        corpus="machado",
        preserve_line=True,
        later_calls=LATER_CALLS,
    )
    nltk = measure("tokenize", reps, engine="python", corpus="machado", preserve_line=True)
    results += [native, nltk]
    print(
        f"  => Machado as one line (preserve_line=True): "
        f"{native['mb_per_s'] / nltk['mb_per_s']:.0f}x NLTK (regex time limit lifted); "
        f"later calls {native['later_mb_per_s'] / nltk['mb_per_s']:.0f}x"
    )
    fast = measure("tutorial", reps, impl="fastppl")
    slow = measure("tutorial", reps, impl="python")
    results += [fast, slow]
    assert abs(fast["value"] - slow["value"]) < 1e-6 * slow["value"], (fast, slow)
    print(
        f"  => tutorial job (raw file -> perplexity): {slow['seconds'] / fast['seconds']:.0f}x; "
        f"fastppl's stages (medians): corpus {fast['corpus']:.3f} s, fit {fast['fit']:.3f} s, "
        f"evaluate {fast['evaluate']:.3f} s"
    )
    if not args.quick:
        native = measure(
            "tokenize", reps, engine="native", corpus="gutenberg", later_calls=LATER_CALLS
        )
        nltk = measure("tokenize", reps, engine="python", corpus="gutenberg", mb=args.nltk_mb)
        results += [native, nltk]
        print(
            f"  => Gutenberg: {native['mb_per_s'] / nltk['mb_per_s']:.0f}x NLTK's word_tokenize; "
            f"later calls {native['later_mb_per_s'] / nltk['mb_per_s']:.0f}x"
        )
        big = measure("gutenberg_corpus", 1)
        results.append(big)
        print(
            f"  => 5 Gutenberg shards: {big['tokens']:,} tokens in {big['seconds']:.1f} s; "
            f"peak while tokenizing {big['tokenizing_peak_rss_mb']:.0f} MB = "
            f"{big['tokenizing_peak_rss_mb'] / big['output_mb']:.2f}x the token output "
            f"({big['output_mb']:.0f} MB; the interpreter included)"
        )
    print(describe(start))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
