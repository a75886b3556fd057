"""Steady state before the duet ratios: Pilot's dominant EDM segment per side, intersected."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.duet import stats, steady
from analysis.duet.pairs import paired_runs
from analysis.pilot import edm


def warm(rng, n: int, warmup: int, slow: float, fast: float) -> list[float]:
    return [float(v) for v in np.where(np.arange(n) < warmup, slow, fast) * rng.lognormal(0, 0.01, n)]


def test_each_execution_keeps_the_intersection_of_its_sides_stable_segments():
    rng = np.random.default_rng(31)
    x = [warm(rng, 150, 40, 2.0, 1.0), warm(rng, 150, 50, 2.0, 1.0)]
    y = [warm(rng, 150, 50, 3.0, 1.5), warm(rng, 150, 40, 3.0, 1.5)]
    trimmed, trims = steady.steady_state(paired_runs({"x": x, "y": y}, "t"))
    for t, xr, yr in zip(trims, x, y):
        assert (t.x.begin, t.x.end) == edm.dominant_segment(xr) and t.x.note is None
        assert (t.y.begin, t.y.end) == edm.dominant_segment(yr) and t.y.note is None
        assert (t.begin, t.end) == (max(t.x.begin, t.y.begin), min(t.x.end, t.y.end))
        assert t.begin >= 50  # both warm-ups gone
        record = t.as_json()
        assert record["kept"] == [t.begin, t.end] and record["excluded_before"] == t.begin
        assert record["excluded_after"] == 150 - t.end
    assert [len(r) for r in trimmed.x] == [t.end - t.begin for t in trims] == [len(r) for r in trimmed.y]
    assert trimmed.x[0] == tuple(x[0][trims[0].begin:trims[0].end])
    # after the cut the ratio is the steady one, 1.0 / 1.5
    assert stats.ggms(stats.all_gms(trimmed)) == pytest.approx(1 / 1.5, rel=0.01)
    whole = paired_runs({"x": x, "y": y}, "t")
    assert stats.all_gms(whole)[0] < 0.65  # x warm for 40, y for 50: the uncut ratio is biased


def test_short_sides_are_kept_whole_and_say_so():
    rng = np.random.default_rng(32)
    x = [warm(rng, 29, 0, 1.0, 1.0), warm(rng, 150, 40, 2.0, 1.0)]
    y = [warm(rng, 29, 0, 1.0, 1.0), [1.5] * 150]
    trimmed, trims = steady.steady_state(paired_runs({"x": x, "y": y}, "t"))
    assert (trims[0].begin, trims[0].end) == (0, 29)
    assert trims[0].x.note == trims[0].y.note == steady.TOO_SHORT
    assert trimmed.x[0] == tuple(x[0])
    assert (trims[1].y.begin, trims[1].y.end) == (0, 150)  # a constant side: no changepoint
    assert trims[1].x.note is None and (trims[1].begin, trims[1].end) == edm.dominant_segment(x[1])


def test_no_dominant_segment_keeps_the_side_whole():
    levels = [1.0] * 40 + [2.0] * 40 + [3.0] * 40 + [4.0] * 40
    assert edm.dominant_segment(levels) is None
    segment = steady.side_segment(levels)
    assert (segment.begin, segment.end, segment.note) == (0, 160, steady.NO_DOMINANT)


def test_whole_keeps_everything():
    runs = paired_runs({"x": [[1.0] * 40, [2.0] * 5], "y": [[1.0] * 40, [2.0] * 5]}, "t")
    trims = steady.whole(runs)
    assert [(t.begin, t.end) for t in trims] == [(0, 40), (0, 5)]
