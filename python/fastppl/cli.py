"""The ``fastppl`` command line, modelled on KenLM's ``lmplz`` and ``query`` and SRILM's
``ngram -ppl``.

    fastppl train -o 3 corpus.txt model.arpa.gz     # text -> ARPA (modified Kneser-Ney)
    fastppl train -o 3 corpus.txt model.fppl        # text -> fastppl's binary format
    fastppl eval model.arpa.gz test.txt             # perplexity incl./excl. OOVs, like query
    fastppl score model.arpa.gz test.txt --tokens   # per-sentence or per-token scores
    fastppl score model.arpa docs.jsonl --documents --normalize --sp-model sp.model -o out.jsonl
    fastppl demo                                    # the bundled-corpus demo

Text is read from files or standard input (``-`` or no file), plain or gzip/xz/bzip2 compressed
(told by their first bytes, whatever their name; zstd, lz4... are refused: decompress them
first), as one
pre-tokenized sentence per line by default (``--tokenizer whitespace --sentences lines``, what
lmplz and query read; Python's ``Corpus.from_file`` defaults to ``tokenizer="nltk"`` instead, and
the command says which tokenizer it used when it applies that default). Scores are log10 unless
``--base`` says otherwise. Token counts include one ``</s>`` per sentence (KenLM's convention).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import glob
import json
import math
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fastppl import _core
from fastppl._checks import log_base_divisor, same_file
from fastppl.errors import (
    EmptyCorpusError,
    FastpplError,
    FastpplWarning,
    InvalidArgumentError,
    NotNormalizedError,
)
from fastppl.model import ARPA_SMOOTHINGS, SMOOTHINGS, is_binary_name
from fastppl.progress import ProgressBar, ProgressCallback
from fastppl.text import is_url, url_filesystem

#: The command line's tokenizer when --tokenizer is not given: lmplz's and query's reading of text.
DEFAULT_TOKENIZER = "whitespace"
#: Significant digits of the scores `score` prints (see `format_score`).
SCORE_DIGITS = 12
#: What every command means by a token count.
TOKENS_HELP = "token counts include one </s> per sentence, never <s> (as KenLM's query)"


# ---- shared pieces ----------------------------------------------------------------------------
@contextlib.contextmanager
def _step(label: str, quiet: bool) -> Iterator[ProgressCallback | None]:
    """Progress bars on stderr for a long step, fed by the Rust core (only on a terminal, and not
    with --quiet): yields the callback to pass as ``progress=`` to the calls of the step."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    bar = ProgressBar(label)
    try:
        yield bar
    finally:
        bar.close()


def _add_text_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tokenizer",
        choices=("whitespace", "nltk", "kenlm"),
        help="whitespace: pre-tokenized text, str.split() (the default here, as lmplz and query "
        "read text; Python's Corpus.from_file defaults to nltk, and the command prints a note "
        "when it applies this default); kenlm: exactly as lmplz/query (one sentence per line, "
        "ASCII whitespace only, blank lines are empty sentences); nltk: word_tokenize",
    )
    p.add_argument(
        "--sentences",
        choices=("lines", "terminators", "punkt", "none"),
        default="lines",
        help="how text is cut into sentences (default: one per line)",
    )
    p.add_argument(
        "--language",
        default="english",
        help="Punkt language for --tokenizer nltk and --sentences punkt (bundled: english, "
        "portuguese; others from NLTK's data path)",
    )
    p.add_argument(
        "--engine",
        choices=("native", "python"),
        default="native",
        help="NLTK tokenization in Rust (native, default) or by NLTK's own code (python)",
    )
    p.add_argument("--lowercase", action="store_true", help="lowercase the text first")
    p.add_argument(
        "--skip-line-prefix",
        action="append",
        type=_line_prefix,
        default=[],
        metavar="PREFIX",
        help="drop lines starting with PREFIX (repeatable)",
    )
    p.add_argument(
        "--encoding", default="utf-8", help="text encoding of the input (default: utf-8)"
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no status lines, notes or summary on stderr"
    )


#: The estimators ``demo`` offers: those that give probabilities (a stupid-backoff model has no
#: perplexity, and its evaluation is refused).
DEMO_SMOOTHINGS = tuple(name for name in SMOOTHINGS if name != "stupid_backoff")

#: What each command reads from standard input, for the message when it is a terminal.
STDIN_TEXT = {"train": "the corpus", "eval": "the text to score", "score": "the text to score"}


def _line_prefix(text: str) -> str:
    """A non-empty --skip-line-prefix (argparse reports the empty one, which every line starts
    with, as a usage error)."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty (every line starts with it)")
    return text


def _int_at_least(minimum: int, meaning: str) -> Callable[[str], int]:
    """A ``type=`` function reading an int >= ``minimum`` (argparse reports anything else as a
    usage error); ``meaning`` says what the number is, in that error.

    >>> _int_at_least(2, "one sentence in N")("10")
    10
    """

    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum} ({meaning}), got {value}")
        return value

    return read


def _note(args: argparse.Namespace, text: str) -> None:
    """Prints ``fastppl: note: <text>`` on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(f"fastppl: note: {text}", file=sys.stderr)


