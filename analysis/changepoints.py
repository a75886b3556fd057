"""Changepoints exactly as warmup_stats obtained them from R.

warmup_stats calls ``changepoint::cpt.meanvar(x, method="PELT",
penalty="Manual", pen.value=15*log(n))`` (changepoint 2.2.2, Normal test
statistic, minseglen 2) on a process execution's in-process iteration times
with its outliers *deleted*, then maps the segment ends back to indices of
the original series. :func:`cpt_meanvar` is the R call (C extension
``analysis._pelt``, bit-identical cpts, means and variances);
:func:`segment_execution` is warmup_stats' use of it.

Conventions copied from warmup_stats (``bin/mark_changepoints_in_json``):

- ``n`` and the penalty ``15*log(n)`` use the series *after* outlier removal.
- R's cpts are 1-based segment ends including ``n``; warmup_stats subtracts 1
  (0-based index of the last point of each segment), then for every outlier
  ``o`` in ascending order adds 1 to every changepoint ``>= o``. A changepoint
  thus becomes the original index of the last non-outlier point of its
  segment, and an outlier between two segments joins the later one.
- The stored ``changepoints`` are those ends without the last one (which is
  always ``len - 1`` of the reduced series, mapped back).
- Means and variances are R's ``param.est``: computed on the outlier-free
  data, variance divided by the segment length.

Short series: R stops with an error when fewer than 4 points remain
(``n < 2*minseglen``), so warmup_stats could never classify them.
coldrun raises :class:`TooShortForChangepoints`; the pipeline reports such a
process execution as unclassifiable (classification ``None``) with a
warning, and keeps analysing the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

import analysis._pelt as _pelt

MIN_SEGMENT_LENGTH = 2
# R needs at least two minimum-length segments' worth of data.
MIN_POINTS = 2 * MIN_SEGMENT_LENGTH
# The C fast path bounds its approximate log for normal doubles only, which
# these limits guarantee for every non-floored segment variance; timings are
# nowhere near them, so values outside are rejected rather than guessed.
MAX_ABS_VALUE = 1e100
MIN_ABS_NONZERO = 1e-100


def out_of_range(times: Sequence[float] | np.ndarray) -> str | None:
    """Why the changepoint analysis cannot take these times (as the C code says it), or None: the Pilot
    estimate of the same execution refuses them too, so `table` and `pilot` never disagree on what was
    measured (1e-300 s was averaged by one and dropped by the other)."""
    arr = np.asarray(times, dtype=np.float64)
    magnitude = np.abs(arr)
    bad = ~np.isfinite(arr) | (magnitude >= MAX_ABS_VALUE) | ((magnitude < MIN_ABS_NONZERO) & (arr != 0))
    if not bad.any():
        return None
    return (f"iteration times must be finite, and 0 or between {MIN_ABS_NONZERO:g} and {MAX_ABS_VALUE:g} "
            f"in magnitude (iteration {int(np.flatnonzero(bad)[0])} took {float(arr[bad][0])!r} s)")


class TooShortForChangepoints(ValueError):
    """Fewer than 4 non-outlier iterations: R's cpt.meanvar refuses them."""


@dataclass(frozen=True)
class CptResult:
    """What ``cpt.meanvar`` returns: 1-based segment ends (incl. n), param.est."""

    cpts: list[int]
    means: list[float]
    variances: list[float]
    penalty: float


@dataclass(frozen=True)
class ExecutionSegments:
    """warmup_stats' per-process-execution changepoint annotations."""

    changepoints: list[int]  # original 0-based index of each segment's last point, last one dropped
    means: list[float]
    variances: list[float]


def penalty_for(n: int) -> float:
    """warmup_stats' manual penalty, ``15.0 * numpy.log(n)`` (equal to R's ``15*log(n)``)."""
    return 15.0 * math.log(n)


def cpt_meanvar(x: Sequence[float] | np.ndarray, penalty: float | None = None,
                progress: np.ndarray | None = None) -> CptResult:
    """R's ``cpt.meanvar(x, method="PELT", penalty="Manual", pen.value=penalty)``.

    ``penalty`` defaults to ``15*log(len(x))``. Raises
    :class:`TooShortForChangepoints` when ``len(x) < 4`` and ``ValueError`` on
    non-finite or absurdly large values.  ``progress``: a one-element int64 array the search stores its
    step into now and then (analysis.key_progress).
    """
    arr = np.ascontiguousarray(x, dtype=np.float64)
    n = arr.shape[0]
    if n < MIN_POINTS:
        raise TooShortForChangepoints(
            f"{n} iterations left after removing outliers; changepoint analysis needs at least {MIN_POINTS}"
        )
    # _pelt.cpt_meanvar itself refuses values that are not finite or lie outside
    # [MIN_ABS_NONZERO, MAX_ABS_VALUE) (zero allowed), with a ValueError.
    pen = penalty_for(n) if penalty is None else float(penalty)
    extra = {} if progress is None else {"progress": progress}
    cpts, means, variances = _pelt.cpt_meanvar(arr, pen, MIN_SEGMENT_LENGTH, **extra)
    return CptResult(cpts=cpts, means=means, variances=variances, penalty=pen)


def map_to_original(reduced_ends: Sequence[int], outliers: Sequence[int]) -> list[int]:
    """Map 0-based segment ends in the outlier-free series back to original indices.

    For each outlier in ascending order, every end ``>= outlier`` moves up by one
    (warmup_stats' loop, which is the standard reduced-to-original index map).
    """
    ends = list(reduced_ends)
    for o in sorted(outliers):
        for i, c in enumerate(ends):
            if c >= o:
                ends[i] = c + 1
    return ends


def segment_execution(times: Sequence[float] | np.ndarray, outliers: Sequence[int],
                      progress: np.ndarray | None = None) -> ExecutionSegments:
    """Changepoints, segment means and variances for one process execution.

    ``outliers`` are 0-based indices (warmup_stats' ``all_outliers``); they are
    deleted before the R call. Raises :class:`TooShortForChangepoints` when
    fewer than 4 points remain.
    """
    arr = np.asarray(times, dtype=np.float64)
    if len(outliers):
        keep = np.ones(arr.shape[0], dtype=bool)
        keep[np.asarray(outliers, dtype=np.int64)] = False
        reduced = arr[keep]
    else:
        reduced = arr
    result = cpt_meanvar(reduced, progress=progress)
    ends = map_to_original([c - 1 for c in result.cpts], outliers)
    return ExecutionSegments(changepoints=ends[:-1], means=result.means, variances=result.variances)
