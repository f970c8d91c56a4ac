"""Shared test fixtures: the read-only data directory ``<repo root>/../shared``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = (REPO_ROOT.parent / "shared").resolve()

# NLTK's Punkt models live in <shared>/nltk_data: make them visible before anything imports NLTK.
_NLTK_DATA = SHARED_DIR / "nltk_data"
if _NLTK_DATA.is_dir():
    os.environ["NLTK_DATA"] = str(_NLTK_DATA)
    try:
        import nltk

        if str(_NLTK_DATA) not in nltk.data.path:
            nltk.data.path.insert(0, str(_NLTK_DATA))
    except ImportError:  # NLTK absent: the tests that need it skip themselves
        pass


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared data directory (corpora, KenLM's ARPA files, NLTK data)."""
    if not SHARED_DIR.is_dir():
        pytest.fail(
            f"shared data directory {SHARED_DIR} is missing: the tests expect the project's "
            "shared data (corpora/, arpa/, nltk_data/) next to the repository root"
        )
    return SHARED_DIR
