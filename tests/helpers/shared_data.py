"""Where the tests find their data: the project's shared folder and the small fixtures in the repo.

The shared folder (large corpora, KenLM's reference models and outputs, NLTK data) is
``$FASTPPL_SHARED`` when that variable is set, else ``<repo root>/../shared``. Tests that need it
carry the ``shared`` marker (``pytest -m "not shared"`` leaves them out) and are skipped, with one
reason, when it is absent; in CI (``FASTPPL_REQUIRE_SHARED=1``, which ``.ci/run`` sets, or
``CI=true``) they fail instead, so nothing silently stops running there.

>>> fixture_path("README.md").name
'README.md'
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The repository's root (the folder holding ``tests/``).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: Small fixtures committed with the tests (provenance in ``tests/data/README.md``).
TESTS_DATA_DIR = REPO_ROOT / "tests" / "data"
#: The environment variable naming the shared data folder.
SHARED_ENV_VAR = "FASTPPL_SHARED"
#: Set to 1 to make a missing shared folder a failure (``.ci/run`` does).
REQUIRE_ENV_VAR = "FASTPPL_REQUIRE_SHARED"

SKIP_REASON = (
    f"needs the project's shared data folder (${SHARED_ENV_VAR}, else 'shared' beside the "
    "repository): not found"
)


def shared_root() -> Path:
    """The shared data folder: ``$FASTPPL_SHARED``, else ``../shared`` (may be absent)."""
    configured = os.environ.get(SHARED_ENV_VAR)
    return Path(configured) if configured else REPO_ROOT.parent / "shared"


def shared_required() -> bool:
    """True when a missing shared folder must fail the tests (CI), not skip them."""
    if os.environ.get(REQUIRE_ENV_VAR, "").strip() not in ("", "0"):
        return True
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def shared_available() -> bool:
    """Whether the shared data folder exists."""
    return shared_root().is_dir()


def shared_path(*parts: str) -> Path:
    """A file or folder of the shared data; skips the test (fails it in CI) if it is absent.

    Args:
        *parts: Path components below the shared folder, e.g. ``("arpa", "machado.test.txt")``.

    Returns:
        The existing path.
    """
    root = shared_root()
    path = root.joinpath(*parts)
    if path.exists():
        return path
    if shared_required():
        pytest.fail(
            f"{path} not found: the shared data folder is required here "
            f"(${REQUIRE_ENV_VAR} or $CI is set); set ${SHARED_ENV_VAR} or put 'shared' "
            f"beside the repository ({REPO_ROOT.parent / 'shared'})",
            pytrace=False,
        )
    if root.is_dir():  # the folder is there but incomplete: say what is missing
        pytest.skip(f"{path} not found in the shared data folder {root}")
    pytest.skip(SKIP_REASON)


def fixture_path(name: str) -> Path:
    """A small fixture committed in ``tests/data/``."""
    return TESTS_DATA_DIR / name
