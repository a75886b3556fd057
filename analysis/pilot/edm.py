"""Pilot's stable-phase detection: EDM changepoints and the dominant segment.

Pilot (libpilot) finds a run's warm-up and cool-down with Twitter
BreakoutDetection's ``EDM_percent`` (E-divisive with medians, percent-change
penalty), called with ``min_size=30, percent=0.25, degree=1``, and keeps the
one segment longer than half the run. The changepoints here are Pilot's, bit
for bit (C extension ``analysis._edm``; ``shared/reference/methods.md`` §1 (a)
and ``docs/architecture.md`` say why they are exact):

- :func:`changepoints` is ``pilot_changepoint_detection``;
- :func:`dominant_segment` is ``pilot_find_dominant_segment``;
- Pilot's ``pilot_find_one_changepoint`` is the last of :func:`changepoints`
  (the tests check that against Pilot's own answers; nothing here needs it).

Fewer than ``min_size`` readings raise :class:`TooFewReadings` (Pilot's
ERR_NOT_ENOUGH_DATA, rc 30). ``algorithm="reference"`` runs EDM as written
(O(n^2 log n)) instead of the O(n^2) path; both give the same changepoints,
and tests and bench/bench_pilot_edm.py compare them.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Literal, Sequence

import analysis._edm as _edm

if TYPE_CHECKING:
    import numpy as np

MIN_SIZE = 30  # libpilot's MIN_CHANGEPOINT_DETECTION_SAMPLE_SIZE
PERCENT = 0.25
DEGREE = 1  # linear penalty, G(k) = 1

Algorithm = Literal["fast", "reference"]


class TooFewReadings(ValueError):
    """Fewer readings than ``min_size``: Pilot's ERR_NOT_ENOUGH_DATA (rc 30)."""


def _doubles(x: Sequence[float] | np.ndarray) -> memoryview | array:
    """x as a buffer of C doubles, without a copy when it already is one."""
    try:
        view = memoryview(x)  # type: ignore[arg-type]
    except TypeError:
        view = None
    if view is not None and view.format == "d" and view.ndim == 1 and view.c_contiguous:
        return view
    return array("d", x)


def _edm_changepoints(z: memoryview | array, min_size: int, percent: float, degree: int,
                      algorithm: Algorithm) -> list[int]:
    if algorithm not in ("fast", "reference"):
        raise ValueError(f"algorithm must be 'fast' or 'reference', not {algorithm!r}")
    if len(z) < min_size:
        raise TooFewReadings(f"EDM needs at least {min_size} readings, got {len(z)}")
    return _edm.changepoints(z, min_size, percent, degree, algorithm == "reference")


def changepoints(x: Sequence[float] | np.ndarray, *, min_size: int = MIN_SIZE, percent: float = PERCENT,
                 degree: int = DEGREE, algorithm: Algorithm = "fast") -> list[int]:
    """Pilot's EDM changepoints of ``x``: ascending indices where a segment starts (0 excluded).

    Raises :class:`TooFewReadings` when ``len(x) < min_size``, and ValueError
    for a NaN or infinite reading or a bad parameter.
    """
    return _edm_changepoints(_doubles(x), min_size, percent, degree, algorithm)


def dominant_segment(x: Sequence[float] | np.ndarray, *, min_size: int = MIN_SIZE, percent: float = PERCENT,
                     degree: int = DEGREE, algorithm: Algorithm = "fast") -> tuple[int, int] | None:
    """``[begin, end)`` of the segment between changepoints (or the ends) longer
    than ``len(x) // 2``; None when there is none (Pilot's rc 32).

    The segments start at 0 and end at ``len(x)``, so a leading warm-up and a
    trailing cool-down are left out; at most one segment can qualify.
    """
    z = _doubles(x)
    begin = 0
    for end in [*_edm_changepoints(z, min_size, percent, degree, algorithm), len(z)]:
        if end - begin > len(z) // 2:
            return begin, end
        begin = end
    return None

