"""Load ``python/fastppl/reference.py`` by path, so that the reference tests run before the Rust
extension is built (``fastppl/__init__.py`` imports ``fastppl._core``)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from helpers.shared_data import REPO_ROOT


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
