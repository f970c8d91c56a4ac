"""``benches/bench_documents.py --quick`` runs on the bundled corpus and the two sides agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.shared_data import REPO_ROOT


def test_quick_documents_benchmark(tmp_path: Path) -> None:
    pytest.importorskip("kenlm")
    pytest.importorskip("sentencepiece")
    out = tmp_path / "documents.json"
    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benches" / "bench_documents.py"), "--quick",
         "--repeat", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["source"] == "bundled Machado" and figures["megabytes"] >= 1.0
    assert figures["documents"] > 50 and len(figures["kenlm_runs"]) == 1
    assert figures["max_relative_difference"] < 1e-4
    ratio = figures["kenlm_seconds"] / figures["fastppl_seconds"]
    assert figures["speedup"] == pytest.approx(ratio)
    assert "speedup:" in proc.stdout
