"""The ``--pairs`` file: both sides' iteration times, one list per process execution.

    {"x": [[x_11, x_12, ...], [x_21, ...], ...],
     "y": [[y_11, y_12, ...], [y_21, ...], ...]}

``x[r][i]`` and ``y[r][i]`` were measured in the same synchronised iteration
(paired by position). Both sides need the same number of executions, each
execution the same number of iterations on both sides (executions may differ
from each other), at least one iteration, and times that are positive finite
numbers. Anything else is one :class:`AnalysisError` line naming the file and
the place.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import AnalysisError
from analysis.execution_states import execution_number

SIDES = ("x", "y")


@dataclass(frozen=True)
class PairedRuns:
    """x and y times per execution; ``x[r][i]`` pairs with ``y[r][i]``."""

    x: tuple[tuple[float, ...], ...]
    y: tuple[tuple[float, ...], ...]

    @property
    def executions(self) -> int:
        return len(self.x)


def _times(source: str, where: str, value: object) -> tuple[float, ...]:
    if not isinstance(value, list):
        raise AnalysisError(f"{source}: {where} must be a list of iteration times, not {type(value).__name__}")
    if not value:
        raise AnalysisError(f"{source}: {where} is empty; every execution needs at least one iteration")
    times = []
    for i, t in enumerate(value):
        time = _positive_finite(t)
        if time is None:
            shown = json.dumps(t)
            shown = shown if len(shown) <= 40 else f"a {type(t).__name__}"
            raise AnalysisError(f"{source}: {where}[{i}] is {shown}; "
                                "iteration times must be positive finite numbers")
        times.append(time)
    return tuple(times)


def _positive_finite(t: object) -> float | None:
    # bool is an int to Python, never a time
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return None
    try:
        time = float(t)
    except OverflowError:  # an integer past the double range
        return None
    return time if math.isfinite(time) and time > 0 else None


def paired_runs(document: object, source: str) -> PairedRuns:
    """Validate a decoded ``--pairs`` document; ``source`` names it in errors."""
    if not isinstance(document, dict):
        raise AnalysisError(f'{source}: expected an object {{"x": [[...], ...], "y": [[...], ...]}}')
    sides = {}
    for side in SIDES:
        runs = document.get(side)
        if not isinstance(runs, list):
            raise AnalysisError(f'{source}: "{side}" must be a list with one list of times per execution')
        if not runs:
            raise AnalysisError(f'{source}: "{side}" has no executions')
        sides[side] = tuple(_times(source, f"{side}[{r}]", run) for r, run in enumerate(runs))
    x, y = sides["x"], sides["y"]
    if len(x) != len(y):
        raise AnalysisError(f'{source}: "x" has {len(x)} executions but "y" has {len(y)}; '
                            "each execution needs both sides")
    for r, (xr, yr) in enumerate(zip(x, y)):
        if len(xr) != len(yr):
            raise AnalysisError(f"{source}: execution {execution_number(r)} has {len(xr)} x iterations but "
                                f"{len(yr)} y iterations; "
                                "iterations are paired by position")
    return PairedRuns(x, y)


def load_pairs(path: str | Path) -> PairedRuns:
    """Read and validate a ``--pairs`` JSON file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalysisError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise AnalysisError(f"{path}: not UTF-8 text; expected JSON") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnalysisError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    return paired_runs(document, str(path))