def _tokenizer(args: argparse.Namespace) -> str:
    """``--tokenizer``, or the command line's default, with a note saying so (unless
    ``--quiet``)."""
    if args.tokenizer is not None:
        return args.tokenizer
    _note(
        args,
        "tokens split on whitespace, one sentence per line (the command line's default, as "
        "lmplz and query read text; Python's Corpus.from_file defaults to tokenizer='nltk'); "
        "choose with --tokenizer whitespace|kenlm|nltk",
    )
    return DEFAULT_TOKENIZER


def _read_corpus(path: str | None, args: argparse.Namespace, progress: ProgressCallback | None):
    """The corpus in `path` (a file, or standard input for None or '-')."""
    from fastppl.corpus import Corpus

    if (path is None or path == "-") and sys.stdin.isatty():
        hint = (
            f" (with one file name, {args.output!r} is the output)"
            if args.command == "train" and path is None
            else ""
        )
        raise InvalidArgumentError(
            f"fastppl {args.command}: reading {STDIN_TEXT[args.command]} from standard input, "
            f"which is a terminal; give a file or pipe text in{hint}"
        )
    options = {
        "tokenizer": _tokenizer(args),
        "sentences": args.sentences,
        "language": args.language,
        "engine": args.engine,
        "lowercase": args.lowercase,
        "skip_line_prefixes": tuple(args.skip_line_prefix),
    }
    if path is None or path == "-":
        path = "/dev/stdin"  # read in pieces as a file is
    return Corpus.from_file(path, encoding=args.encoding, progress=progress or False, **options)


#: What a text of no sentence is (`_holds_none`).
NO_SENTENCE = "sentence (empty, or every line blank or skipped)"


def _holds_none(path: str | None, what: str) -> str:
    """What the commands say of a text (`path`, standard input for None or '-') that holds no
    `what`.

    >>> _holds_none("t.txt", NO_SENTENCE)
    "'t.txt' holds no sentence (empty, or every line blank or skipped)"
    """
    name = "standard input" if path is None or path == "-" else repr(path)
    return f"{name} holds no {what}"


#: What `eval` and `score` read (NGramModel.from_file).
MODEL_HELP = (
    "ARPA model (plain or compressed), fastppl binary model or KenLM binary file, probing or trie "
    "(recognized by their bytes)"
)


def _load_model(args: argparse.Namespace):
    """The model to score with (`args.model`: ARPA, fastppl or KenLM binary), with a status
    line; one of scores, not probabilities (stupid backoff), is refused: every command scoring
    text gives log probabilities and perplexities."""
    from fastppl.model import NGramModel

    with _step("loading model", args.quiet) as progress:
        model = NGramModel.from_file(args.model, progress=progress or False)
    if not model.normalized:
        raise NotNormalizedError(
            f"{args.model}: a {model.smoothing} model gives scores, not probabilities: fastppl "
            f"{args.command} computes no log probability or perplexity from it (in Python, "
            "NGramModel.evaluate(..., allow_unnormalized=True) gives its scores)"
        )
    return model


def _model_and_text(args: argparse.Namespace):
    """The model (`args.model`, see `_load_model`) and the corpus to score (`args.text`), with
    status lines."""
    model = _load_model(args)
    with _step("reading", args.quiet) as progress:
        corpus = _read_corpus(args.text, args, progress)
    return model, corpus


def format_score(value: float) -> float:
    """A score rounded to `SCORE_DIGITS` significant digits, printed by `repr` (shortest form).

    The float64 arithmetic of a base conversion (a natural log divided by ln 10) changes the last
    two or three of the 17 digits `repr` shows; 12 keep every digit that means something and drop
    that noise, so the same score always prints the same way.

    >>> format_score(-3.9084055319999997)
    -3.908405532
    >>> format_score(float("-inf"))
    -inf
    """
    return float(f"{value:.{SCORE_DIGITS}g}")


def json_float(value: Any) -> Any:
    """`value` for JSON output: an infinite or NaN float as the string "Infinity",
    "-Infinity" or "NaN" (JSON has no such number: json.dumps would write the bare words,
    which strict parsers such as jq refuse), anything else as it is.

    >>> json_float(float("-inf")), json_float(float("nan")), json_float(-1.5), json_float(None)
    ('-Infinity', 'NaN', -1.5, None)
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def tokens_with_eos(corpus) -> int:
    """The corpus's token count as every command reports it: words plus one ``</s>`` per
    sentence (an empty sentence counts one), as KenLM's query counts."""
    return int(corpus.num_tokens) + len(corpus)


def _prune_thresholds(value: str) -> list[int]:
    """``--prune 0,1,2`` (or ``0 1 2``, joined by `_join_prune_values`) as a list of ints."""
    try:
        thresholds = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--prune takes integer thresholds, as 0 1 1 or 0,1,1 (got {value!r})"
        ) from None
    if not thresholds:
        raise argparse.ArgumentTypeError("--prune needs at least one threshold")
    return thresholds


def _is_prune_value(arg: str) -> bool:
    """Whether `arg` is a --prune value (integers, negative ones included so that the core
    names them as out of range, joined by commas) rather than the next argument.

    >>> [_is_prune_value(a) for a in ("1", "0,1", "-1", "0,-2", "-o", "m.arpa", "-", "")]
    [True, True, True, True, False, False, False, False]
    """
    parts = arg.split(",")
    return any(parts) and all(p.removeprefix("-").isdigit() for p in parts if p)


