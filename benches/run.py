"""Benchmark harness: fastppl vs its pure-Python reference vs NLTK's ``nltk.lm``.

Every case runs in a fresh subprocess so that its peak memory (``ru_maxrss``) is its own, and
is repeated; the report gives medians and the ratios against the baseline measured in the same
run. Tokenization is timed apart from counting and scoring.

    python benches/run.py                  # everything (Machado + >= 50 M Gutenberg tokens)
    python benches/run.py --quick          # Machado only, fewer repeats
    python benches/run.py --json out.json  # also write the raw measurements

Corpora: Machado de Assis, bundled with fastppl (NLTK ``word_tokenize``, sentences ended by
``.!?``), and the Project Gutenberg shards of the shared data folder (``$FASTPPL_SHARED``, else
``../shared``; whitespace tokens, one sentence per line, ~56 M tokens), left out when absent.
Use a release build (``maturin develop --release`` or ``pip install .``).
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

ROOT = Path(__file__).resolve().parents[1]
#: The shared data folder, found as the tests find it: $FASTPPL_SHARED, else ../shared.
SHARED = Path(os.environ.get("FASTPPL_SHARED") or ROOT.parent / "shared")
GUTENBERG = sorted((SHARED / "corpora" / "gutenberg").glob("gutenberg-*.txt.xz"))


# ---------------------------------------------------------------------------------------------
# corpora (inside a case's subprocess)
def _machado_sentences() -> list[list[str]]:
    from fastppl import datasets
    from fastppl.text import read_text, tokenize_text

    text = read_text(
        datasets.machado(), skip_line_prefixes=datasets.MACHADO_SKIP_LINE_PREFIXES, lowercase=True
    )
    return tokenize_text(text, tokenizer="nltk", sentences="terminators", language="english")


def _gutenberg_corpus(max_shards: int | None = None):
    import lzma

    import fastppl

    inner = fastppl._core.Corpus()
    for path in GUTENBERG[:max_shards]:
        with lzma.open(path, "rt", encoding="utf-8") as f:
            inner.add_whitespace_text(f.read(), "lines")
        inner.end_document()
    return fastppl.Corpus(inner)


def _corpus_for(impl: str, corpus: str):
    """The corpus, and its sentences as Python lists when the pure-Python reference needs them
    (the reference gets the first Gutenberg shard only: the whole corpus would take minutes)."""
    import fastppl

    if corpus == "machado":
        sentences = _machado_sentences()
        return fastppl.Corpus.from_sentences(sentences), sentences
    c = _gutenberg_corpus(max_shards=1 if impl == "reference" else None)
    return c, (list(c) if impl == "reference" else None)


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


# ---------------------------------------------------------------------------------------------
# cases: each returns a dict of measurements; run with `run.py --case NAME`
def case_machado_tokenize() -> dict:
    seconds, sentences = _timed(_machado_sentences)
    return {"seconds": seconds, "tokens": sum(map(len, sentences))}


def case_count3(impl: str, corpus: str) -> dict:
    """Counting orders 1-3 (no estimation)."""
    import fastppl

    c, sentences = _corpus_for(impl, corpus)
    if impl == "fastppl":
        seconds, counts = _timed(lambda: fastppl._core.count_ngrams(c._inner, 3))
    else:
        from fastppl import reference

        seconds, counted = _timed(lambda: reference.count_ngrams(sentences, 3))
        counts = [len(x) for x in counted]
    return {"seconds": seconds, "tokens": c.num_tokens, "ngrams": counts}


def case_count_score3(impl: str, corpus: str) -> dict:
    """Counting + scoring at order 3 (MLE: counts and lookups only, no smoothing work)."""
    import fastppl

    c, sentences = _corpus_for(impl, corpus)
    if impl == "fastppl":

        def job():
            m = fastppl.NGramModel.fit(c, order=3, smoothing="mle")
            return m.evaluate(c).perplexity

    else:
        from fastppl import reference

        def job():
            m = reference.ReferenceModel(sentences, order=3, smoothing="mle")
            return m.perplexity(sentences)

    seconds, ppl = _timed(job)
    return {"seconds": seconds, "tokens": c.num_tokens, "perplexity": ppl}


def case_laplace3(impl: str, max_tokens: int) -> dict:
    """Fit + perplexity of a Laplace trigram model, fastppl vs nltk.lm (Machado, prefix)."""
    sentences = _machado_sentences()
    kept, n = [], 0
    for s in sentences:
        if n >= max_tokens:
            break
        kept.append(s)
        n += len(s)
    if impl == "fastppl":
        import fastppl

        c = fastppl.Corpus.from_sentences(kept)

        def job():
            m = fastppl.NGramModel.fit(c, order=3, smoothing="laplace")
            return m.evaluate(c).perplexity

    else:
        from nltk.lm import Laplace
        from nltk.lm.preprocessing import padded_everygram_pipeline, padded_everygrams

        def job():
            train, vocab = padded_everygram_pipeline(3, kept)
            m = Laplace(3)
            m.fit(train, vocab)
            grams = [g for s in kept for g in padded_everygrams(3, s) if len(g) == 3]
            return m.perplexity(grams)

    seconds, ppl = _timed(job)
    return {"seconds": seconds, "tokens": n, "perplexity": ppl}


def case_score3(corpus: str) -> dict:
    """Scoring throughput of a fitted modified Kneser-Ney trigram model."""
    import fastppl

    c = (
        _gutenberg_corpus()
        if corpus == "gutenberg"
        else fastppl.Corpus.from_sentences(_machado_sentences())
    )
    m = fastppl.NGramModel.fit(c, order=3, smoothing="modified_kneser_ney")
    seconds, result = _timed(lambda: m.evaluate(c))
    return {"seconds": seconds, "tokens": result.num_tokens, "perplexity": result.perplexity}


def case_count5_gutenberg() -> dict:
    """Counting orders 1-5 of the whole Gutenberg corpus (>= 50 M tokens)."""
    import fastppl

    tok_seconds, c = _timed(_gutenberg_corpus)
    seconds, counts = _timed(lambda: fastppl._core.count_ngrams(c._inner, 5))
    return {"seconds": seconds, "tokens": c.num_tokens, "ngrams": counts, "tokenize": tok_seconds}


def case_gutenberg_tokenize() -> dict:
    seconds, c = _timed(_gutenberg_corpus)
    return {"seconds": seconds, "tokens": c.num_tokens}


CASES = {
    "machado_tokenize": case_machado_tokenize,
    "count3": case_count3,
    "count_score3": case_count_score3,
    "laplace3": case_laplace3,
    "score3": case_score3,
    "count5_gutenberg": case_count5_gutenberg,
    "gutenberg_tokenize": case_gutenberg_tokenize,
}


def _run_case_here(name: str, kwargs: dict) -> None:
    import resource

    out = CASES[name](**kwargs)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


# ---------------------------------------------------------------------------------------------
# driver
def _case_env() -> dict[str, str]:
    """The environment of a case: NLTK_DATA points at the shared folder's Punkt data if any."""
    nltk_data = SHARED / "nltk_data"
    return {**os.environ, "NLTK_DATA": str(nltk_data)} if nltk_data.is_dir() else dict(os.environ)


