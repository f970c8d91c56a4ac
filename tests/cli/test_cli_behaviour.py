"""The command line behaves as KenLM and Python users expect: arguments, help, messages, numbers."""

from __future__ import annotations

import argparse
import gzip
import inspect
import io
import json
import os
import pydoc
import re
import stat
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import fastppl.errors
from fastppl import Corpus, NGramModel
from fastppl.cli import SCORE_DIGITS, build_parser, format_score, main
from helpers.shared_data import REPO_ROOT

TEXT = "a b c a b\nb c d a\na a b c d e\nc d e f\nb c a d\na b c d\n"


@pytest.fixture
def text(machado_train_head_path: Path, tmp_path: Path) -> Path:
    """300 sentences of real text, one a line (enough for modified Kneser-Ney's discounts)."""
    path = tmp_path / "corpus.txt"
    lines = machado_train_head_path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:300]), encoding="utf-8")
    return path


def test_prune_does_not_swallow_the_file_names(machado_train_head_path: Path, tmp_path: Path):
    """The README's line: fastppl train -o 5 --prune 0 1 corpus.txt m.arpa."""
    spaced, commas = tmp_path / "spaced.arpa", tmp_path / "commas.arpa"
    argv = ["train", "-o", "4", "--prune", "0", "1", str(machado_train_head_path), str(spaced)]
    assert main([*argv, "-q"]) == 0
    assert main(["train", "-o", "4", "--prune", "0,1", str(machado_train_head_path), str(commas),
                 "-q"]) == 0  # fmt: skip
    assert spaced.read_bytes() == commas.read_bytes()
    corpus = Corpus.from_file(machado_train_head_path, tokenizer="whitespace", sentences="lines")
    expected = tmp_path / "expected.arpa"
    NGramModel.fit(corpus, order=4, prune=(0, 1)).to_arpa(expected)
    assert spaced.read_bytes() == expected.read_bytes()


@pytest.mark.parametrize("values", [["0", "-1"], ["0,-1"], ["0", "-1,2"]])
def test_prune_names_a_negative_threshold(text: Path, tmp_path: Path, capsys, values):
    """A negative threshold is refused as one, not taken for the corpus's name (which made
    the model's name an unrecognized argument)."""
    out = tmp_path / "m.arpa"
    assert main(["train", "-q", "--prune", *values, str(text), str(out)]) == 1
    assert capsys.readouterr().err == (
        "fastppl: error: prune thresholds must be >= 0 and <= 2**64 - 1, got -1\n"
    )
    assert not out.exists()


def test_prune_rejects_non_integers(text: Path, tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--prune=0,x", str(text), str(tmp_path / "m.arpa")])
    assert exit_.value.code == 2
    assert "--prune takes integer thresholds" in capsys.readouterr().err


def test_skip_line_prefix_rejects_the_empty_prefix(text: Path, tmp_path: Path, capsys):
    """Every line starts with '': the empty prefix would drop them all (the Python API refuses
    it too)."""
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--skip-line-prefix", "", str(text), str(tmp_path / "m.arpa")])
    assert exit_.value.code == 2
    assert "--skip-line-prefix: must not be empty" in capsys.readouterr().err
    assert not (tmp_path / "m.arpa").exists()


def test_train_ray_refuses_the_python_engine(text: Path, tmp_path: Path, capsys):
    """`train --ray` tokenizes in its tasks, natively: --engine python is refused before Ray
    starts."""
    out = tmp_path / "m.arpa"
    assert main(["train", "--ray", "--engine", "python", str(text), str(out), "-q"]) == 1
    assert "does not take --engine" in capsys.readouterr().err
    assert not out.exists()


def test_default_tokenizer_is_announced(text: Path, tmp_path: Path, capsys):
    out = tmp_path / "m.arpa"
    assert main(["train", "-o", "2", str(text), str(out)]) == 0
    err = capsys.readouterr().err
    assert "tokens split on whitespace" in err and "tokenizer='nltk'" in err
    assert main(["train", "-o", "2", "--tokenizer", "whitespace", str(text), str(out)]) == 0
    assert "note" not in capsys.readouterr().err
    assert main(["eval", str(out), str(text), "-q"]) == 0
    assert "note" not in capsys.readouterr().err


def _all_parsers() -> list[argparse.ArgumentParser]:
    parser = build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [parser, *(p for s in subs for p in s.choices.values())]


def test_every_option_has_help():
    for parser in _all_parsers():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help != argparse.SUPPRESS, (parser.prog, action.dest)


def test_help_states_the_token_convention(capsys):
    for command in ("train", "eval", "score"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "one </s> per sentence" in " ".join(capsys.readouterr().out.split())


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"fastppl {version('fastppl')}"


def test_python_dash_m_runs_the_command():
    """``python -m fastppl`` is the ``fastppl`` command."""
    done = subprocess.run(
        [sys.executable, "-m", "fastppl", "--version"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, f"fastppl {version('fastppl')}")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["train", "corpus.txt"], "reading the corpus from standard input, which is a terminal"),
        (["eval", "MODEL"], "reading the text to score from standard input"),
        (["score", "MODEL", "-"], "reading the text to score from standard input"),
    ],
)
def test_refuses_to_read_a_terminal(argv, expected, tmp_path, monkeypatch, capsys):
    model = tmp_path / "m.arpa"
    corpus = Corpus.from_text(TEXT, tokenizer="whitespace")
    NGramModel.fit(corpus, order=2, smoothing="witten_bell").to_arpa(model)
    argv = [str(model) if a == "MODEL" else a for a in argv]
    monkeypatch.setattr("sys.stdin", _Terminal())
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert expected in err and "give a file or pipe text in" in err
    if argv[0] == "train":
        assert "'corpus.txt' is the output" in err
        assert not (tmp_path / "corpus.txt").exists()


