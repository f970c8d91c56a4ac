"""``benches/report.py`` runs on the bundled corpus and writes its report and plots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.shared_data import REPO_ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_quick_report_writes_its_plots(tmp_path: Path):
    pytest.importorskip("matplotlib", reason="matplotlib (the bench and test extras) is needed")
    env = {k: v for k, v in os.environ.items() if k != "KENLM_BIN"}  # the bundled corpus only
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "benches" / "report.py"),
            "--quick",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads((tmp_path / "report.json").read_text())["rows"]
    assert {(r["task"], r["impl"]) for r in rows} == {
        (task, impl)
        for task in ("count", "estimate", "score")
        for impl in ("fastppl", "reference", "nltk")
    }
    assert all(r["seconds"] > 0 and r["peak_rss_mb"] > 0 and r["tokens"] > 0 for r in rows)
    report = (tmp_path / "report.md").read_text()
    for name in ("report-throughput.png", "report-memory.png"):
        png = tmp_path / name
        assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
        assert f"]({name})" in report
    # every measured point is in the table
    assert report.count("\n| ") == len(rows) + 1
