"""Shared fixtures: the project's shared data folder (``<repo root>/../shared``) and NLTK data.

At import, if ``../shared/nltk_data`` exists, ``NLTK_DATA`` is set to it and it is appended to
``nltk.data.path``, so that ``nltk.word_tokenize`` finds Punkt offline in every test (and in the
subprocesses tests start, which inherit ``NLTK_DATA``).

Fixtures that need the shared folder fail (not skip) with a message saying where it was expected.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"
NLTK_DATA_DIR = SHARED_DIR / "nltk_data"

if NLTK_DATA_DIR.is_dir():
    os.environ["NLTK_DATA"] = str(NLTK_DATA_DIR)
    import nltk.data

    if str(NLTK_DATA_DIR) not in nltk.data.path:
        nltk.data.path.append(str(NLTK_DATA_DIR))


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        pytest.fail(
            f"{what} not found at {path}. The tests need the project's shared data folder "
            f"'shared' beside the repository ({SHARED_DIR}), holding corpora/, nltk_data/ and "
            "arpa/ (see shared/corpora/README.md).",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``<repo root>/../shared`` (fails the test if missing)."""
    return _require(SHARED_DIR, "the shared data folder")


@pytest.fixture(scope="session")
def nltk_data_dir(shared_dir: Path) -> Path:
    """``../shared/nltk_data``, holding English and Portuguese ``punkt_tab``; already on
    ``nltk.data.path`` and in ``NLTK_DATA``."""
    path = _require(shared_dir / "nltk_data", "NLTK data (nltk_data/)")
    _require(path / "tokenizers" / "punkt_tab" / "english", "NLTK English punkt_tab")
    return path


@pytest.fixture(scope="session")
def corpora_dir(shared_dir: Path) -> Path:
    """``../shared/corpora``."""
    return _require(shared_dir / "corpora", "the corpora folder")


@pytest.fixture(scope="session")
def machado_text_path(corpora_dir: Path) -> Path:
    """The raw Machado de Assis corpus (UTF-8; ``#``/``%`` lines are not text)."""
    return _require(corpora_dir / "machado" / "machadodeassiscorpus.txt", "the Machado corpus")


@pytest.fixture(scope="session")
def machado_tutorial_tokens_path(corpora_dir: Path) -> Path:
    """The tutorial's own token stream (NLTK 3.2.5, one token per line, gzip; 629,885 tokens)."""
    return _require(
        corpora_dir / "machado" / "machado.tokens-nltk3.2.5.txt.gz", "the tutorial token file"
    )


@pytest.fixture(scope="session")
def gutenberg_dir(corpora_dir: Path) -> Path:
    """``../shared/corpora/gutenberg`` (five ``.txt.xz`` shards and ``BOOKS.tsv``)."""
    return _require(corpora_dir / "gutenberg", "the Gutenberg corpus")


@pytest.fixture(scope="session")
def arpa_dir(shared_dir: Path) -> Path:
    """``../shared/arpa``: KenLM lmplz models, train/test texts and query outputs."""
    return _require(shared_dir / "arpa", "the ARPA reference folder")


@pytest.fixture(scope="session")
def machado_tutorial_sentences(machado_text_path: Path, nltk_data_dir: Path) -> list[list[str]]:
    """The Machado corpus through the tutorial pipeline, with English Punkt: ``#``/``%`` lines
    dropped, lowercased, ``nltk.word_tokenize``, sentences ended by terminator tokens.

    629,335 tokens (NLTK 3.10). Computed once per session (about 15 s); do not mutate.
    """
    from fastppl.text import read_text, tokenize_text

    text = read_text(machado_text_path, skip_line_prefixes=("#", "%"), lowercase=True)
    return tokenize_text(text, tokenizer="nltk", sentences="terminators", language="english")
