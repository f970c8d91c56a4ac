"""Command-line options: ``--tokenizer kenlm``, vocabulary limits, model formats."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fastppl import Corpus, NGramModel
from fastppl.cli import main
from fastppl.errors import InvalidArgumentError

BLANK_TEXT = "a b c\n\nb a\r\n \t\nc\u00a0d a\n\n"


def _json_eval(capsys, *argv: str) -> dict:
    assert main(["eval", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_tokenizer_kenlm_train_eval_score(tmp_path: Path, capsys):
    text = tmp_path / "t.txt"
    text.write_bytes(BLANK_TEXT.encode())
    out = tmp_path / "m.arpa"
    assert main(["train", "-o", "2", "--smoothing", "witten_bell", "--tokenizer", "kenlm",
                 str(text), str(out), "-q"]) == 0  # fmt: skip
    model = NGramModel.from_arpa(out)
    assert "c\u00a0d" in model and "d" not in model
    assert model.logprob("</s>", ["<s>"]) > model.logprob("a", ["<s>"])  # 3 blank of 6 lines
    corpus = Corpus.from_file(text, tokenizer="kenlm")
    assert len(corpus) == 6
    figures = _json_eval(capsys, str(out), str(text), "--tokenizer", "kenlm")
    assert figures["sentences"] == 6
    assert figures["tokens"] == corpus.num_tokens + 6 == 13
    assert figures["perplexity_including_oovs"] == pytest.approx(model.perplexity(corpus))
    # the default whitespace tokenizer drops the blank lines and splits at U+00A0
    figures = _json_eval(capsys, str(out), str(text))
    assert figures["sentences"] == 3 and figures["oovs"] == 1
    assert main(["score", str(out), str(text), "--tokenizer", "kenlm"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [int(r[2]) for r in rows] == [3, 0, 2, 0, 2, 0]


def test_tokenizer_kenlm_from_stdin_keeps_carriage_returns_as_spaces(tmp_path: Path):
    out = tmp_path / "m.arpa"
    NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="witten_bell").to_arpa(
        out
    )
    proc = subprocess.run(
        [sys.executable, "-m", "fastppl.cli", "eval", str(out), "--tokenizer", "kenlm", "--json"],
        input=b"a\rb\n\n",
        capture_output=True,
        check=True,
    )
    figures = json.loads(proc.stdout)
    assert figures["sentences"] == 2 and figures["tokens"] == 4 and figures["oovs"] == 0


def test_tokenizer_kenlm_refuses_other_sentence_modes(tmp_path: Path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("a b\n")
    assert main(["train", "--tokenizer", "kenlm", "--sentences", "none", str(text),
                 str(tmp_path / "m.arpa")]) == 1  # fmt: skip
    assert "one sentence per line" in capsys.readouterr().err


# ---- vocabulary cutoff and vocabulary file ----------------------------------------------------
@pytest.fixture(scope="module")
def small_train(machado_train_head_path: Path) -> Path:
    return machado_train_head_path


def _by_hand(path: Path, keep) -> Corpus:
    lines = path.read_text(encoding="utf-8").splitlines()
    return Corpus.from_sentences([[w if keep(w) else "<unk>" for w in ln.split()] for ln in lines])


def test_min_count_maps_rare_words_to_unk(small_train: Path, tmp_path: Path):
    corpus = Corpus.from_file(small_train, tokenizer="whitespace", sentences="lines")
    counts = corpus.token_counts()
    assert "<unk>" not in counts
    limited = corpus.limit_vocab(min_count=3)
    rare = {w: n for w, n in counts.items() if n < 3}
    assert limited.token_counts()["<unk>"] == sum(rare.values())
    assert limited.num_types == corpus.num_types - len(rare)  # <unk> is not counted as a type
    assert limited.num_tokens == corpus.num_tokens and len(limited) == len(corpus)
    hand = _by_hand(small_train, lambda w: counts[w] >= 3)
    assert list(limited) == list(hand)
    fitted = NGramModel.fit(corpus, order=3, min_count=3)
    expected = NGramModel.fit(hand, order=3)
    assert fitted.vocab() == expected.vocab()
    assert fitted.vocab_size == len(counts) - len(rare) + 2  # kept words, </s>, <unk>
    assert fitted.ngram_counts == expected.ngram_counts
    assert fitted.count(["<unk>"]) == sum(rare.values())
    fitted.to_arpa(tmp_path / "a.arpa")
    expected.to_arpa(tmp_path / "b.arpa")
    assert (tmp_path / "a.arpa").read_bytes() == (tmp_path / "b.arpa").read_bytes()
    # min_count=1 changes nothing
    assert list(corpus.limit_vocab(min_count=1)) == list(corpus)


def test_vocab_file_maps_unlisted_words_to_unk(small_train: Path, tmp_path: Path):
    corpus = Corpus.from_file(small_train, tokenizer="whitespace", sentences="lines")
    counts = corpus.token_counts()
    allowed = [*sorted(counts)[::4], "never-in-the-text"]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text(" ".join(allowed[:50]) + "\n" + "\n".join(allowed[50:]) + "\n\t")
    limited = corpus.limit_vocab(vocab_file=vocab)
    assert list(limited) == list(corpus.limit_vocab(vocab=allowed))
    unlisted = sum(n for w, n in counts.items() if w not in set(allowed))
    assert limited.token_counts()["<unk>"] == unlisted
    hand = _by_hand(small_train, set(allowed).__contains__)
    assert list(limited) == list(hand)
    fitted = NGramModel.fit(corpus, order=2, vocab_file=vocab)
    assert fitted.vocab() == NGramModel.fit(hand, order=2).vocab()
    assert "never-in-the-text" not in fitted  # only words of the text are in the model
    # both limits: listed and frequent enough
    both = corpus.limit_vocab(min_count=5, vocab_file=vocab)
    keep = set(allowed)
    assert list(both) == list(_by_hand(small_train, lambda w: w in keep and counts[w] >= 5))


def test_limit_vocab_keeps_documents_and_blank_lines():
    c = Corpus.from_documents([[["a", "b", "a"]], [["c", "a"]]])
    limited = c.limit_vocab(min_count=2)
    assert limited.document_offsets().tolist() == [0, 1, 2]
    assert list(limited) == [["a", "<unk>", "a"], ["<unk>", "a"]]
    k = Corpus.from_text("a b\n\na\n", tokenizer="kenlm").limit_vocab(min_count=2)
    assert list(k) == [["a", "<unk>"], [], ["a"]]


def test_limit_vocab_bad_arguments(tmp_path: Path):
    from fastppl.errors import CorpusFileNotFoundError, InvalidArgumentError, InvalidTypeError

    c = Corpus.from_sentences([["a"]])
    with pytest.raises(InvalidArgumentError, match="min_count"):
        c.limit_vocab(min_count=0)
    with pytest.raises(InvalidArgumentError, match="min_count"):
        NGramModel.fit(c, order=1, smoothing="mle", min_count=0)
    # more than the core's unsigned 64 bits: named, not an OverflowError of the conversion
    too_many = r"min_count must be at least 1 and at most 2\*\*64 - 1, got 1180591620717411303424"
    with pytest.raises(InvalidArgumentError, match=too_many):
        c.limit_vocab(min_count=2**70)
    with pytest.raises(InvalidArgumentError, match=too_many):
        NGramModel.fit(c, order=1, smoothing="mle", min_count=2**70)
    assert list(c.limit_vocab(min_count=2**64 - 1)) == [["<unk>"]]
    with pytest.raises(InvalidTypeError):
        c.limit_vocab(min_count=True)
    with pytest.raises(InvalidTypeError):
        c.limit_vocab(vocab="a b")
    # a FileNotFoundError that says which file it is (not "corpus file"), named once
    missing = tmp_path / "missing.txt"
    not_found = f"^vocabulary file not found: {re.escape(repr(str(missing)))}$"
    with pytest.raises(CorpusFileNotFoundError, match=not_found) as error:
        c.limit_vocab(vocab_file=missing)
    assert isinstance(error.value, FileNotFoundError) and error.value.filename == str(missing)
    with pytest.raises(CorpusFileNotFoundError, match=not_found):
        NGramModel.fit(c, order=1, smoothing="mle", vocab_file=missing)


def test_cli_min_count_and_limit_vocab_file(small_train: Path, tmp_path: Path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("o a que de\n")
    out = tmp_path / "m.arpa"
    assert main(["train", "-o", "2", "--min-count", "2", "--limit-vocab-file", str(vocab),
                 "--smoothing", "witten_bell", str(small_train), str(out), "-q"]) == 0  # fmt: skip
    corpus = Corpus.from_file(small_train, tokenizer="whitespace", sentences="lines")
    api = tmp_path / "api.arpa"
    NGramModel.fit(corpus, 2, "witten_bell", min_count=2, vocab_file=vocab).to_arpa(api)
    assert out.read_bytes() == api.read_bytes()
    first_seen = [
        w for w in dict.fromkeys(t for s in corpus for t in s) if w in {"o", "a", "que", "de"}
    ]
    assert NGramModel.from_arpa(out).vocab()[3:] == first_seen  # in order of first occurrence


@pytest.mark.parametrize("which", ["corpus", "vocab"])
def test_train_refuses_to_write_over_its_inputs(
    small_train: Path, tmp_path: Path, capsys, which: str
):
    """The output may be neither the corpus nor --limit-vocab-file: both are read, then
    replaced by the model, without that check."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(small_train.read_bytes())
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("o a que de\n")
    given = {"corpus": corpus, "vocab": vocab}[which]
    name = {"corpus": "the input corpus", "vocab": "--limit-vocab-file"}[which]
    argv = ["train", "-q", "--limit-vocab-file", str(vocab), str(corpus), str(given)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"fastppl: error: the output {str(given)!r} is {name} {str(given)!r}: refusing to "
        "overwrite it (give another output path)\n"
    )
    assert corpus.read_bytes() == small_train.read_bytes()
    assert vocab.read_text() == "o a que de\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "vocab.txt"]


