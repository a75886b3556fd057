"""The iterations of each completed process execution that a screening or
boot-dependency analysis keeps: by default the execution's steady state as
warmup_stats finds it (``analysis.pilot.stopping.steady_segment``, the same
cut the [stop] rule uses), else every iteration. An execution with no steady
state, or too short for changepoints, is left out with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class KeptIterations:
    values: np.ndarray | None  # None: the execution is left out
    note: str


def kept_iterations(times: Sequence[float], steady_state: bool) -> KeptIterations:
    import numpy as np

    arr = np.asarray(times, dtype=np.float64)
    if arr.size == 0:
        return KeptIterations(None, "no iterations")
    if not steady_state:
        return KeptIterations(arr, f"all {arr.size} iterations")
    from analysis.pilot.stopping import steady_segment

    segment, _mean, reason = steady_segment(arr)
    if segment is None:
        return KeptIterations(None, reason)
    return KeptIterations(arr[segment[0]:segment[1]], reason)


def completed_executions(results: dict) -> dict[str, list[tuple[int, list[float]]]]:
    """{key: [(pexec, times)]} of the executions with data, from Krun-shaped results."""
    return {key: [(i, times) for i, times in enumerate(executions) if times]
            for key, executions in sorted(results.get("wallclock_times", {}).items())}
