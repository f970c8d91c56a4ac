"""Differential run: fastppl's native NLTK tokenizer vs NLTK itself on the Gutenberg shards.

For each shard (``../shared/corpora/gutenberg/gutenberg-NN.txt.xz``) and each language model
given, compares ``sent_tokenize`` sentence for sentence, then the tokens of each sentence
(``word_tokenize(s, preserve_line=True)``, which is how ``word_tokenize`` treats each sentence),
and prints the number of differing sentences and tokens, with the first few differences.
The five shards (~320 MB) took 6 min 20 s for both languages with ``--jobs 2`` on December 7
(NLTK at about 0.85 MB/s on this project's machine; about half an hour per language where it
ran at 0.3 MB/s). NLTK's 5-second regex time limit is lifted (see `compare`): with it, NLTK
itself raises TimeoutError on a whole shard, where the native engine has no limit.

    python benches/nltk_parity_gutenberg.py                 # all shards, English
    python benches/nltk_parity_gutenberg.py --shards 0 --limit 5000000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUTENBERG = ROOT.parent / "shared" / "corpora" / "gutenberg"


def compare(path: Path, language: str, limit: int | None) -> dict[str, object]:
    """The differences between the native and the Python engine on one file."""
    import nltk.redos

    from fastppl.text import read_text
    from fastppl.tokenize import sent_tokenize, word_tokenize

    # NLTK 3.10.4 runs each regex search under a 5 s wall-clock limit (nltk/redos.py), which
    # one `finditer` over a whole shard exceeds (TimeoutError); lift it so NLTK can finish.
    nltk.redos.DEFAULT_TIMEOUT = None

    text = read_text(path)
    if limit:
        text = text[:limit]
    t0 = time.perf_counter()
    native = sent_tokenize(text, language)
    t1 = time.perf_counter()
    python = sent_tokenize(text, language, engine="python")
    t2 = time.perf_counter()
    examples: list[str] = []
    diff_sentences = sum(a != b for a, b in zip(native, python, strict=False)) + abs(
        len(native) - len(python)
    )
    if native != python:
        i = next(
            (i for i, (a, b) in enumerate(zip(native, python, strict=False)) if a != b), len(native)
        )
        examples.append(f"sentence {i}: {native[i : i + 1]!r} vs {python[i : i + 1]!r}")
    diff_token_sentences = diff_tokens = tokens = 0
    native_seconds = python_seconds = 0.0
    for sentence in python:
        s0 = time.perf_counter()
        a = word_tokenize(sentence, language, preserve_line=True)
        s1 = time.perf_counter()
        b = word_tokenize(sentence, language, preserve_line=True, engine="python")
        s2 = time.perf_counter()
        native_seconds += s1 - s0
        python_seconds += s2 - s1
        tokens += len(b)
        if a != b:
            diff_token_sentences += 1
            diff_tokens += sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))
            if len(examples) < 5:
                examples.append(f"tokens of {sentence[:200]!r}: {a[:40]} vs {b[:40]}")
    return {
        "file": path.name,
        "language": language,
        "chars": len(text),
        "sentences": len(python),
        "tokens": tokens,
        "differing_sentences": diff_sentences,
        "sentences_with_differing_tokens": diff_token_sentences,
        "differing_tokens": diff_tokens,
        "sent_tokenize_seconds": {"native": t1 - t0, "python": t2 - t1},
        "word_rules_seconds": {"native": native_seconds, "python": python_seconds},
        "examples": examples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, nargs="*", default=[0, 1, 2, 3, 4])
    parser.add_argument("--languages", nargs="*", default=["english"])
    parser.add_argument("--limit", type=int, default=None, help="characters per shard")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    jobs = [
        (GUTENBERG / f"gutenberg-{n:02d}.txt.xz", language, args.limit)
        for n in args.shards
        for language in args.languages
    ]
    total = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for result in pool.map(compare, *zip(*jobs, strict=True)):
            print(json.dumps(result, ensure_ascii=False), flush=True)
            total += int(result["differing_sentences"]) + int(result["differing_tokens"])  # type: ignore[call-overload]
    print(f"total differences: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
