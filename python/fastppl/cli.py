"""The ``fastppl`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from fastppl.errors import FastpplError


def _demo(args: argparse.Namespace) -> int:
    """Trains orders 1..N on the bundled Machado de Assis corpus; prints held-out perplexities."""
    from fastppl import datasets
    from fastppl.corpus import Corpus
    from fastppl.model import NGramModel
    from fastppl.text import read_text, tokenize_text

    path = datasets.machado()
    t0 = time.perf_counter()
    text = read_text(path, skip_line_prefixes=("#", "%"), lowercase=True)
    sentences = tokenize_text(text, tokenizer=args.tokenizer, sentences="terminators")
    tokenize_s = time.perf_counter() - t0
    test = sentences[:: args.test_every]
    train = [s for i, s in enumerate(sentences) if i % args.test_every]
    train_c, test_c = Corpus.from_sentences(train), Corpus.from_sentences(test)
    print(f"Machado de Assis corpus ({path.name}, public domain), {args.tokenizer} tokens")
    print(
        f"  train: {len(train_c):,} sentences, {train_c.num_tokens:,} tokens; "
        f"test (every {args.test_every}th sentence): {len(test_c):,} sentences, "
        f"{test_c.num_tokens:,} tokens; tokenized in {tokenize_s:.2f} s"
    )
    print(f"  smoothing: {args.smoothing}; perplexity per token incl. one </s> per sentence\n")
    header = (
        f"{'order':>5} {'n-grams':>10} {'fit s':>7} {'eval s':>7} "
        f"{'perplexity':>11} {'excl. OOV':>10} {'OOVs':>6}"
    )
    print(header)
    print("-" * len(header))
    for order in range(1, args.max_order + 1):
        t = time.perf_counter()
        model = NGramModel.fit(train_c, order=order, smoothing=args.smoothing)
        fit_s = time.perf_counter() - t
        t = time.perf_counter()
        incl = model.evaluate(test_c, oov="unk")
        excl = model.evaluate(test_c, oov="skip")
        eval_s = time.perf_counter() - t
        print(
            f"{order:>5} {sum(model.ngram_counts):>10,} {fit_s:>7.3f} {eval_s:>7.3f} "
            f"{incl.perplexity:>11.2f} {excl.perplexity:>10.2f} {incl.num_oov:>6,}"
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fastppl`` command."""
    parser = argparse.ArgumentParser(
        prog="fastppl", description="Exact and fast perplexity of n-gram language models."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="train orders 1-5 on the bundled corpus, print perplexities")
    demo.add_argument("--max-order", type=int, default=5)
    demo.add_argument("--smoothing", default="modified_kneser_ney")
    demo.add_argument("--tokenizer", choices=("nltk", "whitespace"), default="nltk")
    demo.add_argument("--test-every", type=int, default=10, help="every Nth sentence is held out")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fastppl`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except FastpplError as e:
        print(f"fastppl: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