# ---- model formats ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "argv", "binary"),
    [
        ("m.fppl", [], True),
        ("m.FASTPPL", [], True),
        ("m.arpa", [], False),
        ("m.arpa.gz", [], False),
        ("m.bin", ["--format", "binary"], True),
        ("m.fppl", ["--format", "arpa"], False),
    ],
)
def test_train_format(small_train: Path, tmp_path: Path, capsys, name, argv, binary):
    from fastppl import _core

    out = tmp_path / name
    assert main(["train", "-o", "2", str(small_train), str(out), "-q", *argv]) == 0
    assert (out.read_bytes()[:8] == _core.BINARY_MAGIC) == binary
    model = NGramModel.load(out) if binary else NGramModel.from_arpa(out)
    assert model.order == 2
    if binary:  # the binary format keeps the estimator and the training counts
        assert model.smoothing == "modified_kneser_ney" and model.count(["o"]) > 0


def test_eval_and_score_read_binary_models(
    small_train: Path, machado_test_head_path: Path, tmp_path: Path, capsys
):
    arpa, binary = tmp_path / "m.arpa", tmp_path / "m.fppl"
    assert main(["train", "-o", "3", str(small_train), str(arpa), "-q"]) == 0
    assert main(["train", "-o", "3", str(small_train), str(binary), "-q"]) == 0
    test = machado_test_head_path
    from_arpa = _json_eval(capsys, str(arpa), str(test))
    from_binary = _json_eval(capsys, str(binary), str(test))
    # the ARPA file rounds to float32; the binary model is the fitted model itself
    for key in ("perplexity_including_oovs", "perplexity_excluding_oovs"):
        assert from_binary[key] == pytest.approx(from_arpa[key], rel=1e-6)
    assert from_binary["tokens"] == from_arpa["tokens"] and from_binary["oovs"] > 0
    corpus = Corpus.from_file(test, tokenizer="whitespace", sentences="lines")
    fitted = NGramModel.fit(Corpus.from_file(small_train, "whitespace", "lines"), order=3)
    assert from_binary["perplexity_including_oovs"] == fitted.perplexity(corpus)
    assert main(["score", str(binary), str(test), "--tokens", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == from_binary["tokens"]


def test_eval_refuses_a_file_that_is_neither(tmp_path: Path, capsys):
    bad = tmp_path / "m.fppl"
    bad.write_bytes(b"\x89FPPL\r\n\x1a" + b"\0" * 10)  # binary magic, truncated
    assert main(["eval", str(bad), str(bad)]) == 1
    assert "fastppl: error:" in capsys.readouterr().err
    bad.write_text("not a model\n")
    assert main(["eval", str(bad), str(bad)]) == 1
    assert "fastppl: error:" in capsys.readouterr().err


# ---- estimator names: one list in Python, the same in Rust ------------------------------------
def test_estimator_names_have_one_source():
    from typing import get_args

    from fastppl import _core, model
    from fastppl.cli import build_parser

    names = get_args(model.Smoothing)
    assert names == model.SMOOTHINGS and len(set(names)) == len(names)
    assert list(_core.SMOOTHINGS) == list(names) == list(model._PARAMS)
    assert set(model.ARPA_SMOOTHINGS) <= set(names)
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    choices = {
        command: next(a for a in sub[command]._actions if a.dest == "smoothing").choices
        for command in ("train", "demo")
    }
    assert tuple(choices["train"]) == names
    # demo evaluates: stupid backoff, which gives no perplexity, is not offered
    assert tuple(choices["demo"]) == tuple(n for n in names if n != "stupid_backoff")


def test_rust_parser_accepts_exactly_the_python_names(tmp_path: Path):
    from fastppl import _core, model

    corpus = Corpus.from_sentences([["a", "b", "c"], ["b", "a"], ["c", "c", "a", "b"]])
    for name in model.SMOOTHINGS:  # straight to Rust, without the Python checks
        fitted = _core.NGramModel.fit(corpus._inner, 2, name, discount_fallback=True)
        assert fitted.order == 2
        # ARPA_SMOOTHINGS are exactly the estimators the Rust ARPA writer accepts
        if name in model.ARPA_SMOOTHINGS:
            fitted.to_arpa(str(tmp_path / f"{name}.arpa"))
        else:
            with pytest.raises(InvalidArgumentError):
                fitted.to_arpa(str(tmp_path / f"{name}.arpa"))
    for name in ("", "Laplace", "kn", "mkn", "modified-kneser-ney", "add_one", "mle "):
        with pytest.raises(InvalidArgumentError, match="unknown smoothing") as info:
            _core.NGramModel.fit(corpus._inner, 2, name)
        assert info.value.args[0].endswith(", ".join(model.SMOOTHINGS))


def test_reference_names_are_fastppl_names():
    from fastppl import model, reference

    assert reference.SMOOTHINGS == model.SMOOTHINGS


def test_core_lists_parameters_and_defaults():
    """The core's list: each estimator's parameters with the defaults the core applies."""
    from fastppl import _core

    assert _core.SMOOTHINGS["mle"] == {} and _core.SMOOTHINGS["laplace"] == {}
    assert _core.SMOOTHINGS["lidstone"] == _core.SMOOTHINGS["additive"] == {"k": 1.0}
    assert _core.SMOOTHINGS["kneser_ney"] == {"discount": 0.75}
    assert _core.SMOOTHINGS["modified_kneser_ney"] == {"discount_fallback": False}
    assert _core.SMOOTHINGS["stupid_backoff"] == {"alpha": 0.4}
    assert _core.ARPA_SMOOTHINGS == [
        "witten_bell",
        "absolute_discounting",
        "kneser_ney",
        "modified_kneser_ney",
    ]
    # a default listed is the value used when the parameter is left out
    corpus = Corpus.from_sentences([["a", "b", "c"], ["b", "a"], ["c", "c", "a", "b"]])
    for name, params in _core.SMOOTHINGS.items():
        if not params:
            continue
        if name == "modified_kneser_ney":  # the default, no fallback, fails on this tiny corpus
            for fit_args in ({}, params):
                with pytest.raises(InvalidArgumentError, match="discount_fallback"):
                    _core.NGramModel.fit(corpus._inner, 2, name, **fit_args)
            continue
        plain = _core.NGramModel.fit(corpus._inner, 2, name)
        given = _core.NGramModel.fit(corpus._inner, 2, name, **params)
        tokens = ["a", "b", "c", "a", "c", "b"]
        assert plain.logprobs(tokens).tolist() == given.logprobs(tokens).tolist()
        assert plain.discounts == given.discounts
        changed = {k: (not v if isinstance(v, bool) else v / 2) for k, v in params.items()}
        other = _core.NGramModel.fit(corpus._inner, 2, name, **changed)
        assert other.logprobs(tokens).tolist() != plain.logprobs(tokens).tolist()


@pytest.mark.parametrize("smoothing", ["laplace", "stupid_backoff", "mle"])
def test_train_estimators_without_arpa_form(tmp_path: Path, capsys, smoothing):
    text = tmp_path / "t.txt"
    text.write_text("a b c\nb a\n")
    arpa = tmp_path / "m.arpa"
    assert main(["train", "-o", "2", "--smoothing", smoothing, str(text), str(arpa)]) == 1
    assert "no ARPA form" in capsys.readouterr().err and not arpa.exists()
    binary = tmp_path / "m.fppl"
    assert main(["train", "-o", "2", "--smoothing", smoothing, str(text), str(binary), "-q"]) == 0
    assert NGramModel.load(binary).smoothing == (
        "additive" if smoothing == "laplace" else smoothing
    )


@pytest.mark.parametrize(
    "command", [["eval"], ["score"], ["score", "--tokens"], ["score", "--documents"]]
)
def test_scoring_commands_refuse_a_model_of_scores(tmp_path: Path, capsys, command):
    """A stupid-backoff model gives scores, not probabilities: each scoring command refuses it
    with a message for the command line (the Python API's "pass allow_unnormalized=True" names
    no option of the command)."""
    text = tmp_path / "t.txt"
    text.write_text("a b c\nb a\n")
    model = tmp_path / "m.fppl"
    assert (
        main(["train", "-o", "2", "--smoothing", "stupid_backoff", str(text), str(model), "-q"])
        == 0
    )
    source = text
    if "--documents" in command:
        source = tmp_path / "docs.jsonl"
        source.write_text('{"text": "a b"}\n')
    assert main([command[0], str(model), str(source), *command[1:], "-q"]) == 1
    err = capsys.readouterr().err
    assert f"{model}: a stupid_backoff model gives scores, not probabilities" in err
    assert f"fastppl {command[0]} computes no" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--discount", "0.5"],
            "--discount is the D of kneser_ney and absolute_discounting; modified_kneser_ney "
            "does not take it (choose one of them with --smoothing)",
        ),
        (
            ["--discount", "0.5", "--smoothing", "witten_bell"],
            "--discount is the D of kneser_ney and absolute_discounting; witten_bell does not "
            "take it (choose one of them with --smoothing)",
        ),
        (
            ["--discount-fallback", "--smoothing", "kneser_ney"],
            "--discount-fallback goes with modified_kneser_ney; kneser_ney does not take it",
        ),
        (["--partitions", "4"], "--partitions goes with --ray (the n-gram partitions of Ray)"),
    ],
)
def test_train_refuses_options_it_would_ignore(
    small_train: Path, tmp_path: Path, capsys, argv: list[str], message: str
):
    """An option the chosen estimator (or the local fit) does not use is an error, not a model
    fitted without it."""
    out = tmp_path / "m.arpa"
    assert main(["train", "-q", "-o", "2", *argv, str(small_train), str(out)]) == 1
    assert capsys.readouterr().err == f"fastppl: error: {message}\n"
    assert not out.exists()


