"""`NGramModel.full_scores` against the kenlm module's `Model.full_scores` (KenLM ARPA models:
the shared ones, and lmplz's pruned 4-gram in tests/data, which runs on a fresh clone)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fastppl import NGramModel
from fastppl.cli import main

kenlm = pytest.importorskip("kenlm")

MODELS = ["machado.o3.arpa.gz", "machado-small.o5.arpa.gz"]


def _test_sentences(text_path: Path, limit: int = 300) -> list[str]:
    lines = text_path.read_text(encoding="utf-8").splitlines()
    sentences = [line for line in lines if line.split()][:limit]
    return [*sentences, "palavra_que_nao_existe xyzzy ."]


def _check_full_scores(path: Path, sentences: list[str]) -> None:
    ours = NGramModel.from_arpa(path)
    theirs = kenlm.Model(str(path))
    lengths_seen: set[int] = set()
    oovs_seen = 0
    for sentence in sentences:
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


@pytest.mark.parametrize("name", MODELS)
def test_full_scores_match_kenlm_module(arpa_dir: Path, name: str) -> None:
    _check_full_scores(arpa_dir / name, _test_sentences(arpa_dir / "machado.test.txt"))


def test_full_scores_match_kenlm_module_on_a_pruned_model(
    lmplz_o4_arpa_path: Path, machado_test_head_path: Path
) -> None:
    _check_full_scores(lmplz_o4_arpa_path, _test_sentences(machado_test_head_path))


def test_full_scores_agree_with_logprobs(
    lmplz_o4_arpa_path: Path, machado_test_head_path: Path
) -> None:
    model = NGramModel.from_arpa(lmplz_o4_arpa_path)
    for sentence in _test_sentences(machado_test_head_path, limit=50):
        tokens = sentence.split()
        np.testing.assert_array_equal(model.full_scores(tokens).logprob, model.logprobs(tokens))


def test_cli_score_tokens_reports_ngram_length_and_oov(
    lmplz_o4_arpa_path: Path, machado_test_head_path: Path, tmp_path: Path, capsys
):
    sentences = _test_sentences(machado_test_head_path, limit=40)
    text = tmp_path / "test.txt"
    text.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    model = str(lmplz_o4_arpa_path)
    assert main(["score", model, str(text), "--tokens", "--format", "jsonl", "-q"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    theirs = kenlm.Model(model)
    expected = [e for s in sentences for e in theirs.full_scores(s)]
    assert len(rows) == len(expected)
    assert [(r["ngram_length"], r["oov"]) for r in rows] == [(e[1], e[2]) for e in expected]
    assert main(["score", model, str(text), "--tokens", "-q"]) == 0
    columns = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [(int(c[4]), c[5] == "1") for c in columns] == [(e[1], e[2]) for e in expected]
