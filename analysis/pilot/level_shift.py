"""Does Pilot's stable segment span a level shift? EDM's dominant segment can hold a jump that
warmup_stats' changepoints (PELT, ``analysis.changepoints``) mark, and its mean then averages two levels.
Checked on the segment alone, outliers removed as warmup_stats removes them; only a shift between two
segments of at least MIN_SIDE iterations whose means differ by LEVEL_RATIO or more counts, so one spike or
the noise of a steady state does not."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Sequence

if TYPE_CHECKING:
    import numpy as np

from analysis import changepoints as cp
from analysis import outliers

LEVEL_RATIO = 1.5
MIN_SIDE = 5


class LevelShift(NamedTuple):
    iteration: int      # the first iteration of the new level (0-based, in the whole execution)
    before: float
    after: float

    def phrase(self) -> str:
        return (f"spans a level shift at iteration {self.iteration} (mean {self.before:.4g} s -> {self.after:.4g} s, "
                "a warmup_stats changepoint): its mean averages two levels")


def level_shift(times: Sequence[float] | np.ndarray, segment: tuple[int, int]) -> LevelShift | None:
    begin, end = segment
    part = list(times[begin:end])
    if len(part) < 2 * MIN_SIDE:
        return None
    try:
        seg = cp.segment_execution(part, outliers.find_outliers(part, max(1, len(part) // 10)))
    except ValueError:
        return None
    bounds = [-1, *seg.changepoints, len(part) - 1]
    for k, cpt in enumerate(seg.changepoints):
        before, after = seg.means[k], seg.means[k + 1]
        long_enough = bounds[k + 1] - bounds[k] >= MIN_SIDE and bounds[k + 2] - bounds[k + 1] >= MIN_SIDE
        if long_enough and min(before, after) > 0 and max(before, after) / min(before, after) >= LEVEL_RATIO:
            return LevelShift(begin + cpt + 1, before, after)
    return None
