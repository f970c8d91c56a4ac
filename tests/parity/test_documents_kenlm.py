"""`fastppl.documents.perplexity` against CCNet's loop run on the kenlm module itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fastppl.kenlm
from fastppl import documents, reference

kenlm = pytest.importorskip("kenlm")


@pytest.mark.parametrize("name", ["machado.o3.arpa.gz", "machado-small.o5.arpa.gz"])
@pytest.mark.parametrize("normalize", [True, False])
def test_document_perplexities_match_the_kenlm_module(
    arpa_dir: Path, name: str, normalize: bool
) -> None:
    lines = (arpa_dir / "machado.test.txt").read_text(encoding="utf-8").splitlines()[:1500]
    docs = ["\n".join(lines[i : i + 1 + i % 9]) for i in range(0, len(lines), 9)]
    docs += ["", "Uma linha só, com 12 dígitos e «aspas».\n"]
    path = str(arpa_dir / name)
    expected = reference.ccnet_document_perplexities(kenlm.Model(path), docs, normalize=normalize)
    got = documents.perplexity(fastppl.kenlm.Model(path), docs, normalize=normalize)
    # kenlm sums each line in float32
    np.testing.assert_allclose(got, expected, rtol=2e-5)
