"""Per-process-execution classification and steady state, as warmup_stats does it.

Sources of the rules: warmup_stats' ``bin/mark_changepoints_in_json``
(``Segments.get_classification``) and ``warmup/summary_statistics.py``
(steady segments, steady iter (#)/(s), bootstrap segments). Conventions kept
literally, including their off-by-ones:

- A segment's ``var`` is R's *variance* (s^2), added directly to means in
  seconds when testing equivalence.
- ``delta`` is a string: absolute seconds (warmup_stats' default ``"0.001"``,
  not scaled with iterations: ``PAPER_DELTA``) or ``"N%"``, which means
  ``min(segment means) * (N / 100)`` of that process execution (the fastest
  segment). coldrun's default is ``"2%"`` (``DEFAULT_DELTA``; DESIGN.md
  "Exactness is a mode, not a ceiling"), chosen by
  ``bench/bench_classification_scale.py``; ``--delta 0.001`` reproduces
  warmup_stats bit for bit.
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
# warmup_stats' delta (absolute seconds), chosen for iterations of 0.1 s and more; `--delta 0.001`.
PAPER_DELTA = "0.001"
# coldrun's default: 2% of the fastest segment's mean (warmup_stats' own "N%" form), which scales with the
# iteration time; chosen by bench/bench_classification_scale.py (docs/coverage.md).
DEFAULT_DELTA = "2%"
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
        raise ValueError(f"delta must be seconds (e.g. 0.001) or a percentage (e.g. 1%), not {delta!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"delta must be a finite, non-negative number of seconds, not {delta!r}")
    return value, None


# An absolute delta is blind to changes smaller than itself: it resolves a key's changes when it is at most
# this share of the key's median iteration time (the paper's 1 ms of its 0.1 s iterations is 1%).
# supervisor/boot/rehearsal.py keeps a copy (the supervisor does not import analysis).
RESOLVABLE_SHARE = 0.01


def describe_delta(delta: str) -> str:
    """The equivalence rule a delta stands for, in words, for reports."""
    absolute, percent = parse_delta(delta)
    paper = "the paper's rule" if delta == PAPER_DELTA else f"the paper's: --delta {PAPER_DELTA}"
    default = "coldrun's default; " if delta == DEFAULT_DELTA else ""
    if absolute is not None:
        return f"equivalence within max(variance, {delta} s) of the final segment ({default}{paper})"
    return (f"equivalence within max(variance, {percent:g}% of the fastest segment's mean) of the final segment "
            f"({default}{paper})")


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale / 10:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def resolution_warning(key: str, delta: str, median_time: float) -> str | None:
    """One line when an absolute ``delta`` cannot resolve changes at a key's ``median_time`` (seconds), else None.

    Such a delta hides every change smaller than ``delta / median_time`` of the mean.
    """
    absolute, _percent = parse_delta(delta)
    if absolute is None or not absolute or not median_time > 0 or absolute <= RESOLVABLE_SHARE * median_time:
        return None
    unseen = float(f"{absolute / median_time * 100:.2g}")     # 2 significant digits, no exponent
    return (f"{key}: iterations take {_duration(median_time)}, under what --delta {delta} s can resolve "
            f"(changes below ~{unseen:g}% go unseen); use the default relative rule (--delta {DEFAULT_DELTA}) "
            "or raise the benchmark's param")


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


def bootstrap_segments(times: Sequence[float], outliers: Sequence[int],
                       ranges: Sequence[tuple[int, int]]) -> list[list[float]]:
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
