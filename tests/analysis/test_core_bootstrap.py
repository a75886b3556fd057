"""Steady-state bootstrap: warmup_stats' counts and interval rules, seeded."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.bootstrap import (
    bootstrap_steady_perf,
    confidence_indices,
    py2_str_round,
    resamples_per_execution,
    summarise_means,
)


def test_resample_counts():
    assert resamples_per_execution(100000, 30) == 3334
    assert resamples_per_execution(100000, 8) == 12501
    r = bootstrap_steady_perf([[[1.0, 2.0]]] * 8, resamples=1000, seed=1)
    assert r.resamples_per_execution == 126
    assert r.total_resamples == 126 * 8


def test_confidence_indices_decimal_rules():
    assert confidence_indices(100020) == (500, 99519)
    assert confidence_indices(100008) == (500, 99508)
    assert confidence_indices(10) == (0, 10)


def test_median_and_symmetric_ci():
    means = np.arange(1000, dtype=np.float64)[::-1].copy()
    median, ci = summarise_means(means)
    assert median == 499.5  # mean of the two middle values
    lo, hi = confidence_indices(1000)
    assert ci == ((hi - 1 - 499.5) + (499.5 - lo)) / 2


def test_resampling_stays_within_segments():
    # Each segment is constant, so any within-segment resample has the same mean;
    # mixing segments would change it.
    seg_a, seg_b = [1.0] * 30, [3.0] * 10
    r = bootstrap_steady_perf([[seg_a, seg_b]], resamples=500, seed=7)
    assert r.median == (30 * 1.0 + 10 * 3.0) / 40
    assert r.ci == 0.0


def test_executions_weigh_equally_whatever_their_length():
    short_fast = [[[1.0] * 5]]
    long_slow = [[[2.0] * 500]]
    r = bootstrap_steady_perf(short_fast + long_slow, resamples=1001, seed=3)
    assert r.median == 1.5  # half the means are 1.0, half are 2.0


def test_seeded_runs_reproduce_and_seeds_differ():
    rng = np.random.default_rng(0)
    data = [[list(rng.normal(1, 0.05, 200))] for _ in range(4)]
    a = bootstrap_steady_perf(data, resamples=4000, seed=42, key="k")
    b = bootstrap_steady_perf(data, resamples=4000, seed=42, key="k")
    c = bootstrap_steady_perf(data, resamples=4000, seed=43, key="k")
    assert (a.median, a.ci) == (b.median, b.ci)
    assert (a.median, a.ci) != (c.median, c.ci)


def test_ci_matches_theory_for_iid_data():
    rng = np.random.default_rng(1)
    values = list(rng.normal(1.0, 0.1, 1000))
    r = bootstrap_steady_perf([[values]], resamples=20000, seed=5)
    # 99% half-width of a mean of 1000 values: 2.576 * sd / sqrt(n).
    expected = 2.576 * np.std(values) / np.sqrt(1000)
    assert r.ci == pytest.approx(expected, rel=0.05)
    assert r.median == pytest.approx(np.mean(values), abs=expected / 5)


def test_py2_str_rounding():
    assert py2_str_round(0.42983401099123456) == 0.429834010991
    assert py2_str_round(2.0800000000001e-07) == 2.08e-07
    assert py2_str_round(2.0799999999812e-07) == 2.07999999998e-07


def test_empty_inputs_are_refused():
    with pytest.raises(ValueError):
        bootstrap_steady_perf([])
    with pytest.raises(ValueError):
        bootstrap_steady_perf([[[]]])


def test_portable_path_gives_the_same_statistics():
    """The scalar generator (no AVX2) is a different stream with the same law."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, json;from analysis.bootstrap import bootstrap_steady_perf as b;"
        "v=list(np.random.default_rng(1).normal(1.0,0.1,1000));"
        "r=b([[v[:600],v[600:]]],resamples=20000,seed=5);print(json.dumps([r.median,r.ci]))"
    )
    out = {}
    for scalar in (False, True):
        env = {k: v for k, v in os.environ.items() if k != "COLDRUN_PELT_SCALAR"}
        if scalar:
            env["COLDRUN_PELT_SCALAR"] = "1"
        out[scalar] = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                     capture_output=True, text=True).stdout
    import json

    (m0, c0), (m1, c1) = json.loads(out[False]), json.loads(out[True])
    assert c1 == pytest.approx(c0, rel=0.05)
    assert abs(m1 - m0) < c0 / 5
