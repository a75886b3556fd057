"""Classification and steady-state numbers: warmup_stats' rules, off-by-ones included."""

from __future__ import annotations

import pytest

from analysis.classify import (
    FLAT,
    NO_STEADY_STATE,
    SLOWDOWN,
    WARMUP,
    absolute_delta,
    bootstrap_segments,
    classify_execution,
    default_steady,
    parse_delta,
    steady_state,
)

PAPER = "0.001"   # warmup_stats' delta; coldrun's default is relative (test_classification_scale.py)


def test_no_changepoints_is_flat():
    assert classify_execution([], [1.0], [0.0], 100, 25) == FLAT


def test_equivalent_segments_are_flat_despite_changepoints():
    # Means differ by less than delta (0.001 s): still flat.
    assert classify_execution([40], [1.0005, 1.0], [0.0, 0.0], 100, 25, delta=PAPER) == FLAT


def test_faster_earlier_segment_is_slowdown():
    assert classify_execution([40], [0.5, 1.0], [0.0, 0.0], 100, 25) == SLOWDOWN


def test_slower_earlier_segment_is_warmup():
    assert classify_execution([40], [2.0, 1.0], [0.0, 0.0], 100, 25) == WARMUP


def test_change_inside_the_steady_window_is_no_steady_state():
    # The non-equivalent segment ends at 80 > 100 - 25.
    assert classify_execution([80], [2.0, 1.0], [0.0, 0.0], 100, 25) == NO_STEADY_STATE
    # Ending exactly at length - steady is still allowed (strict '>').
    assert classify_execution([75], [2.0, 1.0], [0.0, 0.0], 100, 25) == WARMUP


def test_warmup_keeps_scanning_backwards():
    # Second-last segment slower (warmup), but an earlier one is faster: slowdown.
    assert classify_execution([10, 40], [0.5, 2.0, 1.0], [0.0, 0.0, 0.0], 100, 25) == SLOWDOWN


def test_variance_widens_equivalence():
    # Variance (s^2) added to the mean directly: 1.3 - 0.4 <= 1.0 + 0.001.
    assert classify_execution([40], [1.3, 1.0], [0.4, 0.0], 100, 25, delta=PAPER) == FLAT


def test_percentage_delta_is_relative_to_fastest_segment():
    assert absolute_delta("10%", [2.0, 1.0]) == 1.0 * (10.0 / 100)
    assert classify_execution([40], [1.05, 1.0], [0.0, 0.0], 100, 25, delta="10%") == FLAT
    assert classify_execution([40], [1.05, 1.0], [0.0, 0.0], 100, 25, delta="1%") == WARMUP


def test_the_default_delta_scales_with_the_iteration_time_and_the_papers_does_not():
    # The demo's spectralnorm:c #1: 0.592 ms then 0.865 ms (+46%), a changepoint at 75.
    assert classify_execution([75], [0.592e-3, 0.865e-3], [0.0, 0.0], 200, 50) == SLOWDOWN
    assert classify_execution([75], [0.592e-3, 0.865e-3], [0.0, 0.0], 200, 50, delta=PAPER) == FLAT
    # At 1 s a 1.5% step is no change under the default, a warm-up under the paper's 1 ms.
    assert classify_execution([75], [1.015, 1.0], [0.0, 0.0], 200, 50) == FLAT
    assert classify_execution([75], [1.015, 1.0], [0.0, 0.0], 200, 50, delta=PAPER) == WARMUP


@pytest.mark.parametrize("bad", ["abc", "%", "-1", "nan", "1%%"])
def test_bad_delta_is_rejected_with_a_message(bad):
    with pytest.raises(ValueError, match="delta"):
        parse_delta(bad)


def test_default_steady_is_a_quarter():
    assert default_steady(2000) == 500
    assert default_steady(501) == 125


def test_steady_numbers_off_by_ones():
    times = [3.0] * 10 + [1.0] * 30
    # One changepoint: segment 0 is iterations 0..9, steady from 10.
    st = steady_state(times, [], [9], [3.0, 1.0], [0.0, 0.0], WARMUP)
    assert st.steady_iteration == 10  # changepoint + 1
    assert st.time_to_steady == 27.0  # sum(times[0:9]): the last warm-up iteration is excluded
    assert st.steady_state_mean == 1.0
    # Last segment resampled from the changepoint itself (one point early).
    assert st.bootstrap_ranges == [(9, 40)]


def test_flat_steady_numbers():
    st = steady_state([1.0] * 20, [], [], [1.0], [0.0], FLAT)
    assert (st.steady_iteration, st.time_to_steady) == (1, 0.0)
    assert st.bootstrap_ranges == [(0, 20)]


def test_equivalent_earlier_segments_join_the_steady_state():
    times = [3.0] * 10 + [1.0] * 10 + [1.0005] * 20
    st = steady_state(times, [25], [9, 19], [3.0, 1.0, 1.0005], [0.0, 0.0, 0.0], WARMUP, delta=PAPER)
    assert st.first_steady_segment == 1
    assert st.steady_iteration == 10
    assert st.steady_state_mean == (1.0 + 1.0005) / 2
    assert st.bootstrap_ranges == [(19, 40), (10, 20)]
    segs = bootstrap_segments(times, [25], st.bootstrap_ranges)
    assert [len(s) for s in segs] == [20, 10]  # outlier 25 excluded


def test_no_steady_state_has_no_steady_numbers():
    with pytest.raises(ValueError):
        steady_state([1.0] * 10, [], [8], [2.0, 1.0], [0.0, 0.0], NO_STEADY_STATE)
