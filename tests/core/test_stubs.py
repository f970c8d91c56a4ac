"""The hand-written stubs of the compiled module match it (mypy's stubtest)."""

import subprocess
import sys

import pytest


def test_core_stubs_match_the_compiled_module():
    pytest.importorskip("mypy", reason="mypy (the test extra) is needed for stubtest")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "fastppl._core"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
