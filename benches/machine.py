"""What a benchmark's figures were measured on: the CPU model, the cores, the load, and the share
of CPU time the hypervisor took away (steal) while the benchmark ran.

On this project's virtual machines the same program runs 10-50 % slower from one hour, or one
machine, to the next; a ratio of two programs measured in one run is meaningful, but readers of
the figures need to know which machine and how disturbed it was. Linux only for the steal time
(``/proc/stat``); elsewhere those fields are None.

    >>> before = CpuTimes.now()
    >>> line = describe(before)
    >>> line.startswith("cpu: ")
    True
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class CpuTimes:
    """The machine's CPU time so far, all cores together, in clock ticks (``/proc/stat``)."""

    busy: int
    idle: int
    steal: int

    @classmethod
    def now(cls) -> CpuTimes | None:
        """The times now, or None where ``/proc/stat`` is not there to read."""
        try:
            first = PROC_STAT.read_text().splitlines()[0].split()
        except OSError:
            return None
        # cpu user nice system idle iowait irq softirq steal [guest guest_nice: inside user]
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in first[1:9])
        return cls(busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal)

    def steal_share_since(self, earlier: CpuTimes) -> float | None:
        """The share of the CPU time between ``earlier`` and now that the hypervisor stole."""
        total = (self.busy + self.idle + self.steal) - (earlier.busy + earlier.idle + earlier.steal)
        return (self.steal - earlier.steal) / total if total > 0 else None


def cpu_model() -> str:
    """The processor's model name, as the kernel reports it (or the platform's guess)."""
    try:
        for line in CPUINFO.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def describe(since: CpuTimes | None = None) -> str:
    """One line for a report: CPU model, cores, load averages and, given the times at the start,
    the share of CPU time stolen since."""
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    line = f"cpu: {cpu_model()}, {os.cpu_count()} cores; load average {load} (1 / 5 / 15 min)"
    now = CpuTimes.now()
    if since is not None and now is not None:
        share = now.steal_share_since(since)
        if share is not None:
            line += f"; hypervisor steal {100 * share:.1f} % of CPU time during the run"
    return line
