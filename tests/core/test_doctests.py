"""Run the ``>>>`` examples of the pure-Python modules."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name", ["fastppl.errors", "fastppl.text", "fastppl.tokenize", "fastppl.datasets"]
)
def test_doctests(name, nltk_data_dir):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
