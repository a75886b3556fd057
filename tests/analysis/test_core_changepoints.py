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

from shared_paths import GOLDEN as SHARED_GOLDEN
GOLDEN = SHARED_GOLDEN / "changepoint" / "cpt_meanvar_pelt.json"


def _golden_cases() -> list[dict]:
    return json.loads(GOLDEN.read_text())["cases"]  # missing R outputs fail loudly


CASES = _golden_cases()


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


def _oracle(x, pen: float) -> list[int]:
    """Line-by-line transcription of R's PELT loop (no shortcuts, no bounds).

    Element-wise numpy double arithmetic in R's operation order (numpy
    ufuncs round each operation like C); the logs come from the C library
    through ``math.log``, as in R (numpy's own log may differ in the last
    bit).
    """
    n = len(x)
    arr = np.asarray(x, dtype=np.float64)
    s1 = np.concatenate([[0.0], np.cumsum(arr.astype(np.longdouble)).astype(np.float64)])
    s2 = np.concatenate([[0.0], np.cumsum((arr * arr).astype(np.longdouble)).astype(np.float64)])
    l2p = math.log(2 * math.pi)

    def costs(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
        sig = (b - ((a * a) / m)) / m
        sig[sig <= 0] = 0.00000000001
        logs = np.fromiter(map(math.log, sig.tolist()), dtype=np.float64, count=sig.shape[0])
        return m * ((l2p + logs) + 1)

    like = np.zeros(n + 1)
    last = [0] * (n + 1)
    like[0] = -pen
    for j in (2, 3):
        like[j] = costs(s1[j : j + 1], s2[j : j + 1], np.array([float(j)]))[0]
    check = np.array([0, 2], dtype=np.int64)
    for t in range(4, n + 1):
        vals = (like[check] + costs(s1[t] - s1[check], s2[t] - s2[check], (t - check).astype(np.float64))) + pen
        which = int(np.argmin(vals))  # the first minimum, as R's strict '<' scan
        best = vals[which]
        like[t] = best
        last[t] = int(check[which])
        check = np.append(check[vals <= best + pen], t - 1)
    out, at = [], n
    while at != 0:
        out.append(at)
        at = last[at]
    return sorted(out)


SHAPES = (
    "flat", "quantised", "tiny_noise", "big_steps", "spikes", "constant_runs", "zeros", "variance_change",
    "constant", "periodic",
)


def _shaped_series(shape: str, n: int, seed: int) -> list[float]:
    """A seeded series of one of the shapes that stress the fast path's decisions.

    flat: homogeneous noise (nothing pruned, every candidate near the pruning
    threshold); quantised: values on a coarse grid (ties, floored variances);
    tiny_noise: relative noise ~1e-7 (cancellation in the variance); big_steps:
    level shifts of up to 100x (heavy pruning); spikes: isolated outliers;
    constant_runs: exactly constant segments (the 1e-11 floor) between noisy
    ones; zeros: runs of exact zeros; variance_change: same mean, different
    noise; constant: one value throughout (every segment floored: candidates
    tie up to rounding, the first in list order must win); periodic: a short
    repeated pattern (many equal segment costs).
    """
    rng = np.random.default_rng(seed)
    base = float(rng.uniform(1e-3, 5.0))
    x = base + rng.normal(0.0, base * float(rng.choice([1e-2, 1e-3, 1e-4])), n)
    if shape == "quantised":
        x = np.round(x / (base * 1e-3)) * (base * 1e-3)
    elif shape == "tiny_noise":
        x = base + rng.integers(0, 6, n) * (base * 1e-7)
    elif shape == "big_steps":
        for _ in range(int(rng.integers(1, 5))):
            k = int(rng.integers(0, n))
            x[k:] *= float(rng.uniform(0.01, 100.0))
    elif shape == "spikes":
        idx = rng.choice(n, size=max(1, n // 50), replace=False)
        x[idx] *= rng.uniform(2.0, 50.0, idx.shape[0])
    elif shape == "constant_runs":
        for _ in range(int(rng.integers(1, 4))):
            k = int(rng.integers(0, n))
            x[k : k + int(rng.integers(2, max(3, n // 3)))] = base * float(rng.choice([1.0, 1.5]))
    elif shape == "zeros":
        k = int(rng.integers(0, n))
        x[k : k + int(rng.integers(2, max(3, n // 2)))] = 0.0
    elif shape == "constant":
        x = np.full(n, base)
    elif shape == "periodic":
        pattern = base * (1.0 + rng.integers(0, 3, int(rng.integers(2, 5))) * 0.01)
        x = np.resize(pattern, n)
    elif shape == "variance_change":
        k = int(rng.integers(0, n))
        x[k:] = base + (x[k:] - base) * float(rng.uniform(3.0, 30.0))
    return [float(v) for v in x]


def test_oracle_reproduces_r():
    """The oracle itself matches R (short cases and two 2000-point ones)."""
    picked = sorted(CASES, key=lambda c: len(c["x"]))[:40] + [c for c in CASES if len(c["x"]) == 2000][:2]
    for case in picked:
        assert _oracle(case["x"], case["expected"]["penalty"]) == case["expected"]["cpts"], case["name"]


# Long series of every shape (lengths up to 5000, the slow oracle's budget).
LONG_CASES = [(shape, n, seed) for seed, (shape, n) in enumerate(
    [(s, 1000) for s in SHAPES] + [(s, 2000) for s in SHAPES[:4]]
    + [("flat", 5000), ("quantised", 5000), ("constant", 5000), ("periodic", 5000)]
)]


@pytest.mark.parametrize("shape,n,seed", LONG_CASES, ids=[f"{s}-{n}-{k}" for s, n, k in LONG_CASES])
def test_fast_path_agrees_with_oracle_on_long_series(shape, n, seed):
    x = _shaped_series(shape, n, seed)
    assert cpt_meanvar(x).cpts == _oracle(x, penalty_for(n))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SHAPES), st.integers(4, 300), st.integers(0, 2**32 - 1))
def test_fast_path_agrees_with_oracle_on_shaped_series(shape, n, seed):
    x = _shaped_series(shape, n, seed)
    assert cpt_meanvar(x).cpts == _oracle(x, penalty_for(n))


# Relative noise of 1e-5..1e-4 with shifts of a few sigma: the segment
# variances cancel down to a few significant digits, where any variance not
# computed with R's own operations would be furthest off (the kernels keep
# R's subtraction and division for it).
NEAR_CANCEL = [(cv, n, seed) for seed, (cv, n) in enumerate(
    [(1e-5, 700), (2e-5, 700), (3e-5, 700), (5e-5, 700), (1e-4, 700), (3e-5, 1500)]
)]


@pytest.mark.parametrize("cv,n,seed", NEAR_CANCEL, ids=[f"cv{cv:g}-{n}-{k}" for cv, n, k in NEAR_CANCEL])
def test_fast_path_agrees_with_oracle_near_cancellation_threshold(cv, n, seed):
    rng = np.random.default_rng(1000 + seed)
    base = float(rng.uniform(1e-3, 5.0))
    levels = base * (1.0 + rng.integers(0, 3, n // 100 + 1) * 4 * cv)  # shifts of a few sigma
    x = np.repeat(levels, 100)[:n] * (1.0 + rng.normal(0.0, cv, n) * rng.choice([0.5, 1.0, 2.0], n))
    x = [float(v) for v in x]
    assert cpt_meanvar(x).cpts == _oracle(x, penalty_for(n))


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


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_reference_loop_matches_r_bit_for_bit(case):
    """R's loop run literally in C (the oracle below) gives R's own answer."""
    x = np.asarray(case["x"], dtype=np.float64)
    expected = case["expected"]
    cpts, means, variances = _pelt.cpt_meanvar(x, expected["penalty"], 2, reference=True)
    assert (cpts, means, variances) == (expected["cpts"], expected["means"], expected["variances"])


def _many_series(count: int, seed: int):
    """Seeded series of every shape, 4 to 1200 points, plus near-cancellation ones."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        n = int(rng.choice([int(rng.integers(4, 40)), int(rng.integers(40, 400)), int(rng.integers(400, 1200))]))
        if k % 10 == 9:
            cv = float(rng.choice([1e-5, 3e-5, 1e-4]))
            base = float(rng.uniform(1e-3, 5.0))
            levels = base * (1.0 + rng.integers(0, 3, n // 50 + 1) * 4 * cv)
            yield np.repeat(levels, 50)[:n] * (1.0 + rng.normal(0.0, cv, n))
        else:
            yield np.asarray(_shaped_series(SHAPES[k % len(SHAPES)], n, int(rng.integers(2**32))))


def test_fast_path_agrees_with_reference_loop_on_many_series():
    """3000 series through the fast path and through R's literal loop (C, exact logs)."""
    mismatches = []
    for k, x in enumerate(_many_series(3000, seed=20171025)):
        pen = penalty_for(len(x))
        fast = _pelt.cpt_meanvar(x, pen, 2)
        if fast != _pelt.cpt_meanvar(x, pen, 2, reference=True):
            mismatches.append((k, len(x)))
    assert mismatches == []


def _search(x, pen=None):
    """The fast search's result and its work counts (approximate and exact evaluations, candidates caught up
    with R's pruning, of which found pruned)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    counts = np.zeros(4, dtype=np.int64)
    result = _pelt.cpt_meanvar(x, penalty_for(len(x)) if pen is None else pen, 2, counts=counts)
    return result, counts


def _steady(n, cv, seed=1):
    return 0.01 * (1 + cv * np.random.default_rng(seed).standard_normal(n))


@pytest.mark.parametrize("cv", [1e-3, 1e-5])
def test_a_long_steady_execution_leaves_out_most_candidates(cv):
    """Issue 26 item 20: every candidate at every step was ~n^2/2 evaluations (an hour at 10^6 iterations);
    blocks whose proven bound keeps them off the minimum are now left out. On 200,000 steady iterations
    (where R's pruning removes nothing) under 2% of n^2/2 are evaluated, also when the noise is 1e-5 of the
    mean and R's running sums are coarse next to the variance."""
    n = 200_000
    (cpts, _, _), counts = _search(_steady(n, cv))
    assert cpts == [n]
    assert 0 < counts[0] < 0.02 * n * n / 2, counts


LONG_SKIP_CASES = {
    "steady": _steady(8000, 1e-3),
    "steady, coarse sums": _steady(8000, 1e-5, 2),
    "warm-up": _steady(8000, 1e-3, 3) * np.concatenate([np.linspace(1.5, 1.0, 800), np.ones(7200)]),
    "two levels at random": _steady(8000, 1e-3, 4) * (1 + 0.004 * np.random.default_rng(4).integers(0, 2, 8000)),
    "quantised": np.round(_steady(8000, 1e-3, 5) / 1e-5) * 1e-5,
    "level changes": _steady(8000, 1e-3, 6) * np.repeat(1 + 0.01 * np.random.default_rng(6).integers(0, 4, 8), 1000),
}


@pytest.mark.parametrize("name", list(LONG_SKIP_CASES))
def test_leaving_out_blocks_changes_nothing(name):
    """The same cpts, means and variances as R's loop run literally, on long series where most blocks are
    left out at most steps."""
    x = LONG_SKIP_CASES[name]
    n = len(x)
    result, counts = _search(x)
    assert counts[0] < 0.25 * n * n / 2, counts      # blocks were left out
    assert result == _pelt.cpt_meanvar(np.ascontiguousarray(x), penalty_for(n), 2, reference=True)


def test_candidates_left_out_while_r_pruned_them_are_dropped():
    """A left-out candidate is not tested against R's pruning; when it could be the minimum again it is
    tested for every step it missed. Spiky series make R prune candidates while they are left out: the
    search finds them pruned and still gives R's answer."""
    found_pruned = 0
    for seed in range(30):
        x = np.asarray(_shaped_series("spikes", 4000, seed))
        result, counts = _search(x)
        found_pruned += counts[3]
        assert result == _pelt.cpt_meanvar(x, penalty_for(len(x)), 2, reference=True), seed
    assert found_pruned > 0


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
    for bad in (float("inf"), -float("inf"), 1e100, -1e100, 5e-101):
        with pytest.raises(ValueError, match="finite"):
            cpt_meanvar([1.0, 1.0, bad, 1.0, 1.0])
    # The limits themselves and negative values inside them are accepted.
    assert cpt_meanvar([1e-100, 9e99, -1.0, 1.0, 2.0]).cpts[-1] == 5
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


def _under_each_kernel(code: str, isas: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Run code (which prints its result) with COLDRUN_PELT_ISA set to each of isas:
    {isa: (kernel the child actually ran, its output)}."""
    outs = {}
    for isa in isas:
        env = dict(os.environ)
        env.pop("COLDRUN_PELT_SCALAR", None)
        env["COLDRUN_PELT_ISA"] = isa
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # tests/, for shared_paths
        out = subprocess.run([sys.executable, "-c", "from analysis import _pelt;print(_pelt.kernel);" + code],
                             env=env, check=True, capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parents[2]).stdout
        kernel, _, result = out.partition("\n")
        outs[isa] = (kernel, result)
    kernels = {kernel for kernel, _ in outs.values()}
    if len(kernels) < len(isas):
        pytest.skip(f"this CPU runs only the {sorted(kernels)} kernel(s) for {list(isas)}: nothing to compare")
    return outs


def test_all_kernels_take_the_same_decisions():
    """The AVX-512, AVX2 and portable kernels give identical cpts (and R's on the golden cases), also on
    the long series where blocks are left out."""
    code = (
        "import json,sys;from analysis.changepoints import cpt_meanvar;"
        "from tests.analysis.test_core_changepoints import LONG_CASES, LONG_SKIP_CASES, _shaped_series, CASES;"
        "xs=[c['x'] for c in CASES]+[_shaped_series(*c) for c in LONG_CASES]+list(LONG_SKIP_CASES.values());"
        "print(json.dumps([cpt_meanvar(x).cpts for x in xs]))"
    )
    outs = _under_each_kernel(code, ("native", "avx2", "scalar"))
    assert outs["native"][1] == outs["avx2"][1] == outs["scalar"][1]
    assert json.loads(outs["native"][1])[: len(CASES)] == [c["expected"]["cpts"] for c in CASES]


def test_bootstrap_vector_kernels_draw_identical_streams():
    """analysis._pelt's AVX-512VL bootstrap kernel only swaps in a one-instruction
    rotate: its resample means are bit-identical to the AVX2 kernel's."""
    code = (
        "import numpy as np;from analysis import _pelt;"
        "rng=np.random.default_rng(3);v=np.ascontiguousarray(rng.normal(1,0.01,3000));"
        "so=np.array([0,500,1700,1701,3000],dtype=np.int64);po=np.array([0,2,4],dtype=np.int64);"
        "out=np.empty(2*501);_pelt.bootstrap_means(v,so,po,501,11,22,33,44,out);print(out.tobytes().hex())"
    )
    outs = _under_each_kernel(code, ("native", "avx2"))
    assert len(outs["native"][1]) == 2 * 8 * 2 * 501 + 1
    assert outs["native"][1] == outs["avx2"][1]


def test_r_mean_matches_r_on_one_segment_series():
    one = [c for c in CASES if len(c["expected"]["cpts"]) == 1]
    if not one:
        pytest.skip("no single-segment case in the R golden file")
    for case in one:
        assert _pelt.r_mean(np.asarray(case["x"], dtype=np.float64)) == case["expected"]["means"][0]
