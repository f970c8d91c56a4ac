"""``benches/machine.py``: the line each benchmark report starts with (CPU model, cores, load,
hypervisor steal during the run)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from helpers.shared_data import REPO_ROOT


@pytest.fixture(scope="module")
def machine() -> ModuleType:
    spec = importlib.util.spec_from_file_location("machine", REPO_ROOT / "benches" / "machine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["machine"] = module  # (dataclasses look their module up by name)
    spec.loader.exec_module(module)
    return module


def test_steal_share_is_the_stolen_part_of_the_time_between(machine: ModuleType) -> None:
    before = machine.CpuTimes(busy=1000, idle=500, steal=100)
    after = machine.CpuTimes(busy=1600, idle=700, steal=300)
    # 200 ticks stolen of 1000 ticks in all
    assert after.steal_share_since(before) == pytest.approx(0.2)
    assert before.steal_share_since(before) is None  # no time between: no share


def test_times_are_read_from_proc_stat(
    machine: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 2 3 40 5 6 7 8 0 0\ncpu0 5 1 1 20 2 3 3 4 0 0\n")
    monkeypatch.setattr(machine, "PROC_STAT", stat)
    assert machine.CpuTimes.now() == machine.CpuTimes(busy=10 + 2 + 3 + 6 + 7, idle=45, steal=8)
    monkeypatch.setattr(machine, "PROC_STAT", tmp_path / "absent")
    assert machine.CpuTimes.now() is None


def test_the_report_line_names_the_cpu_and_the_steal(machine: ModuleType) -> None:
    line = machine.describe(machine.CpuTimes(busy=0, idle=0, steal=0))
    assert line.startswith(f"cpu: {machine.cpu_model()}, ")
    assert "load average" in line
    if sys.platform == "linux":
        assert "hypervisor steal" in line and line.endswith("% of CPU time during the run")
