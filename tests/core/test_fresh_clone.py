"""A fresh clone, with no shared data folder beside it and no ``NLTK_DATA``, runs its tests.

The repository is cloned into a temporary folder (so ``<clone>/../shared`` does not exist) and
pytest runs there with ``FASTPPL_SHARED``, ``FASTPPL_REQUIRE_SHARED``, ``CI`` and ``NLTK_DATA``
removed from the environment: every test module collects, the tests that read the committed
fixtures pass, the ``shared`` tests are skipped with one reason, and fail when CI requires them.
The clone holds the last commit (uncommitted changes are not in it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.shared_data import REPO_ROOT, REQUIRE_ENV_VAR, SHARED_ENV_VAR, SKIP_REASON

HIDDEN = (SHARED_ENV_VAR, REQUIRE_ENV_VAR, "CI", "NLTK_DATA")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout (or git is missing): nothing to clone")
    target = tmp_path_factory.mktemp("fresh") / "fastppl"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(REPO_ROOT), str(target)],
        check=True,
        capture_output=True,
    )
    assert not (target.parent / "shared").exists()
    return target


def _pytest(clone: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _count(summary: str, what: str) -> int:
    m = re.search(rf"(\d+) {what}", summary)
    return int(m[1]) if m else 0


def test_every_module_collects_without_shared_data(clone: Path):
    proc = _pytest(clone, "--collect-only")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _count(proc.stdout, "tests? collected") > 300
    assert "error" not in proc.stdout.splitlines()[-1]


def test_committed_fixtures_suffice(clone: Path):
    """Tests that read tests/data and the bundled corpus pass in the clone, none skipped."""
    files = ["tests/core/test_pruning.py", "tests/formats/test_binary.py"]
    proc = _pytest(clone, "-rs", *files)
    last = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _count(last, "passed") > 20
    # the lmplz models of the shared folder are the only thing these files miss
    skips = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert _count(last, "skipped") > 0 and all(SKIP_REASON in line for line in skips), skips


def test_shared_tests_skip_with_one_reason_and_fail_in_ci(clone: Path):
    target = "tests/parity/test_kenlm_parity.py"
    skipped = _pytest(clone, "-rs", "-m", "shared", target)
    assert skipped.returncode == 0, skipped.stdout[-3000:]
    assert SKIP_REASON in skipped.stdout and "passed" not in skipped.stdout
    required = _pytest(clone, "-m", "shared", target, **{REQUIRE_ENV_VAR: "1"})
    assert required.returncode == 1 and "shared data folder is required" in required.stdout
    deselected = _pytest(clone, "--collect-only", "-m", "not shared", target)
    assert "no tests collected" in deselected.stdout or "deselected" in deselected.stdout
