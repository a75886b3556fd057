"""Outlier marking exactly as warmup_stats' ``mark_outliers_in_json``.

For in-process iteration ``i`` of a process execution of ``size`` iterations
and a window ``w`` (warmup_stats' front end uses ``int(0.1 * iterations)``):

- ``half = w // 2`` (Python 2 integer division in the original);
- the window is ``data[max(0, i-half) : min(size, i+half)]`` -- centred,
  upper bound exclusive, clipped at both ends (so it shrinks near the end and
  is still tested there);
- iterations whose window starts at 0 but ends before ``w`` are never
  outliers: the first ``half`` iterations for even ``w``, ``half + 1`` for odd
  ``w``, and nearly all of them when ``size < w``;
- ``i`` is an outlier when ``data[i] > median + band`` or
  ``data[i] < median - band`` (strict), ``band = 3 * (p90 - p10)``, with
  warmup_stats' own median and percentile formulas (see :func:`percentile`),
  which are not numpy's;
- coldrun addition: a window below 2 (possible only for fewer than 20
  iterations with the default ratio) marks nothing; warmup_stats would crash
  on the empty window.

Common/unique split (plots only): an outlier index of execution ``p`` is
*common* when the same index is an outlier in at least ``threshold`` *other*
executions of the same benchmark, otherwise *unique*. The front end uses the
default threshold 1.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

import analysis._pelt as _pelt

DEFAULT_WINDOW_RATIO = 0.1
DEFAULT_THRESHOLD = 1
BAND_FACTOR = 3  # median +- BAND_FACTOR * (p90 - p10); the C code (_pelt.c) uses the same 3


def default_window(iterations: int) -> int:
    """warmup_stats' front-end default: ``int(iterations * 0.1)``."""
    return int(iterations * DEFAULT_WINDOW_RATIO)


def median(sorted_data: Sequence[float]) -> float:
    """warmup_stats' median of already sorted data."""
    size = len(sorted_data)
    if size == 0:
        raise ValueError("median of no data")
    index = (size - 1) // 2
    if size % 2 == 1:
        return sorted_data[index]
    return (sorted_data[index] + sorted_data[index + 1]) / 2.0


def percentile(sorted_data: Sequence[float], pc: float) -> float:
    """warmup_stats' percentile: ``d[f]*(c-idx) + d[c]*(idx-f)``, ``idx = (n-1)*(pc/100)``."""
    size = len(sorted_data)
    if size == 0:
        raise ValueError("percentile of no data")
    if size == 1:
        return sorted_data[0]
    index = (size - 1) * (pc / 100.0)
    f, c = math.floor(index), math.ceil(index)
    if f == c:
        return sorted_data[int(index)]
    return sorted_data[f] * (c - index) + sorted_data[c] * (index - f)


def find_outliers(data: Sequence[float] | np.ndarray, window: int) -> list[int]:
    """0-based indices of the outliers of one process execution (``all_outliers``).

    Runs in C (``analysis._pelt.outliers``): the same rule and the same double
    expressions as :func:`median`/:func:`percentile`, with the window kept
    sorted incrementally instead of re-sorting each one.
    """
    arr = np.ascontiguousarray(data, dtype=np.float64)
    if window < 0:
        raise ValueError("the outlier window must not be negative")
    return _pelt.outliers(arr, int(window))


def split_common_unique(
    all_outliers: Sequence[Sequence[int]], threshold: int = DEFAULT_THRESHOLD
) -> tuple[list[list[int]], list[list[int]]]:
    """warmup_stats' ``get_outliers``: per execution, (common, unique) outliers."""
    counts: dict[int, int] = {}
    per_exec_sets = [set(o) for o in all_outliers]
    for s in per_exec_sets:
        for idx in s:
            counts[idx] = counts.get(idx, 0) + 1
    common: list[list[int]] = []
    unique: list[list[int]] = []
    for outliers, own in zip(all_outliers, per_exec_sets):
        c_exec: list[int] = []
        u_exec: list[int] = []
        for idx in outliers:
            # Other executions holding the same index (this one counted once).
            others = counts[idx] - (1 if idx in own else 0)
            (c_exec if others >= threshold else u_exec).append(idx)
        common.append(c_exec)
        unique.append(u_exec)
    return common, unique