def test_errors_name_the_command_line_flag(tmp_path, capsys):
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("a b c\n", encoding="utf-8")
    assert main(["train", "-o", "3", str(tiny), str(tmp_path / "m.arpa"), "-q"]) == 1
    assert "--discount-fallback" in capsys.readouterr().err
    assert main(["train", "-o", "3", "--discount-fallback", str(tiny), str(tmp_path / "m.arpa"),
                 "-q"]) == 0  # fmt: skip


def test_score_prints_rounded_shortest_floats(text: Path, tmp_path: Path, capsys):
    assert format_score(-3.9084055319999997) == -3.908405532
    model_path = tmp_path / "m.fppl"
    assert main(["train", "-o", "3", "--smoothing", "witten_bell", str(text), str(model_path),
                 "-q"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["score", str(model_path), str(text), "--tokens", "-q"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    model = NGramModel.load(model_path)
    corpus = Corpus.from_file(text, tokenizer="whitespace")
    exact = model.evaluate(corpus, token_logprobs=True).token_logprobs / 2.302585092994046
    assert len(rows) == len(exact)
    for (_, _, _, printed, _, _), value in zip(rows, exact, strict=True):
        digits = re.sub(r"[^0-9]", "", printed.split("e")[0]).lstrip("0")
        assert len(digits) <= SCORE_DIGITS, printed
        assert float(printed) == pytest.approx(value, rel=1e-11)
    assert main(["score", str(model_path), str(text), "--format", "jsonl", "-q"]) == 0
    scores = [json.loads(line)["score"] for line in capsys.readouterr().out.splitlines()]
    assert all(s == format_score(s) for s in scores)


def test_one_token_count_across_commands(text: Path, tmp_path: Path, capsys):
    model = tmp_path / "m.arpa"
    assert main(["train", "-o", "2", "--tokenizer", "whitespace", str(text), str(model)]) == 0
    trained = re.search(r"(\d+) tokens \(with </s>\), (\d+) sentences", capsys.readouterr().err)
    assert trained is not None
    assert main(["eval", str(model), str(text), "--json", "-q"]) == 0
    figures = json.loads(capsys.readouterr().out)
    lines = text.read_text(encoding="utf-8").splitlines()
    assert int(trained[1]) == figures["tokens"] == sum(len(line.split()) + 1 for line in lines)
    assert int(trained[2]) == figures["sentences"] == len(lines) == 300


def test_missing_temp_dir_is_an_error(text: Path, tmp_path: Path, capsys):
    missing = tmp_path / "no" / "such"
    argv = ["train", "-S", "100M", "-T", str(missing), str(text), str(tmp_path / "m.arpa")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "-T/--temp-dir" in err and "not an existing directory" in err
    assert not missing.exists()


def test_missing_model_file_is_one_clean_line(text: Path, tmp_path: Path, capsys):
    for command in ("eval", "score"):
        assert main([command, str(tmp_path / "missing.arpa"), str(text), "-q"]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "[Errno" not in err
        assert err.startswith("fastppl: error: model file not found") and "missing.arpa" in err


@pytest.mark.parametrize("missing", ["corpus", "vocabulary"])
def test_missing_input_file_is_named_once(missing: str, text: Path, tmp_path: Path, capsys):
    """fastppl's own not-found messages name the file already: it is not appended again."""
    absent = tmp_path / "absent.txt"
    corpus, vocab = (absent, text) if missing == "corpus" else (text, absent)
    out = tmp_path / "m.arpa"
    assert main(["train", "--limit-vocab-file", str(vocab), str(corpus), str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert err == f"fastppl: error: {missing} file not found: {str(absent)!r}\n"


def test_output_folder_missing_is_one_clean_line(text: Path, tmp_path: Path, capsys):
    out = tmp_path / "no-such-dir" / "m.arpa"
    assert main(["train", "-o", "2", "--tokenizer", "whitespace", str(text), str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[Errno" not in err and "no-such-dir" in err


@pytest.mark.parametrize("fmt", ["m.arpa", "m.fppl"])
def test_output_that_is_a_folder_is_named_as_python_names_it(
    text: Path, tmp_path: Path, capsys, fmt: str
):
    """The Rust writer's "Is a directory (os error 21)" loses its "(os error 21)", as
    Python's OSError loses its "[Errno 21]"."""
    folder = tmp_path / fmt
    folder.mkdir()
    assert main(["train", "-q", "-o", "2", str(text), str(folder)]) == 1
    assert capsys.readouterr().err == f"fastppl: error: Is a directory: {str(folder)!r}\n"


@pytest.mark.parametrize(
    ("output", "options", "message"),
    [
        ("folder", [], "Is a directory: '{}'"),
        ("folder", ["-S", "64M"], "Is a directory: '{}'"),
        ("folder.fppl", [], "Is a directory: '{}'"),
        ("missing/m.arpa", [], "No such file or directory: '{}'"),
        ("missing/m.arpa", ["-S", "64M"], "No such file or directory: '{}'"),
        ("missing/m.fppl", [], "No such file or directory: '{}'"),
        ("m.arpa.zst", [], "{}: fastppl cannot write .zst compression"),
        ("m.lz4", ["-S", "64M"], "{}: fastppl cannot write .lz4 compression"),
        ("m.fppl", ["-S", "64M"], "--memory writes ARPA (the model is never whole in memory)"),
        ("m.gz", ["--format", "binary"], "{}: fastppl's binary models are not compressed"),
        ("m.fppl.zst", ["--format", "binary"], "{}: fastppl's binary models are not compressed"),
    ],
)
def test_train_checks_its_output_before_reading_the_corpus(
    output: str, options: list[str], message: str, tmp_path: Path, capsys
):
    """The output's error came once the corpus was read and counted (minutes for a large one;
    a .zst name was even written as plain text): the corpus here does not exist, and the
    error is still the output's."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder.fppl").mkdir()
    target = str(tmp_path / output)
    argv = ["train", "-q", "-o", "2", *options, str(tmp_path / "absent.txt"), target]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("fastppl: error: " + message.format(target)) and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "folder.fppl"]


def test_a_model_compressed_with_zstd_is_named_so(text: Path, tmp_path: Path, capsys):
    """It was parsed as plain ARPA text: "line 1: not valid UTF-8 (byte 2 of the line)"."""
    model = tmp_path / "m.arpa.zst"
    model.write_bytes(bytes.fromhex("28b52ffd0458110000780aaefde922"))  # zstd's frame of "x\n"
    assert main(["eval", "-q", str(model), str(text)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"fastppl: error: {model}: compressed with zstd, which fastppl does not")
    assert "(zstd -d)" in err and err.count("\n") == 1


#: "x\n" compressed by the zstd command line (one frame).
ZSTD_X = bytes.fromhex("28b52ffd0458110000780aaefde922")

#: What every command says of a text compressed with zstd, after its name.
ZSTD_TEXT = (
    " is compressed with zstd, which fastppl does not read (it reads plain text, and gzip, xz "
    "and bzip2 files): decompress it first (zstd -d)\n"
)


@pytest.mark.parametrize("command", ["train", "eval", "score", "score --documents"])
def test_a_text_compressed_with_zstd_is_named_so(command: str, tmp_path: Path, capsys):
    """It was decoded as text: "'docs.jsonl.zst' is not valid utf-8: invalid start byte at
    byte offset 1 (line 1); give its encoding with --encoding"."""
    source = tmp_path / "docs.jsonl.zst"
    source.write_bytes(ZSTD_X)
    model = tmp_path / "m.arpa"
    corpus = Corpus.from_text(TEXT, tokenizer="whitespace", sentences="lines")
    NGramModel.fit(corpus, order=2, smoothing="witten_bell").to_arpa(model)
    name, *options = command.split()
    inputs = (
        [str(source), str(tmp_path / "out.arpa")] if name == "train" else [str(model), str(source)]
    )
    assert main([name, "-q", *options, *inputs]) == 1
    assert capsys.readouterr().err == f"fastppl: error: {str(source)!r}" + ZSTD_TEXT
    assert not (tmp_path / "out.arpa").exists()


def test_standard_input_compressed_with_zstd_is_named_so(tmp_path: Path):
    """Standard input (a pipe) is peeked as a file is."""
    model = tmp_path / "m.arpa"
    corpus = Corpus.from_text(TEXT, tokenizer="whitespace", sentences="lines")
    NGramModel.fit(corpus, order=2, smoothing="witten_bell").to_arpa(model)
    done = subprocess.run(
        [sys.executable, "-m", "fastppl", "eval", "-q", str(model)],
        input=ZSTD_X,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.decode() == "fastppl: error: '/dev/stdin'" + ZSTD_TEXT


def test_standard_input_and_a_misnamed_file_compressed_with_gzip_are_read(tmp_path: Path):
    """Text was decompressed by its name's extension: gzip on standard input, or in a file named
    .txt, was decoded as text ("... is not valid utf-8"). It is told by its first bytes."""
    model = tmp_path / "m.arpa"
    corpus = Corpus.from_text(TEXT, tokenizer="whitespace", sentences="lines")
    NGramModel.fit(corpus, order=2, smoothing="witten_bell").to_arpa(model)
    plain = tmp_path / "plain.txt"
    plain.write_text(TEXT)
    misnamed = tmp_path / "test.txt"
    misnamed.write_bytes(gzip.compress(TEXT.encode()))
    command = [sys.executable, "-m", "fastppl", "eval", "-q", "--json", str(model)]
    runs = [
        subprocess.run([*command, *text], input=data, capture_output=True, timeout=120, check=True)
        for text, data in [
            ([str(plain)], None),
            ([], misnamed.read_bytes()),
            ([str(misnamed)], None),
        ]
    ]
    assert json.loads(runs[0].stdout)["tokens"] == len(TEXT.split()) + TEXT.count("\n")  # (</s>)
    assert runs[1].stdout == runs[2].stdout == runs[0].stdout


#: What the commands say of a text of no sentence, after its name.
NO_SENTENCE = "holds no sentence (empty, or every line blank or skipped)"


@pytest.mark.parametrize(
    ("content", "options"),
    [
        ("", []),
        ("", ["--tokens", "--format", "jsonl"]),
        ("\n  \n", ["--base", "e"]),
        ("# a comment\n", ["--skip-line-prefix", "#"]),
    ],
)
def test_score_of_a_text_of_no_sentence_writes_nothing_and_says_so(
    content: str, options: list[str], tiny_model: Path, tmp_path: Path, capsys
):
    """It exited 1 with "nothing to score: the corpus has no (in-vocabulary) token", naming no
    file. score writes a line per sentence (it prints no perplexity, which no token leaves
    undefined): no sentence is no line, as --documents writes no record for an input of none;
    a note says why, unless --quiet."""
    text = tmp_path / "t.txt"
    text.write_text(content, encoding="utf-8")
    argv = ["score", "--tokenizer", "whitespace", *options, str(tiny_model), str(text)]
    assert main(argv) == 0
    assert capsys.readouterr() == (
        "",
        f"fastppl: note: {str(text)!r} {NO_SENTENCE}: nothing to score\n",
    )
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr() == ("", "")


def test_score_of_an_empty_standard_input_says_so(tiny_model: Path):
    done = subprocess.run(
        [sys.executable, "-m", "fastppl", "score", "--tokenizer", "whitespace", str(tiny_model)],
        input="",
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == f"fastppl: note: standard input {NO_SENTENCE}: nothing to score\n"


@pytest.mark.parametrize(
    ("command", "consequence"),
    [("eval", "there is no perplexity to compute"), ("train", "there is no model to fit")],
)
def test_eval_and_train_of_a_text_of_no_sentence_name_it(
    command: str, consequence: str, tiny_model: Path, tmp_path: Path, capsys
):
    """The messages named neither the file nor what it lacks: "nothing to score: the corpus has
    no (in-vocabulary) token", "cannot fit a model on a corpus with no token"."""
    text = tmp_path / "empty.txt"
    text.write_text("", encoding="utf-8")
    files = (
        [str(tiny_model), str(text)] if command == "eval" else [str(text), str(tmp_path / "m.arpa")]
    )
    assert main([command, "-q", *files]) == 1
    assert (
        capsys.readouterr().err == f"fastppl: error: {str(text)!r} {NO_SENTENCE}: {consequence}\n"
    )
    assert not (tmp_path / "m.arpa").exists()


def test_docstrings_have_no_raw_control_characters():
    text = pydoc.render_doc(Corpus.from_file, renderer=pydoc.plaintext)
    assert "\r" not in text and "\\r\\n" in text


def test_article_of_additive_models(tmp_path: Path):
    model = NGramModel.fit(Corpus.from_text(TEXT, tokenizer="whitespace"), order=2,
                           smoothing="laplace")  # fmt: skip
    with pytest.raises(fastppl.errors.FastpplError, match="an additive model"):
        model.to_arpa(tmp_path / "m.arpa")


def test_readme_lists_every_exception():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    errors = readme[readme.index("## Errors") :]
    for name, cls in inspect.getmembers(fastppl.errors, inspect.isclass):
        if issubclass(cls, fastppl.errors.FastpplError) and cls is not fastppl.errors.FastpplError:
            assert f"`{name}`" in errors, name


# ---- issue 10, item 6: every hostile case is one line, never a traceback -----------------
@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    corpus = Corpus.from_sentences([["a", "b", "c"], ["b", "c", "a"]])
    path = tmp_path / "tiny.arpa"
    NGramModel.fit(corpus, order=2, smoothing="kneser_ney").to_arpa(path)
    return path


def test_srilm_ppl1_of_an_all_oov_text_is_undefined(tiny_model, tmp_path, capsys):
    text = tmp_path / "oov.txt"
    text.write_text("zz yy\n")
    assert main(["eval", "-q", "--srilm", str(tiny_model), str(text)]) == 0
    out = capsys.readouterr().out
    assert "SRILM ppl1:\tundefined" in out
    assert main(["eval", "-q", "--srilm", "--json", str(tiny_model), str(text)]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["srilm_ppl1"] is None
    assert figures["srilm_ppl"] > 0


@pytest.mark.parametrize("value", ["0", "1", "-3", "ten"])
def test_demo_test_every_must_be_at_least_two(value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--test-every", value])
    assert exit_info.value.code == 2
    assert "--test-every" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "must be at least 1 (the highest order fitted), got 0"),
        ("-1", "must be at least 1 (the highest order fitted), got -1"),
        ("two", "not an integer: 'two'"),
    ],
)
def test_demo_max_order_must_be_at_least_one(value, message, capsys):
    """--max-order 0 printed an empty table and exited 0."""
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--max-order", value])
    assert exit_info.value.code == 2
    assert f"argument --max-order: {message}" in capsys.readouterr().err


def test_demo_does_not_offer_stupid_backoff(capsys):
    """Its scores are no probabilities: the demo's evaluation always failed."""
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--smoothing", "stupid_backoff"])
    assert exit_info.value.code == 2
    assert "argument --smoothing: invalid choice: 'stupid_backoff'" in capsys.readouterr().err


def test_wrong_encoding_is_one_line(tiny_model, text: Path, capsys):
    assert main(["eval", "-q", "--encoding", "utf-16", str(tiny_model), str(text)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fastppl: error: ") and "utf-16" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("command", "options", "message"),
    [
        ("eval", ["--encoding", "utf-9"], "--encoding 'utf-9' is not a known codec"),
        ("train", ["--encoding", "utf-9"], "--encoding 'utf-9' is not a known codec"),
        ("score", ["--encoding", "rot13"], "--encoding 'rot13' is not a text encoding"),
        (
            "score",
            ["--documents", "--encoding", "utf-9"],
            "--encoding 'utf-9' is not a known codec",
        ),
        (
            "eval",
            ["--sentences", "punkt", "--language", "../english"],
            "--language '../english' is not a Punkt language name",
        ),
        (
            "train",
            ["--tokenizer", "nltk", "--language", ""],
            "--language '' is not a Punkt language name",
        ),
    ],
)
def test_bad_reading_options_are_named_as_typed(
    command: str, options: list[str], message: str, tiny_model: Path, tmp_path: Path, capsys
):
    """The messages named them by the Python keyword, encoding='utf-9', language='../english',
    and rot13 (no text encoding) ended in a traceback."""
    text = tmp_path / "t.txt"
    text.write_text('{"text": "a b"}\n', encoding="utf-8")
    files = (
        [str(text), str(tmp_path / "m.arpa")]
        if command == "train"
        else [str(tiny_model), str(text)]
    )
    assert main([command, "-q", *options, *files]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"fastppl: error: {message}") and err.count("\n") == 1
    assert "encoding=" not in err and "language=" not in err


def test_undecodable_text_names_the_option_to_give(tiny_model: Path, tmp_path: Path, capsys):
    """The hint was the Python keyword errors='replace', which the command line does not take."""
    text = tmp_path / "latin1.txt"
    text.write_bytes("a ação\n".encode("latin-1"))
    assert main(["eval", "-q", str(tiny_model), str(text)]) == 1
    err = capsys.readouterr().err
    assert "is not valid utf-8" in err and err.endswith("; give its encoding with --encoding\n")
    assert "errors=" not in err
    assert main(["eval", "-q", "--encoding", "latin-1", str(tiny_model), str(text)]) == 0


@pytest.mark.parametrize("memory", ["1T", "99999999999999T", "1000000G"])
def test_memory_beyond_the_machine_is_refused(memory, text: Path, tmp_path: Path, capsys):
    out = tmp_path / "m.arpa"
    assert main(["train", "-q", "-o", "2", "-S", memory, str(text), str(out)]) == 1
    err = capsys.readouterr().err
    assert "physical memory" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_an_unallocatable_sort_buffer_is_an_error_not_an_abort(tmp_path: Path):
    from fastppl import _core

    corpus = Corpus.from_sentences([["a", "b"]] * 10)
    with pytest.raises(fastppl.errors.InvalidArgumentError, match="cannot allocate"):
        _core.train_arpa(corpus._inner, tmp_path / "m.arpa", 3, "kneser_ney", 1 << 50, tmp_path)
    assert list(tmp_path.iterdir()) == []


def _read_fifo(fifo: Path) -> subprocess.Popen:
    """A reader of the named pipe `fifo` (cat, killed by the caller when done)."""
    os.mkfifo(fifo)
    return subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)


@pytest.mark.parametrize("name", ["model.arpa", "model.arpa.gz", "model.fppl"])
def test_train_writes_into_a_named_pipe(text: Path, tmp_path: Path, name: str):
    """A named pipe (or a device: /dev/stdout, /dev/null) is written into, not replaced by a
    regular file renamed over it (as root, that replaced /dev/stdout itself)."""
    expected = tmp_path / f"expected-{name}"
    assert main(["train", "-q", "-o", "2", str(text), str(expected)]) == 0
    fifo = tmp_path / name
    reader = _read_fifo(fifo)
    try:
        assert main(["train", "-q", "-o", "2", str(text), str(fifo)]) == 0
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        written, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
    if name.endswith(".gz"):  # the same text (gzip headers hold no name when written by path)
        written, expected_bytes = gzip.decompress(written), gzip.decompress(expected.read_bytes())
    else:
        expected_bytes = expected.read_bytes()
    assert written == expected_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([text.name, expected.name, name])


def test_train_writes_arpa_to_standard_output_for_dash(text: Path, tmp_path: Path):
    expected = tmp_path / "expected.arpa"
    assert main(["train", "-q", "-o", "2", str(text), str(expected)]) == 0
    run = subprocess.run(
        [sys.executable, "-m", "fastppl", "train", "-q", "-o", "2", str(text), "-"],
        capture_output=True,
        cwd=tmp_path,
        check=True,
    )
    assert run.stdout == expected.read_bytes() and run.stderr == b""
    assert not (tmp_path / "-").exists()
    piped = subprocess.run(
        [sys.executable, "-m", "fastppl", "train", "-q", "-o", "2", "-"],
        input=text.read_bytes(),
        capture_output=True,
        cwd=tmp_path,
        check=True,
    )
    assert piped.stdout == expected.read_bytes()


def test_score_documents_writes_into_a_named_pipe(tiny_model: Path, tmp_path: Path):
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a b"}\n', "utf-8")
    fifo = tmp_path / "out.jsonl"
    reader = _read_fifo(fifo)
    try:
        argv = ["score", str(tiny_model), str(source), "--documents", "-q", "-o", str(fifo)]
        assert main(argv) == 0
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        written, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert list(json.loads(written)) == ["text", "perplexity"]


def test_train_help_says_dash_is_standard_output(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "'-': standard output" in " ".join(capsys.readouterr().out.split())