def _join_prune_values(argv: Sequence[str]) -> list[str]:
    """Turns ``--prune 0 1 corpus.txt`` into ``--prune=0,1 corpus.txt``: the integers right after
    --prune are its thresholds, the next argument that is not an integer is a positional one."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg != "--prune":
            out.append(arg)
            i += 1
            continue
        values = []
        i += 1
        while i < len(argv) and _is_prune_value(argv[i]):
            values.append(argv[i])
            i += 1
        out.append(f"--prune={','.join(values)}" if values else arg)
    return out


# ---- subcommands ------------------------------------------------------------------------------
def _estimator_params(args: argparse.Namespace) -> dict[str, float | bool]:
    """The estimator's parameters given on the command line; one the estimator does not take
    is refused (it would be ignored: ``--discount 0.5`` with modified_kneser_ney, whose
    discounts are estimated, would fit another model than the one asked for)."""
    if args.discount is not None and args.smoothing not in ("absolute_discounting", "kneser_ney"):
        raise InvalidArgumentError(
            f"--discount is the D of kneser_ney and absolute_discounting; {args.smoothing} "
            "does not take it (choose one of them with --smoothing)"
        )
    if args.discount_fallback and args.smoothing != "modified_kneser_ney":
        raise InvalidArgumentError(
            f"--discount-fallback goes with modified_kneser_ney; {args.smoothing} does not take it"
        )
    if args.partitions is not None and args.ray is None:
        raise InvalidArgumentError("--partitions goes with --ray (the n-gram partitions of Ray)")
    params: dict[str, float | bool] = {}
    if args.smoothing in ("absolute_discounting", "kneser_ney") and args.discount is not None:
        params["discount"] = args.discount
    if args.smoothing == "modified_kneser_ney":
        params["discount_fallback"] = args.discount_fallback
    return params


def _ray_inputs(text: str | None) -> list[str]:
    """The training files of `train --ray`: a directory's files or a glob's matches, sorted, or
    one file; local, or URLs on any filesystem fsspec knows (``s3://bucket/shards/*.xz``)."""
    if text is None or text == "-":
        raise InvalidArgumentError("train --ray reads files: name them (a directory or a glob)")
    if is_url(text):
        return _url_inputs(text)
    if os.path.isdir(text):
        names = sorted(os.listdir(text))
        return [os.path.join(text, n) for n in names if os.path.isfile(os.path.join(text, n))]
    matches = sorted(glob.glob(text))
    if not matches:
        raise InvalidArgumentError(f"train --ray: no file matches {text!r}")
    return matches


def _url_inputs(url: str) -> list[str]:
    """`_ray_inputs` of a URL, listed through fsspec."""
    fs, path = url_filesystem(url)
    if fs.isdir(path):
        found = [p for p in fs.ls(path, detail=False) if fs.isfile(p)]
    else:
        found = fs.glob(path)
    if not found:
        raise InvalidArgumentError(f"train --ray: no file matches {url!r}")
    return sorted(fs.unstrip_protocol(p) for p in found)


def _train_ray(args: argparse.Namespace, params: dict[str, float | bool], target: str) -> int:
    """`train --ray`: the estimation as Ray tasks (fastppl.ray.train), ARPA or binary output,
    written to `target` (see `_model_output`)."""
    if args.min_count != 1 or args.limit_vocab_file is not None:
        raise InvalidArgumentError("train --ray does not take --min-count or --limit-vocab-file")
    if args.engine != "native":
        raise InvalidArgumentError("train --ray tokenizes natively: it does not take --engine")
    import ray

    from fastppl.ray import train as ray_train

    inputs = _ray_inputs(args.text)
    try:
        ray.init(address=args.ray or None, include_dashboard=False, ignore_reinit_error=True)
    except ConnectionError as e:
        if args.ray and os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
            raise ConnectionError(
                f"{e}. A cluster with token authentication (Ray's default for one started by "
                "ray.init() or `ray start`) lets in a driver given its address only with "
                "RAY_AUTH_MODE=token and the cluster's token (RAY_AUTH_TOKEN or "
                "~/.ray/auth_token) in its environment"
            ) from e
        raise
    step = f"fitting order {args.order} on {len(inputs)} files with Ray, writing {args.output}"
    with _step(step, args.quiet):
        summary = ray_train(
            inputs,
            target,
            order=args.order,
            smoothing=args.smoothing,
            partitions=args.partitions,
            memory=args.memory or "1G",
            work_dir=args.temp_dir,
            prune=args.prune,
            tokenizer=_tokenizer(args),
            sentences=args.sentences,
            language=args.language,
            lowercase=args.lowercase,
            skip_line_prefixes=tuple(args.skip_line_prefix),
            encoding=args.encoding,
            format=args.format,
            **params,
        )
    if not args.quiet:
        counts = " ".join(f"{i}={n}" for i, n in enumerate(summary.ngram_counts, start=1))
        print(f"n-grams (ARPA header) {counts}; wrote {args.output}", file=sys.stderr)
    return 0


def _is_stream(path: str) -> bool:
    """Whether `path` is an existing file that is not a regular file nor a folder (a device such
    as /dev/stdout or /dev/null, a named pipe, a socket): one to write into, never to replace.

    >>> _is_stream(os.devnull), _is_stream(__file__), _is_stream("/no/such/file")
    (True, False, False)
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def _model_output(path: str, temp_dir: str | None) -> Iterator[str]:
    """The path to write the model given as `path` to: `path` itself (the writers put a file
    there atomically, by renaming a temporary one over it), or, for standard output ('-') and
    streams (`_is_stream`), which a rename would replace (as root, /dev/stdout or /dev/null
    themselves), a file in a temporary folder (in `temp_dir` if given) copied to them at the
    end of the block, then removed."""
    if path != "-" and not _is_stream(path):
        yield path
        return
    folder_in = temp_dir if temp_dir is not None and os.path.isdir(temp_dir) else None
    with tempfile.TemporaryDirectory(prefix="fastppl-train-", dir=folder_in) as folder:
        # the same name, so that its extension picks the compression as the output's would
        partial = os.path.join(folder, "model" if path == "-" else os.path.basename(path))
        yield partial
        with open(partial, "rb") as source:
            if path == "-":
                sys.stdout.flush()
                shutil.copyfileobj(source, sys.stdout.buffer)
                sys.stdout.buffer.flush()
            else:
                with open(path, "wb") as sink:
                    shutil.copyfileobj(source, sink)


def _train(args: argparse.Namespace) -> int:
    """Fits a model on a text and writes it as ARPA (compressed by the output's extension) or in
    fastppl's binary format (`--format binary`, or an output ending in .fppl/.fastppl); to
    standard output for '-'."""
    with _model_output(args.output, args.temp_dir) as target:
        return _train_into(args, target)


def _train_into(args: argparse.Namespace, target: str) -> int:
    """`_train`, writing the model to the file `target` (`args.output` or a temporary file
    copied to it, see `_model_output`)."""
    from fastppl.model import NGramModel
    from fastppl.training import train_arpa

    params = _estimator_params(args)
    if args.ray is not None:
        return _train_ray(args, params, target)
    fmt = args.format
    if fmt is None:
        fmt = "binary" if is_binary_name(args.output) else "arpa"
    if fmt == "arpa" and args.smoothing not in ARPA_SMOOTHINGS:
        raise InvalidArgumentError(
            f"{args.smoothing} models have no ARPA form (those of {', '.join(ARPA_SMOOTHINGS)} "
            "do); write it with --format binary or to a .fppl file"
        )
    if args.temp_dir is not None and not os.path.isdir(args.temp_dir):
        raise InvalidArgumentError(
            f"-T/--temp-dir {args.temp_dir!r} is not an existing directory (create it first)"
        )
    if args.temp_dir is not None and args.memory is None:
        raise InvalidArgumentError("-T/--temp-dir only matters with -S/--memory (give both)")
    if args.memory is not None and fmt == "binary":
        raise InvalidArgumentError(
            "--memory writes ARPA (the model is never whole in memory); write a .arpa file, "
            "then convert it if needed: NGramModel.from_arpa(path).save(binary_path)"
        )
    for name, given in (
        ("the input corpus", args.text),
        ("--limit-vocab-file", args.limit_vocab_file),
    ):
        if same_file(given, args.output):
            raise InvalidArgumentError(
                f"the output {args.output!r} is {name} {given!r}: refusing to overwrite it "
                "(give another output path)"
            )
    # the writer's error (a folder, a missing one, a compression not written) now, not once
    # the corpus is read and counted
    _core.check_output(target, fmt == "arpa")
    with _step("reading", args.quiet) as progress:
        corpus = _read_corpus(args.text, args, progress)
    if not len(corpus):
        raise EmptyCorpusError(f"{_holds_none(args.text, NO_SENTENCE)}: there is no model to fit")
    limits = {
        "min_count": args.min_count,
        "vocab_file": args.limit_vocab_file,
        "prune": args.prune,
    }
    if args.memory is not None:
        step = f"fitting order {args.order} within {args.memory}, writing {args.output}"
        with _step(step, args.quiet) as progress:
            summary = train_arpa(
                corpus,
                target,
                order=args.order,
                smoothing=args.smoothing,
                memory=args.memory,
                temp_dir=args.temp_dir,
                progress=progress or False,
                **limits,
                **params,
            )
        # the header counts <s> among the unigrams; ngram_counts elsewhere does not
        ngram_counts = [summary.ngram_counts[0] - 1, *summary.ngram_counts[1:]]
        if not args.quiet:
            print(
                f"{summary.sorted_runs} sorted runs, {summary.bytes_spilled / 2**20:.1f} MiB "
                "through the temporary directory",
                file=sys.stderr,
            )
    else:
        with _step(f"fitting order {args.order}", args.quiet) as progress:
            model = NGramModel.fit(
                corpus,
                order=args.order,
                smoothing=args.smoothing,
                progress=progress or False,
                **limits,
                **params,
            )
        with _step(f"writing {args.output}", args.quiet) as progress:
            if fmt == "binary":
                model.save(target, progress=progress or False)
            else:
                model.to_arpa(target, progress=progress or False)
        ngram_counts = model.ngram_counts
    if not args.quiet:
        counts = " ".join(f"{i}={n}" for i, n in enumerate(ngram_counts, start=1))
        print(
            f"{tokens_with_eos(corpus)} tokens (with </s>), {len(corpus)} sentences; "
            f"n-grams {counts}; "
            f"wrote {args.output}",
            file=sys.stderr,
        )
    return 0


def _eval(args: argparse.Namespace) -> int:
    """Perplexity of a text, printed like KenLM's `query -v summary` (or as JSON)."""
    model, corpus = _model_and_text(args)
    if not len(corpus):
        raise EmptyCorpusError(
            f"{_holds_none(args.text, NO_SENTENCE)}: there is no perplexity to compute"
        )
    with _step("scoring", args.quiet) as progress:
        incl = model.evaluate(corpus, oov="unk", progress=progress or False)
        excl = (
            model.evaluate(corpus, oov="skip", progress=progress or False) if incl.num_oov else incl
        )
    figures = {
        "perplexity_including_oovs": incl.perplexity,
        "perplexity_excluding_oovs": excl.perplexity,
        "oovs": incl.num_oov,
        "tokens": incl.num_tokens,
        "sentences": len(corpus),
        "log10_prob": incl.log_prob_in(10),
    }
    if args.srilm:
        # SRILM ngram -ppl: words exclude </s>; logprob includes it; OOVs are left out
        log10 = excl.log_prob_in(10)
        words = incl.num_tokens - len(corpus)
        # (no in-vocabulary word: ppl1 has nothing to average over, as SRILM says "undefined")
        counted = words - incl.num_oov
        figures["srilm_ppl"] = 10 ** (-log10 / (counted + len(corpus)))
        figures["srilm_ppl1"] = 10 ** (-log10 / counted) if counted else None
    if args.json:
        print(json.dumps({k: json_float(v) for k, v in figures.items()}, allow_nan=False))
        return 0
    print(f"Perplexity including OOVs:\t{figures['perplexity_including_oovs']!r}")
    print(f"Perplexity excluding OOVs:\t{figures['perplexity_excluding_oovs']!r}")
    print(f"OOVs:\t{figures['oovs']}")
    print(f"Tokens:\t{figures['tokens']}")
    if args.srilm:
        print(f"SRILM ppl:\t{figures['srilm_ppl']!r}")
        ppl1 = figures["srilm_ppl1"]
        print(f"SRILM ppl1:\t{'undefined' if ppl1 is None else repr(ppl1)}")
    return 0


def _score(args: argparse.Namespace) -> int:
    """Per-sentence (default) or per-token scores as TSV or JSON lines; per document with
    ``--documents``. A text of no sentence has no line of scores: none is written, with a note
    saying why (as ``--documents`` writes no record for an input of none), not an error."""
    if args.documents:
        return _score_documents(args)
    if args.output or args.normalize or args.sp_model or args.whole_lines:
        raise InvalidArgumentError(
            "--output, --normalize, --sp-model and --whole-lines go with --documents"
        )
    model, corpus = _model_and_text(args)
    if not len(corpus):
        _note(args, f"{_holds_none(args.text, NO_SENTENCE)}: nothing to score")
        return 0
    with _step("scoring", args.quiet) as progress:
        result = model.evaluate(
            corpus, oov="unk", token_logprobs=args.tokens, progress=progress or False
        )
    divisor = log_base_divisor(args.base)
    out = sys.stdout
    if not args.tokens:
        lengths = corpus.sentence_lengths()
        for i, (lp, n) in enumerate(zip(result.sentence_log_probs, lengths, strict=True)):
            score = format_score(float(lp / divisor))
            if args.format == "jsonl":
                row = {"sentence": i, "score": json_float(score), "words": int(n)}
                out.write(json.dumps(row, allow_nan=False) + "\n")
            else:
                out.write(f"{i}\t{score!r}\t{int(n)}\n")
        return 0
    scores = result.token_logprobs / divisor
    position = 0
    extra = 1 if model.bos_eos else 0
    for i, sentence in enumerate(corpus):
        words = [*sentence, "</s>"] if extra else sentence
        matched = model.full_scores(sentence)
        for j, word in enumerate(words):
            score = format_score(float(scores[position + j]))
            length, oov = int(matched.ngram_length[j]), bool(matched.oov[j])
            if args.format == "jsonl":
                row = {"sentence": i, "position": j, "token": word, "score": json_float(score)}
                row |= {"ngram_length": length, "oov": oov}
                out.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
            else:
                out.write(f"{i}\t{j}\t{word}\t{score!r}\t{length}\t{int(oov)}\n")
        position += len(words)
    return 0


#: Records scored together by `score --documents` (one Rust call each).
DOCUMENT_BATCH = 10_000


def _score_documents(args: argparse.Namespace) -> int:
    """``score --documents``: each JSON line of the input written back with its document
    perplexity (CCNet's, see `fastppl.documents.perplexity`) in ``--perplexity-field``."""
    from fastppl.documents import _sentencepiece, perplexity

    if args.tokens:
        raise InvalidArgumentError("--tokens and --documents do not go together")
    if args.perplexity_field == args.text_field:
        raise InvalidArgumentError(
            f"--perplexity-field {args.perplexity_field!r} is the field of the text "
            "(--text-field): the perplexity would replace each document's text; name another "
            "field"
        )
    for name, given in (("the model", args.model), ("the input", args.text)):
        if args.output is not None and same_file(given, args.output):
            raise InvalidArgumentError(
                f"the output {args.output!r} is {name} {given!r}: refusing to overwrite it "
                "(give another output path)"
            )
    source = args.text if args.text not in (None, "-") else None
    if source is None and sys.stdin.isatty():
        raise InvalidArgumentError(
            "fastppl score --documents: reading JSON lines from standard input, which is a "
            "terminal; give a file or pipe them in"
        )
    model = _load_model(args)
    sp = _sentencepiece(args.sp_model) if args.sp_model else None
    path, field = source or "/dev/stdin", args.text_field
    scored = False
    with _text_output(args.output) as out:
        for records, numbers in _json_batches(path, field, args.encoding):
            scored = True
            texts = [record[field] for record in records]
            try:
                scores = perplexity(
                    model,
                    texts,
                    normalize=args.normalize,
                    sp_model=sp,
                    whole_lines=args.whole_lines,
                )
            except InvalidArgumentError as e:
                raise _record_error(e, path, numbers, field) from None
            for record, score in zip(records, scores.tolist(), strict=True):
                record[args.perplexity_field] = json_float(score)
                out.write(_json_line(record))
    if not scored:
        _note(args, f"{_holds_none(source, 'JSON record')}: nothing to score")
    return 0


def _record_error(
    error: InvalidArgumentError, path: str, numbers: list[int], field: str
) -> InvalidArgumentError:
    """`documents.perplexity`'s error about a document of a batch (its ``index``, the rest of
    its message in its ``reason``: ``documents[3], line 2, holds ...``) naming its line of the
    input and its field instead; any other error as it was.

    >>> error = InvalidArgumentError("documents[1], line 2, holds <s>", 1, ", line 2, holds <s>")
    >>> _record_error(error, "d", [4, 9], "t")
    InvalidArgumentError("d:9: field 't', line 2, holds <s>")
    """
    if error.index is None or error.reason is None or error.index >= len(numbers):
        return error
    return InvalidArgumentError(f"{path}:{numbers[error.index]}: field {field!r}{error.reason}")


def _json_line(record: dict) -> str:
    """`record` as one JSON line, its text as is (UTF-8); with its non-ASCII characters escaped
    when it holds a lone surrogate (the escape "\\ud800" that JSON allows, which UTF-8 cannot
    encode), as the input may, in a field other than the text.

    >>> _json_line({"a": "é", "b": "\\ud800"})
    '{"a": "\\\\u00e9", "b": "\\\\ud800"}\\n'
    """
    line = json.dumps(record, ensure_ascii=False) + "\n"
    if not line.isascii():
        try:
            line.encode()
        except UnicodeEncodeError:
            return json.dumps(record) + "\n"
    return line


def _json_batches(path: str, field: str, encoding: str) -> Iterator[tuple[list[dict], list[int]]]:
    """The JSON objects of the lines of `path` (blank lines skipped), `DOCUMENT_BATCH` at a
    time, with their line numbers; each must hold a string in `field`."""
    from fastppl.text import iter_text

    batch: list[dict] = []
    numbers: list[int] = []
    number = 0
    for chunk in iter_text(path, encoding=encoding):
        # lines end at "\n" only (JSON Lines): U+2028, U+2029 and U+0085, which str.splitlines
        # also splits at, may stand unescaped inside a JSON string (as this command writes them)
        lines = chunk.split("\n")
        if chunk.endswith("\n"):
            lines.pop()
        for line in lines:
            number += 1
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidArgumentError(f"{path}:{number}: not valid JSON ({e})") from None
            except RecursionError:  # arrays or objects nested thousands deep
                raise InvalidArgumentError(
                    f"{path}:{number}: JSON nested too deeply for Python's json module"
                ) from None
            if not isinstance(record, dict):
                raise InvalidArgumentError(f"{path}:{number}: not a JSON object")
            if field not in record:
                raise InvalidArgumentError(
                    f"{path}:{number}: no field {field!r} (name the text's field with --text-field)"
                )
            if not isinstance(record[field], str):
                kind = type(record[field]).__name__
                raise InvalidArgumentError(f"{path}:{number}: field {field!r} is {kind}, not text")
            batch.append(record)
            numbers.append(number)
            if len(batch) == DOCUMENT_BATCH:
                yield batch, numbers
                batch, numbers = [], []
    if batch:
        yield batch, numbers


@contextlib.contextmanager
def _text_output(path: str | None) -> Iterator[Any]:
    """Standard output, or a text file that appears whole at `path` when the block ends without
    an error (written beside it, then renamed) and not at all otherwise; a device or named pipe
    (`_is_stream`) is written into."""
    if path is None or path == "-":
        yield sys.stdout
        return
    if _is_stream(path):  # written into: a rename would replace the device or pipe
        with open(path, "w", encoding="utf-8") as out:
            yield out
        return
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    try:
        fd, partial = tempfile.mkstemp(
            dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".partial"
        )
    except OSError as e:  # named after the output, not the temporary file beside it
        raise OSError(e.errno, e.strerror, path) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0o600 -> what a new file would get
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _umask() -> int:
    """The process's umask (read by setting it, then setting it back).

    >>> 0 <= _umask() <= 0o777
    True
    """
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
        f"  train: {len(train_c):,} sentences, {tokens_with_eos(train_c):,} tokens; "
        f"test (every {args.test_every}th sentence): {len(test_c):,} sentences, "
        f"{tokens_with_eos(test_c):,} tokens (with </s>); tokenized in {tokenize_s:.2f} s"
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
        prog="fastppl",
        description="Exact and fast perplexity of n-gram language models.",
        epilog=f"Text: files or standard input ('-'), plain or .gz/.xz/.bz2; {TOKENS_HELP}.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser(
        "train",
        help="fit a model on a text and write it (ARPA or binary)",
        description="Fit a model on a text and write it (ARPA or binary).",
        epilog=f"The summary line's {TOKENS_HELP}.",
    )
    train.add_argument("text", nargs="?", help="training text (default: standard input)")
    train.add_argument(
        "output",
        help="model file to write: ARPA (.gz/.xz/.bz2 compress it) or, for names ending in "
        ".fppl/.fastppl, fastppl's binary format; '-': standard output",
    )
    train.add_argument(
        "--format",
        choices=("arpa", "binary"),
        help="output format (default: binary for .fppl/.fastppl, else ARPA); binary is "
        "NGramModel.save's memory-mapped format, which eval and score load fastest, never "
        "compressed (a .gz/.xz/.bz2/.zst... name is refused)",
    )
    train.add_argument(
        "-o", "--order", type=int, default=3, help="n-gram order (default 3), as lmplz -o"
    )
    train.add_argument(
        "--smoothing",
        default="modified_kneser_ney",
        choices=SMOOTHINGS,
        help="the estimator (default: modified_kneser_ney, as lmplz); ARPA output needs one of "
        f"{', '.join(ARPA_SMOOTHINGS)}, the others are written with --format binary",
    )
    train.add_argument(
        "--discount", type=float, help="D of kneser_ney and absolute_discounting (default 0.75)"
    )
    train.add_argument(
        "--discount-fallback",
        action="store_true",
        help="as lmplz --discount_fallback: D1=0.5, D2=1, D3+=1.5 when the estimate fails",
    )
    train.add_argument(
        "-S",
        "--memory",
        help="estimate within this memory (e.g. 4G, 500M, 80%%) with the counts sorted on disk, "
        "as lmplz -S; default: all counts in memory (fastest)",
    )
    train.add_argument(
        "-T",
        "--temp-dir",
        help="directory for the sorted runs of --memory, as lmplz -T (default: the system's)",
    )
    train.add_argument(
        "--prune",
        type=_prune_thresholds,
        metavar="N [N ...]",
        help="as lmplz --prune: per order from unigrams up, drop n-grams seen at most N times "
        "(their mass goes to the backoff weights); e.g. --prune 0 1 (or 0,1) drops singletons "
        "of every order above 1. Non-decreasing, the first 0, the last repeated for higher "
        "orders; the integers right after --prune are its thresholds",
    )
    train.add_argument(
        "--min-count",
        type=int,
        default=1,
        metavar="N",
        help="words seen fewer than N times become <unk> before counting (default 1: none; "
        "lmplz has no such cutoff)",
    )
    train.add_argument(
        "--limit-vocab-file",
        metavar="PATH",
        help="words not in PATH (whitespace-separated) become <unk> before counting (lmplz's "
        "--limit_vocab_file instead prunes the n-grams holding them)",
    )
    train.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="estimate with Ray tasks (extra fastppl[ray]) on the cluster at ADDRESS (default: "
        "RAY_ADDRESS, a running local cluster, or a new one); TEXT is then a directory or a "
        "quoted glob of files every worker can read, -S the memory of each task and -T the "
        "job directory, which the workers must share; the ARPA file is the same as without",
    )
    train.add_argument(
        "--partitions", type=int, help="with --ray: n-gram partitions (default: one per file)"
    )
    _add_text_options(train)
    train.set_defaults(run=_train)

    evaluate = sub.add_parser(
        "eval",
        help="perplexity of a text (like KenLM query -v summary)",
        description="Perplexity of a text, including and excluding OOVs (like KenLM's query).",
        epilog=f"Tokens: {TOKENS_HELP}; OOVs are counted among them.",
    )
    evaluate.add_argument(
        "model",
        help=MODEL_HELP,
    )
    evaluate.add_argument("text", nargs="?", help="text to score (default: standard input)")
    evaluate.add_argument(
        "--json",
        action="store_true",
        help="print the figures as JSON (an infinite one, of a text holding a token of "
        'probability 0, as the string "Infinity")',
    )
    evaluate.add_argument("--srilm", action="store_true", help="also SRILM's ppl and ppl1")
    _add_text_options(evaluate)
    evaluate.set_defaults(run=_eval)

    score = sub.add_parser(
        "score",
        help="per-sentence or per-token scores",
        description="Per-sentence (sentence, score, tokens) or per-token (--tokens) log scores.",
        epilog=f"Scores are rounded to {SCORE_DIGITS} significant digits and printed in their "
        f"shortest form (float64 noise of the base conversion dropped); {TOKENS_HELP}.",
    )
    score.add_argument(
        "model",
        help=MODEL_HELP,
    )
    score.add_argument("text", nargs="?", help="text to score (default: standard input)")
    score.add_argument(
        "--tokens",
        action="store_true",
        help="one line per token, </s> included: sentence, position, token, score, length of the "
        "longest matched n-gram (KenLM's ngram_length), 1 if out of vocabulary else 0",
    )
    score.add_argument(
        "--format",
        choices=("tsv", "jsonl"),
        default="tsv",
        help="tsv: tab-separated columns (default); jsonl: one JSON object a line (a score of "
        'probability 0 as the string "-Infinity")',
    )
    score.add_argument(
        "--base", choices=("10", "e", "2"), default="10", help="log base (default 10, as KenLM)"
    )
    documents = score.add_argument_group(
        "documents",
        "CCNet-style document perplexity over JSON lines: each document is cut into lines, "
        "each scored with <s> and </s>; perplexity = 10 ** (-sum log10 p / sum(words + 1))",
    )
    documents.add_argument(
        "--documents",
        action="store_true",
        help="read JSON lines (one document each) and write each back with its perplexity",
    )
    documents.add_argument(
        "--text-field", default="text", help="the field holding the text (default: text)"
    )
    documents.add_argument(
        "--perplexity-field",
        default="perplexity",
        help="the field the perplexity is written to (default: perplexity; not --text-field)",
    )
    documents.add_argument(
        "--normalize",
        action="store_true",
        help="normalize each line as CCNet does (lowercase, no accents, digits to 0, Unicode "
        "punctuation to ASCII, no control characters)",
    )
    documents.add_argument(
        "--sp-model", metavar="PATH", help="cut lines into SentencePiece pieces with this model"
    )
    documents.add_argument(
        "--whole-lines",
        action="store_true",
        help="give SentencePiece each line whole, as CCNet does: its pieces exactly, slower "
        "(default: each distinct word cut once; see fastppl.documents.perplexity)",
    )
    documents.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="write the records to PATH (complete or not at all) instead of standard output",
    )
    _add_text_options(score)
    score.set_defaults(run=_score)

    demo = sub.add_parser(
        "demo",
        help="train orders 1-5 on the bundled corpus, print perplexities",
        description="Fit orders 1..N on the bundled Machado de Assis corpus and print held-out "
        f"perplexities; {TOKENS_HELP}.",
    )
    demo.add_argument(
        "--max-order",
        type=_int_at_least(1, "the highest order fitted"),
        default=5,
        help="fit orders 1 to this one (default 5)",
    )
    demo.add_argument(
        "--smoothing",
        default="modified_kneser_ney",
        choices=DEMO_SMOOTHINGS,
        help="the estimator (default: modified_kneser_ney)",
    )
    demo.add_argument(
        "--tokenizer",
        choices=("nltk", "whitespace"),
        default="nltk",
        help="how the raw novels are tokenized (default: nltk, as the Python API)",
    )
    demo.add_argument(
        "--test-every",
        type=_int_at_least(2, "one sentence in N"),
        default=10,
        help="every Nth sentence is held out (N >= 2)",
    )
    demo.set_defaults(run=_demo)
    return parser


