"""Command-line options: ``--tokenizer kenlm``, vocabulary limits, model formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fastppl import Corpus, NGramModel
from fastppl.cli import main

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
