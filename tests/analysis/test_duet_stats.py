"""Duet statistics: methods.md §2.6 check cases and properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from analysis.duet import stats
from analysis.duet.pairs import PairedRuns, paired_runs
from analysis.errors import AnalysisError

TOY_X = [[10, 11, 10.5, 12], [20, 19, 21, 22], [9, 9.5, 9, 10]]
TOY_Y = [[9, 10, 10, 11], [18, 18, 19, 20], [8.5, 9, 8, 9.5]]
TOY_GMS = [1.0877573059372772, 1.0927586208054845, 1.0725891493349424]
TOY_GGMS = 1.08433435181084


def runs(x, y) -> PairedRuns:
    return paired_runs({"x": [list(map(float, r)) for r in x], "y": [list(map(float, r)) for r in y]}, "test")


def test_toy_gms_and_ggms_exact():
    result = stats.analyse(runs(TOY_X, TOY_Y), seed=0)
    assert result.gms == pytest.approx(TOY_GMS, abs=1e-12, rel=0)
    assert result.ggms == pytest.approx(TOY_GGMS, abs=1e-12, rel=0)
    assert result.ci.relative_width == pytest.approx((result.ci.high - result.ci.low) / result.ggms, rel=1e-15)


def exhaustive_ggms(gms: list[float]) -> list[float]:
    """ggms* of every ordered resample (R^R of them, equally likely), sorted."""
    return sorted(float(sps.gmean(list(r))) for r in itertools.product(gms, repeat=len(gms)))


def exact_quantile(support: list[float], q: float) -> float:
    """Smallest value whose cumulative probability reaches q (inverse CDF of the discrete distribution)."""
    return support[math.ceil(q * len(support) - 1e-12) - 1]


def test_exhaustive_support_is_the_stated_one():
    support = exhaustive_ggms(TOY_GMS)
    assert len(support) == 27
    assert support[0] == pytest.approx(1.0725891493349424, abs=1e-12)
    assert support[-1] == pytest.approx(1.0927586208054845, abs=1e-12)


@pytest.mark.parametrize("confidence", [0.99, 0.8, 0.5])
def test_percentile_ci_is_the_exact_one_of_the_27_resamples(confidence):
    """scipy's percentile ends (type-7 quantiles of B draws) equal the exact inverse-CDF quantiles
    of the exhaustive bootstrap distribution, at levels whose tails fall inside an atom."""
    support = exhaustive_ggms(TOY_GMS)
    alpha = (1 - confidence) / 2
    for q in (alpha, 1 - alpha):  # the levels are chosen away from the jumps k/27
        assert min(abs(q * 27 - k) for k in range(28)) > 0.1
    low, high = stats.percentile_ci((np.array(TOY_GMS),), sps.gmean, confidence=confidence,
                                    resamples=50000, rng=np.random.default_rng(5))
    assert low == pytest.approx(exact_quantile(support, alpha), abs=1e-12)
    assert high == pytest.approx(exact_quantile(support, 1 - alpha), abs=1e-12)
    if confidence == 0.99:
        assert (low, high) == pytest.approx((support[0], support[-1]), abs=1e-12)
    else:
        assert support[0] < low < high < support[-1]


def test_a_over_a_is_one_and_the_ci_contains_one():
    rng = np.random.default_rng(11)
    x = rng.lognormal(0.0, 0.05, size=(10, 50))
    y = rng.lognormal(0.0, 0.05, size=(10, 50))
    result = stats.analyse(runs(x, y), seed=3)
    assert abs(result.ggms - 1) < 0.01
    assert result.ci.low < 1 < result.ci.high


def test_scaling_y_by_c_divides_ggms_by_c():
    rng = np.random.default_rng(12)
    x = rng.lognormal(0.0, 0.1, size=(6, 20))
    y = rng.lognormal(0.1, 0.1, size=(6, 20))
    c = 2.5
    base = stats.analyse(runs(x, y), seed=4)
    scaled = stats.analyse(runs(x, y * c), seed=4)
    assert scaled.ggms == pytest.approx(base.ggms / c, abs=1e-12, rel=0)
    # same seed, same resamples: the interval scales too, its relative width stays
    assert scaled.ci.low == pytest.approx(base.ci.low / c, rel=1e-12)
    assert scaled.ci.relative_width == pytest.approx(base.ci.relative_width, rel=1e-9)


def common_mode(seed: int, a: float, b: float, iteration_noise: float) -> tuple[np.ndarray, np.ndarray]:
    """x = a * m_r * e, y = b * m_r * e': a large shared per-execution factor m_r (the machine's
    state in that execution) and shared (0) or independent per-iteration noise."""
    rng = np.random.default_rng(seed)
    m = rng.lognormal(0.0, 0.5, size=(8, 1))
    n = m * rng.lognormal(0.0, 0.1, size=(8, 40))
    if iteration_noise == 0:
        return a * n, b * n
    return (a * n * rng.lognormal(0.0, iteration_noise, size=n.shape),
            b * n * rng.lognormal(0.0, iteration_noise, size=n.shape))


def test_shared_noise_gives_every_ratio_a_over_b_and_a_zero_width_ci():
    a, b = 1.3, 1.1
    x, y = common_mode(21, a, b, iteration_noise=0)
    result = stats.analyse(runs(x, y), seed=6)
    assert np.allclose(x / y, a / b, rtol=1e-15, atol=0)
    assert result.gms == pytest.approx([a / b] * 8, rel=1e-14)
    assert result.ggms == pytest.approx(a / b, abs=1e-12)
    assert result.ci.relative_width < 1e-14
    assert result.sequential_ci.relative_width > 0.3  # m_r's spread: the sequential CI is wide
    assert result.reduction is None or result.reduction > 1e10
    if result.reduction is None:
        assert result.notes


def test_shuffled_pairing_with_common_mode_noise_widens_the_ci():
    x, y = common_mode(22, 1.2, 1.0, iteration_noise=0.05)
    result = stats.analyse(runs(x, y), seed=7)
    assert sorted(result.shuffle_pairing) == list(range(8))
    assert all(p != r for r, p in enumerate(result.shuffle_pairing))
    assert result.shuffle_ci.relative_width > 10 * result.ci.relative_width
    assert result.reduction > 10
    # re-pairing executions keeps the product, so the estimate is unchanged
    assert float(sps.gmean(result.shuffle_gms)) == pytest.approx(result.ggms, rel=1e-12)


def test_shuffling_iterations_within_an_execution_would_change_nothing():
    """Why the shuffle control re-pairs executions: a geometric mean of x_i / y_pi(i) is the same for every pi."""
    x, y = common_mode(23, 1.2, 1.0, iteration_noise=0.05)
    rng = np.random.default_rng(8)
    shuffled_y = np.array([row[rng.permutation(len(row))] for row in y])
    assert not np.array_equal(shuffled_y, y)
    assert stats.all_gms(runs(x, shuffled_y)) == pytest.approx(stats.all_gms(runs(x, y)), rel=1e-12)


def test_sequential_ci_is_the_difference_of_execution_means():
    result = stats.analyse(runs(TOY_X, TOY_Y), seed=9)
    x_means = [np.mean(r) for r in TOY_X]
    y_means = [np.mean(r) for r in TOY_Y]
    assert result.sequential_difference == pytest.approx(np.mean(x_means) - np.mean(y_means), rel=1e-12)
    lo, hi = result.sequential_ci.low, result.sequential_ci.high
    # the bootstrap's extremes: x's smallest mean against y's largest, and the reverse
    assert min(x_means) - max(y_means) <= lo < result.sequential_difference < hi <= max(x_means) - min(y_means)
    assert result.sequential_ci.relative_width == pytest.approx((hi - lo) / np.mean(y_means), rel=1e-12)
    assert result.reduction == pytest.approx(result.sequential_ci.relative_width / result.ci.relative_width)


def test_seeded_results_repeat_and_an_unseeded_run_reports_its_seed():
    r = runs(*common_mode(24, 1.2, 1.0, iteration_noise=0.05))
    first = stats.analyse(r)
    again = stats.analyse(r, seed=first.seed)
    assert first == again
    assert stats.analyse(r, seed=first.seed + 1).ci != first.ci


@pytest.mark.parametrize("kwargs, message", [
    (dict(confidence=1.0), "confidence"), (dict(resamples=0), "resamples"), (dict(seed=-2), "seed")])
def test_bad_options(kwargs, message):
    with pytest.raises(AnalysisError, match=message):
        stats.analyse(runs(TOY_X, TOY_Y), **{"seed": 1, **kwargs})


def test_one_execution_is_not_enough_for_a_ci():
    with pytest.raises(AnalysisError, match="at least 2 executions"):
        stats.analyse(runs(TOY_X[:1], TOY_Y[:1]), seed=1)


def test_older_scipy_without_rng_gets_random_state(monkeypatch):
    """pyproject allows scipy 1.10, whose bootstrap takes random_state, not rng: same resamples."""
    real = sps.bootstrap
    calls = []

    def old_bootstrap(*args, **kwargs):
        calls.append(sorted(k for k in kwargs if k in ("rng", "random_state")))
        if "rng" in kwargs:
            raise TypeError("bootstrap() got an unexpected keyword argument 'rng'")
        return real(*args, **kwargs)

    gms = np.array(TOY_GMS)
    new = stats.percentile_ci((gms,), sps.gmean, confidence=0.8, resamples=500, rng=np.random.default_rng(2))
    monkeypatch.setattr(stats.stats, "bootstrap", old_bootstrap)
    old = stats.percentile_ci((gms,), sps.gmean, confidence=0.8, resamples=500, rng=np.random.default_rng(2))
    assert calls == [["rng"], ["random_state"]]
    assert old == new
