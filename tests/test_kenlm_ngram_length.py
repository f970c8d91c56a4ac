"""`NGramModel.full_scores` against the kenlm module's `Model.full_scores` (KenLM ARPA models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fastppl import NGramModel

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
