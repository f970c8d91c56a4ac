"""Run the ``>>>`` examples of every module of the package (those of the optional extras'
modules when the extra is installed)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fastppl

#: modules that import an optional extra, and the module each needs
EXTRAS = {"fastppl.hf": "transformers", "fastppl.lda": "sklearn", "fastppl.ray": "ray"}
MODULES = sorted(
    ["fastppl"]
    + [
        info.name
        for info in pkgutil.iter_modules(fastppl.__path__, "fastppl.")
        if not info.name.startswith("fastppl._core")
    ]
)


def test_every_module_is_listed():
    assert {"fastppl.model", "fastppl.corpus", "fastppl.progress", "fastppl.kenlm"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name, nltk_data_dir):
    if name in EXTRAS:
        pytest.importorskip(EXTRAS[name])
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
