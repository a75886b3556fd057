"""BCa intervals (analysis.screen.bca, .replication) and `coldrun-analyze bca`:
the wristwatch check case (methods.md §3.7), agreement with scipy's BCa on the
same bootstrap distribution, the O(n) jackknife, adaptive replication, bad input."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from analysis.cli import main
from analysis.screen.bca import acceleration, interval, resample_means
from analysis.screen.replication import Replication, bca_intervals

WRISTWATCH = [10.07, 9.99, 9.94, 10.00, 10.01, 10.00, 10.01, 10.01, 10.01, 9.99]
# methods.md §3.7 (scipy's jackknife over leave-one-out samples). The O(n) form
# differs in the 11th digit: scipy's subtracts leave-one-out means near 10.
WRISTWATCH_ACCELERATION = 0.009283961182969105


def write_numbers(tmp_path, numbers, name="x.txt") -> str:
    path = tmp_path / name
    path.write_text("".join(f"{v}\n" for v in numbers) if not isinstance(numbers, str) else numbers)
    return str(path)


def bca_json(capsys, *argv) -> dict:
    assert main(["bca", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_wristwatch_acceleration_matches_the_reference():
    x = np.array(WRISTWATCH)
    assert acceleration([x], [1.0]) == pytest.approx(WRISTWATCH_ACCELERATION, rel=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_wristwatch_interval_with_50000_resamples(seed):
    x = np.array(WRISTWATCH)
    found = bca_intervals([x], ["x"], np.eye(1), 0.95, Replication(batch=50_000, seed=seed)).intervals[0]
    assert found.estimate == pytest.approx(10.003, abs=1e-12)
    assert (found.low, found.high) == pytest.approx((9.985, 10.023), abs=1e-9)


def test_wristwatch_cli_default_is_adaptive_and_matches(tmp_path, capsys):
    doc = bca_json(capsys, write_numbers(tmp_path, WRISTWATCH))
    assert doc["mean"] == pytest.approx(10.003)
    assert doc["ci"] == pytest.approx([9.985, 10.023], abs=1e-9)
    assert doc["acceleration"] == pytest.approx(WRISTWATCH_ACCELERATION, rel=1e-9)
    assert doc["resamples"] == 25_000 * doc["batches"] and doc["batches"] >= 2
    assert doc["monte_carlo_error"] < doc["resolution"]
    assert set(doc) >= {"mean", "ci", "acceleration", "bias_correction", "resamples"}


def test_cli_seed_and_confidence_are_used(tmp_path, capsys):
    path = write_numbers(tmp_path, np.random.default_rng(3).lognormal(0, 1, 60).round(6))
    a = bca_json(capsys, path, "--seed", "4", "--confidence", "0.9", "--fixed")
    b = bca_json(capsys, path, "--seed", "4", "--confidence", "0.9", "--fixed")
    c = bca_json(capsys, path, "--seed", "5", "--confidence", "0.9", "--fixed")
    wide = bca_json(capsys, path, "--seed", "4", "--confidence", "0.99", "--fixed")
    assert a == b
    assert a["ci"] != c["ci"]
    assert wide["ci"][0] < a["ci"][0] and wide["ci"][1] > a["ci"][1]
    assert a["resamples"] == 25_000 and a["monte_carlo_error"] is None


def _scipy_bca(data, statistic, distribution, confidence):
    """scipy's BCa endpoints for a given bootstrap distribution (no new resamples)."""
    previous = SimpleNamespace(bootstrap_distribution=distribution)
    res = stats.bootstrap(data, statistic, n_resamples=0, bootstrap_result=previous, method="BCa",
                          confidence_level=confidence, vectorized=True)
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_endpoints_equal_scipy_on_the_same_distribution(confidence):
    x = np.random.default_rng(7).lognormal(0, 0.8, 200)
    boot = resample_means(x, 4000, 11, "x")
    mine = interval(boot, float(x.mean()), acceleration([x], [1.0]), confidence)
    low, high = _scipy_bca((x,), lambda s, axis=-1: np.mean(s, axis=axis), boot, confidence)
    assert (mine.low, mine.high) == pytest.approx((low, high), rel=1e-12)


