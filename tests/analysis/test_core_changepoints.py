"""Changepoints: bit-exact against R's own outputs, and against a slow oracle."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import _pelt
from analysis.changepoints import (
    TooShortForChangepoints,
    cpt_meanvar,
    map_to_original,
    penalty_for,
    segment_execution,
)

GOLDEN = Path("/work/shared/golden/changepoint/cpt_meanvar_pelt.json")


def _golden_cases() -> list[dict]:
    if not GOLDEN.exists():
        return []
    return json.loads(GOLDEN.read_text())["cases"]


CASES = _golden_cases()


@pytest.mark.skipif(not CASES, reason=f"R golden file {GOLDEN} not present")
def test_golden_file_has_all_cases():
    assert len(CASES) == 107


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_r_bit_for_bit(case):
    x = case["x"]
    expected = case["expected"]
    result = cpt_meanvar(x)
    assert result.penalty == expected["penalty"]
    assert result.cpts == expected["cpts"]
    # Exact float equality: R's param.est to the last bit.
    assert result.means == expected["means"]
    assert result.variances == expected["variances"]


def _oracle(x: list[float], pen: float) -> list[int]:
    """Straight transcription of R's PELT semantics (slow, no shortcuts)."""
    n = len(x)
    arr = np.asarray(x, dtype=np.float64)
    s1 = np.concatenate([[0.0], np.cumsum(arr.astype(np.longdouble)).astype(np.float64)])
    s2 = np.concatenate([[0.0], np.cumsum((arr * arr).astype(np.longdouble)).astype(np.float64)])
    l2p = math.log(2 * math.pi)

    def cost(a: float, b: float, m: int) -> float:
        sig = (b - ((a * a) / m)) / m
        if sig <= 0:
            sig = 0.00000000001
        return m * (l2p + math.log(sig) + 1)

    like = [0.0] * (n + 1)
    last = [0] * (n + 1)
    like[0] = -pen
    for j in (2, 3):
        like[j] = cost(float(s1[j]), float(s2[j]), j)
    check = [0, 2]
    for t in range(4, n + 1):
        vals = [(like[c] + cost(float(s1[t] - s1[c]), float(s2[t] - s2[c]), t - c)) + pen for c in check]
        best = min(vals)
        which = vals.index(best)
        like[t] = best
        last[t] = check[which]
        check = [c for c, v in zip(check, vals) if v <= best + pen] + [t - 1]
    out, at = [], n
    while at != 0:
        out.append(at)
        at = last[at]
    return sorted(out)


series = st.one_of(
    # Noisy levels with shifts.
    st.lists(st.floats(0.5, 2.0), min_size=4, max_size=60).map(
        lambda v: [round(a, 3) for a in v]
    ),
    # Timer-quantised, with long constant runs (variance floor, ties).
    st.lists(st.sampled_from([0.0123, 0.0124, 0.0125]), min_size=4, max_size=60),
    # Tiny relative noise (cancellation in the variance).
    st.lists(st.integers(0, 5), min_size=4, max_size=60).map(lambda v: [3.5679 + k * 1e-7 for k in v]),
)


@settings(max_examples=150, deadline=None)
@given(series)
def test_fast_path_agrees_with_oracle(x):
    pen = penalty_for(len(x))
    assert cpt_meanvar(x).cpts == _oracle(x, pen)


def test_fewer_than_four_points_is_refused():
    with pytest.raises(TooShortForChangepoints, match="at least 4"):
        cpt_meanvar([1.0, 2.0, 3.0])
    # Four points is R's minimum and works: one segment.
    assert cpt_meanvar([1.0, 1.1, 1.0, 1.1]).cpts == [4]


def test_non_finite_and_extreme_values_are_refused():
    with pytest.raises(ValueError, match="finite"):
        cpt_meanvar([1.0, float("nan"), 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="1e-100"):
        cpt_meanvar([1.0, 1e-300, 1.0, 1.0, 1.0])
    # Zero times (a coarse timer) are fine.
    assert cpt_meanvar([0.0, 0.0, 0.0, 0.0, 1e-3, 1e-3, 1e-3, 1e-3]).cpts[-1] == 8


def test_map_to_original_moves_ends_past_outliers():
    # Reduced ends 2 and 5; outliers at original 1 and 4 shift them.
    assert map_to_original([2, 5], [1, 4]) == [3, 7]
    # An outlier after every end changes nothing.
    assert map_to_original([2, 5], [9]) == [2, 5]


def test_segment_execution_excludes_outliers_and_maps_back():
    rng = np.random.default_rng(5)
    times = list(rng.normal(2.0, 0.01, 100)) + list(rng.normal(1.0, 0.01, 100))
    times[150] = 50.0  # a spike, marked as an outlier
    seg = segment_execution(times, [150])
    assert seg.changepoints == [99]
    assert len(seg.means) == 2
    assert abs(seg.means[1] - 1.0) < 0.01  # the spike was removed before R's call


def test_scalar_and_vector_paths_agree():
    """The AVX2 kernel and the portable one take the same decisions."""
    code = (
        "import json,sys;from analysis.changepoints import cpt_meanvar;"
        "cases=json.load(open(sys.argv[1]))['cases'];"
        "print(json.dumps([cpt_meanvar(c['x']).cpts for c in cases[:12]]))"
    )
    if not CASES:
        pytest.skip(f"R golden file {GOLDEN} not present")
    outs = []
    for scalar in (False, True):
        env = dict(os.environ)
        env.pop("COLDRUN_PELT_SCALAR", None)
        if scalar:
            env["COLDRUN_PELT_SCALAR"] = "1"
        outs.append(subprocess.run([sys.executable, "-c", code, str(GOLDEN)], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert outs[0] == outs[1]
    assert json.loads(outs[0]) == [c["expected"]["cpts"] for c in CASES[:12]]


def test_r_mean_matches_r_on_one_segment_series():
    one = [c for c in CASES if len(c["expected"]["cpts"]) == 1]
    if not one:
        pytest.skip("no single-segment case in the R golden file")
    for case in one:
        assert _pelt.r_mean(np.asarray(case["x"], dtype=np.float64)) == case["expected"]["means"][0]