class Terminated(BaseException):
    """Raised by the CLI's SIGTERM handler, so that SIGTERM stops a command the way Ctrl-C does
    (the Rust call in progress is cancelled within a fraction of a second, its output and
    temporary files are removed)."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fastppl`` console script.

    Exit status: 0, 1 on an error (one line ``fastppl: error: ...`` on stderr), 2 on a usage
    error, 130 on Ctrl-C and 143 on SIGTERM (one line ``fastppl: interrupted`` or
    ``fastppl: terminated``; the output being written is left as it was).
    """
    args = build_parser().parse_args(_join_prune_values(sys.argv[1:] if argv is None else argv))
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (an embedding program's): leave signals alone
        previous = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", FastpplWarning)
            warnings.showwarning = _warning_line()
            return args.run(args)
    except BrokenPipeError:  # the reader went away (`| head`): not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stdout must stay open until exit
        return 0
    except (FastpplError, OSError) as e:
        _last_line(f"fastppl: error: {_message(e)}")
        return 1
    except KeyboardInterrupt:
        _last_line("fastppl: interrupted")
        return 128 + signal.SIGINT
    except Terminated:
        _last_line("fastppl: terminated")
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _warning_line() -> Callable[..., None]:
    """A `warnings.showwarning` that prints each distinct warning once, as one line
    ``fastppl: warning: ...`` on stderr (not Python's file, line number and source line: the
    same warning, raised by two calls, printed twice with two lines of fastppl's code)."""
    shown: set[str] = set()

    def show(message: Warning | str, *args: object, **kwargs: object) -> None:
        text = str(message)
        if text not in shown:
            shown.add(text)
            _last_line(f"fastppl: warning: {text}")

    return show


def _last_line(text: str) -> None:
    """Prints a command's last line on stderr; on a terminal, first clears the line, where a
    progress bar whose drawing the signal cut short may still stand."""
    print(("\r\x1b[K" if sys.stderr.isatty() else "") + text, file=sys.stderr)


#: The Python API's words in its messages for the options of the command line's reading, as the
#: command line names them: the keyword starting a message (``encoding='x' is not a known
#: codec``) is the option the user typed, and the hint of a decode error names ``errors=``,
#: which the command line does not take.
CLI_WORDING = (
    (re.compile(r"^(encoding|language)="), r"--\1 "),
    (
        re.compile(r"; pass errors='replace' or errors='ignore' to read it anyway$"),
        "; give its encoding with --encoding",
    ),
)


def _message(error: Exception) -> str:
    """One line for an error: an OS error as "reason: 'file'" (no "[Errno 2]"; the reason alone
    when it names the file already, as fastppl's own messages do), else its text, in the
    command line's words (`CLI_WORDING`).

    >>> _message(InvalidArgumentError("encoding='utf-9' is not a known codec"))
    "--encoding 'utf-9' is not a known codec"
    """
    if isinstance(error, OSError) and error.strerror and error.filename:
        name = repr(str(error.filename))
        reason = re.sub(r" \(os error \d+\)$", "", error.strerror)  # Rust's io::Error text
        return reason if name in reason else f"{reason}: {name}"
    text = str(error)
    for api, cli in CLI_WORDING:
        text = api.sub(cli, text)
    return text


def _version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fastppl")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "unknown (not installed)"


if __name__ == "__main__":
    sys.exit(main())
