"""Outliers: warmup_stats' sliding window, exactly."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.outliers import default_window, find_outliers, median, percentile, split_common_unique


def _reference(data: list[float], window: int) -> list[int]:
    """warmup_stats' loop, transcribed literally (one window at a time)."""
    half = window // 2
    size = len(data)
    found = []
    for i, datum in enumerate(data):
        lo = 0 if i - half < 0 else i - half
        hi = size if i + half > size else i + half
        if lo == 0 and hi < window:
            continue
        win = sorted(data[lo:hi])
        med = median(win)
        band = 3 * (percentile(win, 90.0) - percentile(win, 10.0))
        if datum > med + band or datum < med - band:
            found.append(i)
    return found


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.floats(0.9, 1.1), st.sampled_from([0.5, 3.0, 1.0])), min_size=0, max_size=120),
    st.integers(2, 41),
)
def test_vectorised_equals_literal_loop(data, window):
    assert find_outliers(data, window) == _reference(data, window)


def test_first_half_window_is_never_an_outlier():
    data = [1.0] * 100
    data[3] = 1000.0  # inside the first half window (w=20): not tested
    data[50] = 1000.0
    assert find_outliers(data, 20) == [50]


def test_odd_window_skips_one_more_iteration():
    data = [1.0, 1.01, 0.99] * 20
    data[10] = 50.0  # half = 10: tested for even w=20, skipped for odd w=21
    assert 10 in find_outliers(data, 20)
    assert 10 not in find_outliers(data, 21)


def test_clipped_window_at_the_end_is_still_tested():
    data = [1.0, 1.01, 0.99, 1.02] * 25
    data[-1] = 40.0
    assert find_outliers(data, 20)[-1] == len(data) - 1


def test_strict_inequality_at_the_band_edge():
    # Window of identical values: band 0, median 1.0; equal values are not outliers.
    assert find_outliers([1.0] * 50, 10) == []


def test_percentile_is_warmup_stats_formula_not_numpy():
    d = [0.1, 0.2, 0.30000000000000004, 0.7, 1.3]
    idx = (len(d) - 1) * 0.9
    f, c = math.floor(idx), math.ceil(idx)
    assert percentile(d, 90.0) == d[f] * (c - idx) + d[c] * (idx - f)
    assert median([1.0, 2.0, 4.0, 8.0]) == 3.0
    assert median([1.0, 2.0, 4.0]) == 2.0


def test_tiny_windows_mark_nothing():
    assert find_outliers([1.0, 100.0, 1.0, 1.0], 1) == []
    assert find_outliers([], 10) == []


def test_default_window_is_a_tenth():
    assert default_window(2000) == 200
    assert default_window(505) == 50


def test_common_and_unique_with_threshold():
    all_out = [[5, 7], [5], [9]]
    common, unique = split_common_unique(all_out, 1)
    assert common == [[5], [5], []]
    assert unique == [[7], [], [9]]
    common2, unique2 = split_common_unique(all_out + [[5]], 2)
    assert common2[0] == [5] and unique2[0] == [7]
    assert common2[2] == [] and unique2[2] == [9]


def test_numpy_random_series_matches_reference():
    rng = np.random.default_rng(11)
    data = list(rng.normal(1.0, 0.01, 700))
    for i in rng.choice(700, 15, replace=False):
        data[i] *= 1.5
    assert find_outliers(data, 70) == _reference(data, 70)


def test_large_windows_are_kept_in_a_rank_tree_with_the_same_result():
    """Issue 26 item 20: a window of more than 2048 points (10% of 20,480+ iterations) is kept as counts over
    the series' order (O(log n) a step, not a memmove of the window: 46 s at a million iterations); the same
    outliers as the literal loop, ties and spikes included, at even and odd windows and the clipped ends."""
    rng = np.random.default_rng(26)
    for n, window in ((5000, 4100), (6001, 2049), (4500, 4501)):
        data = list(np.round(1.0 + 0.01 * rng.standard_normal(n), 3))   # rounded: many ties
        for i in rng.choice(n, 40, replace=False):
            data[i] = float(rng.choice([0.5, 3.0, 1.0]))
        assert find_outliers(data, window) == _reference(data, window), (n, window)


def test_a_million_iterations_take_seconds_not_minutes():
    import time
    data = 1.0 + 0.01 * np.random.default_rng(1).standard_normal(1_000_000)
    data[::997] = 5.0
    t0 = time.process_time()
    found = find_outliers(data, default_window(len(data)))
    assert time.process_time() - t0 < 10      # was 46 s of CPU on the development VM
    assert len(found) > 900