def _strict_json(line: str) -> dict:
    """A JSON object as a strict parser (jq, JavaScript) reads it: no NaN, Infinity."""

    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.filterwarnings("ignore::fastppl.errors.ZeroProbabilityWarning")
def test_json_outputs_of_infinite_values_are_valid_json(tmp_path: Path, capsys):
    """An MLE model gives a token it never saw after its context probability 0: the
    perplexities and that token's score are infinite, written as strings, not as the bare
    Infinity that json.dumps writes and strict parsers refuse."""
    model = tmp_path / "mle.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"], ["b", "a"]]), 2, "mle").save(model)
    text = tmp_path / "t.txt"
    text.write_text("a a\n")
    assert main(["eval", str(model), str(text), "--json", "--srilm", "-q"]) == 0
    figures = _strict_json(capsys.readouterr().out)
    assert figures["perplexity_including_oovs"] == "Infinity"
    assert figures["log10_prob"] == "-Infinity"
    assert figures["srilm_ppl1"] == "Infinity" and figures["tokens"] == 3
    assert main(["score", str(model), str(text), "--format", "jsonl", "-q"]) == 0
    assert _strict_json(capsys.readouterr().out) == {
        "sentence": 0,
        "score": "-Infinity",
        "words": 2,
    }
    assert main(["score", str(model), str(text), "--format", "jsonl", "--tokens", "-q"]) == 0
    rows = [_strict_json(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["score"] for row in rows] == [-0.301029995664, "-Infinity", -0.301029995664]
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"text": "a a"}\n')
    assert main(["score", str(model), str(docs), "--documents", "-q"]) == 0
    assert _strict_json(capsys.readouterr().out) == {"text": "a a", "perplexity": "Infinity"}


def test_a_warning_is_one_line_printed_once(tmp_path: Path):
    """The probability-0 warning of eval (raised by its two evaluations, with and without
    OOVs) is one line, once: not Python's two-line form with cli.py's source, twice."""
    model = tmp_path / "mle.fppl"
    NGramModel.fit(Corpus.from_sentences([["a", "b"], ["b", "a"]]), 2, "mle").save(model)
    text = tmp_path / "t.txt"
    text.write_text("a a c\n")  # c: an OOV, so both evaluations run
    run = subprocess.run(
        [sys.executable, "-m", "fastppl", "eval", str(model), str(text), "-q"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stderr == (
        "fastppl: warning: 1 sentence(s) contain a token of probability 0 under mle: the "
        "perplexity is infinite\n"
    )
    assert run.stdout.splitlines()[0] == "Perplexity including OOVs:\tinf"
