"""How many CPUs this process may use (its affinity mask, where the OS has one)."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """One per CPU this process may run on; at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
