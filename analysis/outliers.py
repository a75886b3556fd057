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
from numpy.lib.stride_tricks import sliding_window_view

DEFAULT_WINDOW_RATIO = 0.1
DEFAULT_THRESHOLD = 1
BAND_FACTOR = 3


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


def _percentile_rows(rows: np.ndarray, pc: float) -> np.ndarray:
    """:func:`percentile` of every (sorted) row at once, same expression."""
    size = rows.shape[1]
    if size == 1:
        return rows[:, 0].copy()
    index = (size - 1) * (pc / 100.0)
    f, c = math.floor(index), math.ceil(index)
    if f == c:
        return rows[:, int(index)].copy()
    return rows[:, f] * (c - index) + rows[:, c] * (index - f)


def _median_rows(rows: np.ndarray) -> np.ndarray:
    size = rows.shape[1]
    index = (size - 1) // 2
    if size % 2 == 1:
        return rows[:, index].copy()
    return (rows[:, index] + rows[:, index + 1]) / 2.0


def _outlier_mask(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    med = _median_rows(rows)
    band = BAND_FACTOR * (_percentile_rows(rows, 90.0) - _percentile_rows(rows, 10.0))
    return (values > med + band) | (values < med - band)


def find_outliers(data: Sequence[float] | np.ndarray, window: int) -> list[int]:
    """0-based indices of the outliers of one process execution (``all_outliers``)."""
    arr = np.asarray(data, dtype=np.float64)
    size = arr.shape[0]
    half = window // 2
    if half < 1 or size == 0:
        return []
    # First tested index: the window must not start at 0 with fewer than w points.
    first = next((i for i in range(size) if not (i - half <= 0 and min(size, i + half) < window)), size)
    found: list[np.ndarray] = []
    full = 2 * half
    # Indices with a full-width window [i-half, i+half) inside the data.
    last_full = size - half + 1  # exclusive
    if first < last_full and size >= full:
        starts = np.arange(first, last_full) - half
        windows = sliding_window_view(arr, full)[starts[0] : starts[-1] + 1]
        rows = np.sort(windows, axis=1)
        mask = _outlier_mask(arr[first:last_full], rows)
        found.append(np.nonzero(mask)[0] + first)
    # Tail: windows clipped at the end of the data, one width each.
    for i in range(max(first, last_full), size):
        lo, hi = max(0, i - half), min(size, i + half)
        rows = np.sort(arr[lo:hi])[np.newaxis, :]
        if _outlier_mask(arr[i : i + 1], rows)[0]:
            found.append(np.array([i]))
    if not found:
        return []
    return [int(i) for i in np.concatenate(found)]


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
        c_exec, u_exec = [], []
        for idx in outliers:
            # Other executions holding the same index (this one counted once).
            others = counts[idx] - (1 if idx in own else 0)
            (c_exec if others >= threshold else u_exec).append(idx)
        common.append(c_exec)
        unique.append(u_exec)
    return common, unique
