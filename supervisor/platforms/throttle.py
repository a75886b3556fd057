"""Thermal throttle counters (/sys/devices/system/cpu/cpu*/thermal_throttle/*)."""

from __future__ import annotations

from supervisor.system import SystemRoot


def read_throttle_counters(root: SystemRoot) -> dict[str, int]:
    counters = {}
    for path in root.glob("/sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*"):
        try:
            counters[path.removeprefix("/sys/devices/system/cpu/")] = int(root.read_text(path).strip())
        except (OSError, ValueError):
            continue  # non-counter files (e.g. newer kernels' *_max_time_ms are still ints; others skipped)
    return counters


def throttle_changes(before: dict[str, int], after: dict[str, int]) -> dict[str, list[int]]:
    """Counter -> [before, after] for every counter that moved (or appeared)."""
    return {k: [before.get(k, 0), v] for k, v in sorted(after.items()) if before.get(k, 0) != v}