def measure(name: str, repeats: int, **kwargs) -> dict:
    """Runs a case `repeats` times in fresh subprocesses; returns medians and the raw runs."""
    runs = []
    for _ in range(repeats):
        proc = subprocess.run(
            [sys.executable, __file__, "--case", name, "--kwargs", json.dumps(kwargs)],
            capture_output=True,
            text=True,
            env=_case_env(),
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"case {name} {kwargs} failed:\n{proc.stderr}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    median = {key: statistics.median(r[key] for r in runs) for key in ("seconds", "peak_rss_mb")}
    result = {**runs[0], **median, "runs": len(runs), "name": name, "kwargs": kwargs}
    result["tokens_per_second"] = result["tokens"] / result["seconds"]
    label = " ".join(f"{k}={v}" for k, v in kwargs.items())
    print(
        f"  {name:<20} {label:<34} {result['seconds']:9.3f} s  "
        f"{result['tokens_per_second'] / 1e6:9.3f} M tok/s  {result['peak_rss_mb']:8.0f} MB peak"
        f"  ({result['tokens']:,} tokens, median of {len(runs)})",
        flush=True,
    )
    return result


def ratio(fast: dict, slow: dict, target: float, what: str) -> dict:
    r = fast["tokens_per_second"] / slow["tokens_per_second"]
    verdict = "met" if r >= target else f"MISSED by {target / r:.1f}x"
    print(f"  => {what}: {r:,.0f}x (target >= {target:,.0f}x: {verdict})", flush=True)
    return {"what": what, "ratio": r, "target": target}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="Machado only, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write all measurements here")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--kwargs", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        _run_case_here(args.case, json.loads(args.kwargs))
        return
    reps = 1 if args.quick else args.repeats
    results: list[dict] = []
    ratios: list[dict] = []

    print("Machado de Assis (NLTK tokens, terminators)")
    results.append(measure("machado_tokenize", reps))
    fast = measure("count3", reps, impl="fastppl", corpus="machado")
    ref = measure("count3", 1, impl="reference", corpus="machado")
    results += [fast, ref]
    ratios.append(ratio(fast, ref, 100, "counting orders 1-3 vs reference"))
    fast = measure("count_score3", reps, impl="fastppl", corpus="machado")
    ref = measure("count_score3", 1, impl="reference", corpus="machado")
    results += [fast, ref]
    ratios.append(ratio(fast, ref, 100, "counting + scoring order 3 vs reference"))
    fast = measure("laplace3", reps, impl="fastppl", max_tokens=200_000)
    slow = measure("laplace3", 1, impl="nltk", max_tokens=200_000)
    results += [fast, slow]
    ratios.append(ratio(fast, slow, 1000, "Laplace trigram fit + perplexity vs nltk.lm"))
    results.append(measure("score3", reps, corpus="machado"))

    if not args.quick and not GUTENBERG:
        print(f"Project Gutenberg shards not found in {SHARED / 'corpora' / 'gutenberg'}: skipped")
    elif not args.quick:
        print("Project Gutenberg (whitespace tokens, lines)")
        results.append(measure("gutenberg_tokenize", 1))
        fast = measure("count3", reps, impl="fastppl", corpus="gutenberg")
        ref = measure("count3", 1, impl="reference", corpus="gutenberg")
        results += [fast, ref]
        ratios.append(
            ratio(fast, ref, 100, "counting orders 1-3 vs reference (reference: shard 0)")
        )
        score = measure("score3", reps, corpus="gutenberg")
        results.append(score)
        speed = score["tokens_per_second"] / 1e6
        print(f"  => trigram scoring: {speed:.1f} M tokens/s (target >= 20)")
        count5 = measure("count5_gutenberg", reps)
        results.append(count5)
        print(
            f"  => 5-gram counting of {count5['tokens'] / 1e6:.1f} M tokens: "
            f"{count5['seconds']:.1f} s (target < 30), "
            f"{count5['peak_rss_mb'] / 1024:.2f} GB peak incl. the corpus (target < 4)"
        )
    if args.json:
        args.json.write_text(json.dumps({"results": results, "ratios": ratios}, indent=2))


if __name__ == "__main__":
    main()
