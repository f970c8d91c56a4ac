"""`NGramModel.full_scores` against the kenlm module's `Model.full_scores` (KenLM ARPA models)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fastppl import NGramModel
from fastppl.cli import main

kenlm = pytest.importorskip("kenlm")

MODELS = ["machado.o3.arpa.gz", "machado-small.o5.arpa.gz"]


def _test_sentences(arpa_dir: Path, limit: int = 300) -> list[str]:
    lines = (arpa_dir / "machado.test.txt").read_text(encoding="utf-8").splitlines()
    sentences = [line for line in lines if line.split()][:limit]
    return [*sentences, "palavra_que_nao_existe xyzzy ."]


@pytest.mark.parametrize("name", MODELS)
def test_full_scores_match_kenlm_module(arpa_dir: Path, name: str) -> None:
    ours = NGramModel.from_arpa(arpa_dir / name)
    theirs = kenlm.Model(str(arpa_dir / name))
    lengths_seen: set[int] = set()
    oovs_seen = 0
    for sentence in _test_sentences(arpa_dir):
        expected = list(theirs.full_scores(sentence, bos=True, eos=True))
        got = ours.full_scores(sentence.split(), base=10)
        assert len(got.logprob) == len(expected)
        np.testing.assert_allclose(got.logprob, [e[0] for e in expected], rtol=0, atol=1e-6)
        assert got.ngram_length.tolist() == [e[1] for e in expected], sentence
        assert got.oov.tolist() == [e[2] for e in expected], sentence
        lengths_seen.update(got.ngram_length.tolist())
        oovs_seen += int(got.oov.sum())
    # the comparison covered every match length and some OOVs
    assert lengths_seen == set(range(1, ours.order + 1))
    assert oovs_seen > 0


def test_full_scores_agree_with_logprobs(arpa_dir: Path) -> None:
    model = NGramModel.from_arpa(arpa_dir / MODELS[0])
    for sentence in _test_sentences(arpa_dir, limit=50):
        tokens = sentence.split()
        np.testing.assert_array_equal(model.full_scores(tokens).logprob, model.logprobs(tokens))


def test_cli_score_tokens_reports_ngram_length_and_oov(arpa_dir: Path, tmp_path: Path, capsys):
    sentences = _test_sentences(arpa_dir, limit=40)
    text = tmp_path / "test.txt"
    text.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    model = str(arpa_dir / MODELS[0])
    assert main(["score", model, str(text), "--tokens", "--format", "jsonl", "-q"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    theirs = kenlm.Model(model)
    expected = [e for s in sentences for e in theirs.full_scores(s)]
    assert len(rows) == len(expected)
    assert [(r["ngram_length"], r["oov"]) for r in rows] == [(e[1], e[2]) for e in expected]
    assert main(["score", model, str(text), "--tokens", "-q"]) == 0
    columns = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [(int(c[4]), c[5] == "1") for c in columns] == [(e[1], e[2]) for e in expected]
