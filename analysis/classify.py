"""Per-process-execution classification and steady state, as warmup_stats does it.

Sources of the rules: warmup_stats' ``bin/mark_changepoints_in_json``
(``Segments.get_classification``) and ``warmup/summary_statistics.py``
(steady segments, steady iter (#)/(s), bootstrap segments). Conventions kept
literally, including their off-by-ones:

- A segment's ``var`` is R's *variance* (s^2), added directly to means in
  seconds when testing equivalence.
- ``delta`` is a string: absolute seconds (default ``"0.001"``, not scaled
  with iterations) or ``"N%"``, which means ``min(segment means) * (N / 100)``
  of that process execution (the fastest segment).
- Bounds around the last segment: ``lower = min(mean - var, mean - delta)``,
  ``upper = max(mean + var, mean + delta)``; segment ``s`` is *equivalent* to
  the last when ``s.mean + s.var >= lower and s.mean - s.var <= upper``.
- Classification scans from the second-last segment backwards: equivalent
  segments are skipped; otherwise, a segment ending after ``length - steady``
  gives "no steady state" (stop); one below the bounds
  (``mean - var < lower``) gives "slowdown" (stop); anything else sets
  "warmup" and *keeps scanning* (a later, earlier-in-time segment can still
  turn it into slowdown or no steady state). No non-equivalent segment:
  "flat" -- so "flat" includes executions with changepoints.
- ``length`` is the original length, outliers included; ``end`` is the
  original index of a segment's last non-outlier point.
- Segments: the first is ``[0, c0]``; segment ``k`` is ``(c[k-1], c[k]]`` but
  warmup_stats records its start as ``c[k-1]`` (the previous end).
- Steady segments: the last one plus every adjacent earlier one that is
  equivalent, walking backwards until the first that is not.
- Steady state mean: ``math.fsum(steady means) / count`` (unweighted).
- Steady iter (#): flat -> ``1``; otherwise ``changepoints[first_steady - 1] + 1``
  (0-based index of the first steady iteration).
- Steady iter (s): flat -> ``0.0``; otherwise the running float sum of
  ``times[0 : changepoints[first_steady - 1]]`` -- the upper bound excludes the
  last non-steady iteration; outliers are included.
- Bootstrap data, in warmup_stats' order: the last segment
  ``times[changepoints[-1] : len]`` (starts one point early: it includes the
  previous segment's last point; from 0 with no changepoints), then each
  equivalent earlier segment ``k`` walking backwards,
  ``times[changepoints[k-1] + 1 : changepoints[k] + 1]`` (from 0 for k = 0);
  outliers are removed from every range.
- "no steady state" executions get no steady numbers at all.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Sequence

FLAT = "flat"
WARMUP = "warmup"
SLOWDOWN = "slowdown"
NO_STEADY_STATE = "no steady state"
CLASSES = (FLAT, WARMUP, SLOWDOWN, NO_STEADY_STATE)
DEFAULT_DELTA = "0.001"
DEFAULT_STEADY_RATIO = 0.25


def default_steady(iterations: int) -> int:
    """warmup_stats' front-end default: ``int(iterations * 0.25)``."""
    return int(iterations * DEFAULT_STEADY_RATIO)


def parse_delta(delta: str) -> tuple[float | None, float | None]:
    """Split a delta string into (absolute seconds, percent); one of them is None.

    Raises ValueError with a readable message for anything else.
    """
    text = str(delta).strip()
    try:
        value = float(text)
    except ValueError:
        if text.endswith("%"):
            try:
                return None, float(text[:-1])
            except ValueError:
                pass
        raise ValueError(f"delta must be seconds (e.g. 0.001) or a percentage (e.g. 1%), not {delta!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"delta must be a finite, non-negative number of seconds, not {delta!r}")
    return value, None


def absolute_delta(delta: str, segment_means: Sequence[float]) -> float:
    """warmup_stats' ``get_absolute_delta_using_fastest_seg``."""
    absolute, percent = parse_delta(delta)
    if absolute is not None:
        return absolute
    assert percent is not None
    return min(segment_means) * (percent / 100)


@dataclass(frozen=True)
class SteadyState:
    """The steady part of one (not "no steady state") process execution."""

    first_steady_segment: int
    steady_state_mean: float
    steady_iteration: int  # Steady iter (#)
    time_to_steady: float  # Steady iter (s)
    bootstrap_ranges: list[tuple[int, int]]  # half-open original index ranges, warmup_stats' order


def _bounds(means: Sequence[float], variances: Sequence[float], delta_abs: float) -> tuple[float, float]:
    last_mean, last_var = means[-1], variances[-1]
    lower = min(last_mean - last_var, last_mean - delta_abs)
    upper = max(last_mean + last_var, last_mean + delta_abs)
    return lower, upper


def _equivalent(mean: float, var: float, lower: float, upper: float) -> bool:
    return mean + var >= lower and mean - var <= upper


def classify_execution(
    changepoints: Sequence[int],
    means: Sequence[float],
    variances: Sequence[float],
    length: int,
    steady: int,
    delta: str = DEFAULT_DELTA,
) -> str:
    """One of flat / warmup / slowdown / no steady state (rules in the module doc)."""
    delta_abs = absolute_delta(delta, means)
    lower, upper = _bounds(means, variances, delta_abs)
    classification = FLAT
    # Segment k (k < last) ends at changepoints[k].
    for k in range(len(means) - 2, -1, -1):
        mean, var = means[k], variances[k]
        if _equivalent(mean, var, lower, upper):
            continue
        if changepoints[k] > length - steady:
            return NO_STEADY_STATE
        if mean - var < lower:
            return SLOWDOWN
        classification = WARMUP
    return classification


def steady_state(
    times: Sequence[float],
    outliers: Sequence[int],
    changepoints: Sequence[int],
    means: Sequence[float],
    variances: Sequence[float],
    classification: str,
    delta: str = DEFAULT_DELTA,
) -> SteadyState:
    """Steady segments and the per-execution numbers of the summary (module doc)."""
    if classification == NO_STEADY_STATE:
        raise ValueError("a 'no steady state' process execution has no steady state")
    delta_abs = absolute_delta(delta, means)
    lower, upper = _bounds(means, variances, delta_abs)
    length = len(times)
    ranges = [(changepoints[-1] if changepoints else 0, length)]
    first = len(means) - 1
    for k in range(len(means) - 2, -1, -1):
        if not _equivalent(means[k], variances[k], lower, upper):
            break
        start = 0 if k == 0 else changepoints[k - 1] + 1
        ranges.append((start, changepoints[k] + 1))
        first -= 1
    steady_mean = math.fsum(means[first:]) / float(len(means) - first)
    if classification != FLAT:
        last_unsteady = changepoints[first - 1]
        steady_iter = last_unsteady + 1
        to_steady = 0.0
        for t in times[:last_unsteady]:
            to_steady += t
    else:
        steady_iter, to_steady = 1, 0.0
    return SteadyState(first, steady_mean, steady_iter, to_steady, ranges)


def bootstrap_segments(times: Sequence[float], outliers: Sequence[int], ranges: Sequence[tuple[int, int]]) -> list[list[float]]:
    """The values of each steady range with outliers removed."""
    ordered = sorted(set(outliers))
    segments = []
    for a, b in ranges:
        # Slices between the outliers: the same values as a per-index filter,
        # at C speed (this runs over every steady iteration of a summary).
        values: list[float] = []
        start = a
        for o in ordered[bisect.bisect_left(ordered, a):bisect.bisect_left(ordered, b)]:
            values += times[start:o]
            start = o + 1
        values += times[start:b]
        segments.append(values)
    return segments