def test_effect_of_two_samples_equals_scipy_two_sample_bca():
    rng = np.random.default_rng(8)
    x, y = rng.gamma(2.0, 1.0, 150), rng.gamma(3.0, 1.0, 90)
    boot = resample_means(x, 3000, 1, "x") - resample_means(y, 3000, 1, "y")
    estimate = float(x.mean() - y.mean())
    mine = interval(boot, estimate, acceleration([x, y], [1.0, -1.0]), 0.95)
    low, high = _scipy_bca((x, y), lambda a, b, axis=-1: np.mean(a, axis=axis) - np.mean(b, axis=axis),
                           boot, 0.95)
    assert (mine.low, mine.high) == pytest.approx((low, high), rel=1e-12)


def test_o_n_jackknife_equals_the_leave_one_out_definition():
    x = np.random.default_rng(9).exponential(1.0, 57)
    loo = np.array([np.delete(x, i).mean() for i in range(x.size)])
    uu = loo.mean() - loo
    assert acceleration([x], [1.0]) == pytest.approx((uu ** 3).sum() / (6 * (uu ** 2).sum() ** 1.5), rel=1e-9)
    # Scaling a sample's coefficient does not change a one-sample acceleration.
    assert acceleration([x], [-2.5]) == pytest.approx(-acceleration([x], [1.0]), rel=1e-12)


def test_constant_sample_gives_the_value_itself(tmp_path, capsys):
    doc = bca_json(capsys, write_numbers(tmp_path, [3.5] * 8))
    assert doc["ci"] == [3.5, 3.5] and doc["mean"] == 3.5 and doc["acceleration"] == 0.0


def test_adaptive_stops_at_the_limit_when_the_resolution_is_out_of_reach():
    x = np.random.default_rng(1).normal(0, 1, 50)
    found = bca_intervals([x], ["x"], np.eye(1), 0.95, Replication(batch=1000, limit=5000, resolution=1e-9))
    assert found.resamples == 5000 and found.batches == 5 and found.monte_carlo_error > 1e-9


def test_adaptive_error_shrinks_with_more_batches():
    x = np.random.default_rng(2).normal(0, 1, 50)
    coarse = bca_intervals([x], ["x"], np.eye(1), 0.95, Replication(batch=2000, resolution=0.05))
    fine = bca_intervals([x], ["x"], np.eye(1), 0.95, Replication(batch=2000, resolution=0.005))
    assert coarse.monte_carlo_error < 0.05 and fine.monte_carlo_error < 0.005
    assert fine.batches > coarse.batches


def test_signed_numbers_are_accepted(tmp_path, capsys):
    doc = bca_json(capsys, write_numbers(tmp_path, [-1.5, -0.5, 0.25, 1.0, -2.0, 0.75]), "--fixed")
    assert doc["mean"] == pytest.approx(-0.333333333333)
    assert doc["ci"][0] < doc["mean"] < doc["ci"][1]


@pytest.mark.parametrize("content, expected", [
    ("", "empty file"),
    ("1.0\nabc\n", "line 2: reading 'abc' is not a number"),
    ("1.0\nnan\n", "line 2: reading 'nan' is not a finite number"),
])
def test_bad_files_are_one_line_exit_2(tmp_path, capsys, content, expected):
    assert main(["bca", write_numbers(tmp_path, content), "--json"]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_missing_file_and_bad_options(tmp_path, capsys):
    assert main(["bca", str(tmp_path / "nope.txt")]) == 2
    assert "no such file" in capsys.readouterr().err
    path = write_numbers(tmp_path, WRISTWATCH)
    assert main(["bca", path, "--resamples", "1000", "--max-resamples", "1500"]) == 2
    assert "--max-resamples must be at least twice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bca", path, "--confidence", "1.5"])


def test_constant_data_stops_after_two_batches():
    found = bca_intervals([np.zeros(5)], ["z"], np.eye(1), 0.95, Replication(batch=100, resolution=0.0))
    assert found.batches == 2 and found.monte_carlo_error == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_scipy_itself_gives_the_reference_wristwatch_interval(seed):
    # The check case was measured with scipy; ours must land on the same grid points.
    res = stats.bootstrap((np.array(WRISTWATCH),), np.mean, n_resamples=50_000, method="BCa",
                          rng=np.random.default_rng(seed), vectorized=True)
    assert (res.confidence_interval.low, res.confidence_interval.high) == pytest.approx((9.985, 10.023), abs=1e-9)
