"""Run the ``>>>`` examples of every module of the package (those of the optional extras'
modules when the extra is installed)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fastppl

#: modules that import an optional extra, and the module each needs
EXTRAS = {"fastppl.hf": "transformers", "fastppl.lda": "sklearn"}
#: modules whose examples run elsewhere: fastppl.ray's start a Ray session, so they run inside
#: the Ray tests' own cluster (tests/parity/test_ray_distributed.py::test_doctests), which shuts
#: it down; run here, they would leave a session behind for every later test
RUN_ELSEWHERE = {"fastppl.ray"}
MODULES = sorted(
    ["fastppl"]
    + [
        info.name
        for info in pkgutil.iter_modules(fastppl.__path__, "fastppl.")
        if not info.name.startswith("fastppl._core") and info.name not in RUN_ELSEWHERE
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
