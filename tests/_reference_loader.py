"""Load ``python/fastppl/reference.py`` by path, so the tests run before the Rust extension is built
(``fastppl/__init__.py`` imports ``fastppl._core``), and locate the shared data directory."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"


def _load_reference() -> ModuleType:
    name = "fastppl_reference"
    if name in sys.modules:
        return sys.modules[name]
    path = REPO_ROOT / "python" / "fastppl" / "reference.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


reference = _load_reference()


def shared_path(*parts: str) -> Path:
    """A file of the read-only shared data (``<repo root>/../shared``); fails clearly if absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.fail(
            f"shared test data not found: {path} (expected the shared data directory at "
            f"{SHARED}, i.e. <repo root>/../shared)",
            pytrace=False,
        )
    return path
