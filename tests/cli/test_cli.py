"""The fastppl command line against KenLM's own outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fastppl import NGramModel
from fastppl.cli import main


@pytest.fixture(scope="module")
def arpa(shared_dir):
    return shared_dir / "arpa"


def _summary(path):
    out = {}
    for line in path.read_text().splitlines():
        key, value = line.split(":\t")
        out[key] = float(value)
    return out


def test_eval_prints_kenlm_query_summary(arpa, capsys):
    assert main(["eval", str(arpa / "machado.o3.arpa.gz"), str(arpa / "machado.test.txt")]) == 0
    got = _summary_text(capsys.readouterr().out)
    kenlm = _summary(arpa / "machado.o3.query-summary.txt")
    assert got["OOVs"] == kenlm["OOVs"] == 1663
    assert got["Tokens"] == kenlm["Tokens"] == 66875
    for key in ("Perplexity including OOVs", "Perplexity excluding OOVs"):
        assert got[key] == pytest.approx(kenlm[key], rel=1e-6)


def _summary_text(text):
    return {k: float(v) for k, v in (line.split(":\t") for line in text.strip().splitlines())}


def test_eval_reads_stdin_and_prints_json(arpa):
    with open(arpa / "machado.test.txt", "rb") as stdin:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "fastppl.cli",
                "eval",
                str(arpa / "machado.o3.arpa.gz"),
                "--json",
            ],
            stdin=stdin,
            capture_output=True,
            check=True,
        )
    figures = json.loads(proc.stdout)
    kenlm = _summary(arpa / "machado.o3.query-summary.txt")
    assert figures["tokens"] == 66875 and figures["oovs"] == 1663
    assert figures["perplexity_including_oovs"] == pytest.approx(
        kenlm["Perplexity including OOVs"], rel=1e-6
    )


def test_srilm_figures(arpa, capsys):
    main(["eval", str(arpa / "machado.o3.arpa.gz"), str(arpa / "machado.test.txt"), "--srilm"])
    got = _summary_text(capsys.readouterr().out)
    # SRILM's ppl divides by words - OOVs + sentences: KenLM's "excluding OOVs" denominator
    assert got["SRILM ppl"] == pytest.approx(got["Perplexity excluding OOVs"], rel=1e-12)
    assert got["SRILM ppl1"] > got["SRILM ppl"]


def test_score_sentences_match_kenlm_and_tokens_sum_to_sentences(arpa, capsys):
    model, text = str(arpa / "machado.o3.arpa.gz"), str(arpa / "machado.test.txt")
    main(["score", model, text])
    sentences = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    kenlm = [
        float(line.split()[1])
        for line in (arpa / "machado.o3.query-sentences.txt").read_text().splitlines()
        if line.startswith("Total:")
    ]
    assert len(sentences) == len(kenlm) == 3404
    for (_, score, _), expected in zip(sentences, kenlm, strict=True):
        assert float(score) == pytest.approx(expected, abs=1e-4)  # KenLM sums in float32
    main(["score", model, text, "--tokens", "--format", "jsonl"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    totals = [0.0] * len(sentences)
    for row in rows:
        totals[row["sentence"]] += row["score"]
    for total, (_, score, _) in zip(totals, sentences, strict=True):
        assert total == pytest.approx(float(score), abs=1e-9)
    assert rows[0]["token"] == "naquele" and any(r["token"] == "</s>" for r in rows[:20])


def test_train_writes_an_arpa_that_scores_like_the_fitted_model(arpa, tmp_path, capsys):
    out = tmp_path / "model.arpa.gz"
    assert main(["train", "-o", "3", str(arpa / "machado-small.train.txt"), str(out), "-q"]) == 0
    loaded = NGramModel.from_arpa(out)
    assert loaded.order == 3 and loaded.ngram_counts[1:] == [78598, 137859]
    main(["eval", str(out), str(arpa / "machado.test.txt"), "--json"])
    figures = json.loads(capsys.readouterr().out)
    from fastppl import Corpus

    test = Corpus.from_file(arpa / "machado.test.txt", tokenizer="whitespace", sentences="lines")
    train = Corpus.from_file(
        arpa / "machado-small.train.txt", tokenizer="whitespace", sentences="lines"
    )
    fitted = NGramModel.fit(train, order=3, smoothing="modified_kneser_ney")
    assert figures["perplexity_including_oovs"] == pytest.approx(
        fitted.evaluate(test).perplexity, rel=1e-6
    )


def test_errors_are_clean(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "missing.arpa"), str(tmp_path / "x.txt")]) == 1
    assert "missing.arpa" in capsys.readouterr().err
    bad = tmp_path / "bad.arpa"
    bad.write_text("\\data\\\nngram 1=x\n")
    assert main(["eval", str(bad), str(tmp_path / "x.txt")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fastppl: error:") and "line 2" in err
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--no-such-option"])
    assert exit_.value.code == 2


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "fastppl"
    assert script.exists(), f"the fastppl console script is not installed next to {sys.executable}"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    for command in ("train", "eval", "score", "demo"):
        assert command in proc.stdout
