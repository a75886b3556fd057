"""Bad input to Pilot's statistics: one clear line, an AnalysisError (a ValueError), never numpy's traceback.

Every call runs with numpy's floating-point errors raised and warnings
turned into errors, so a division by zero or a NaN that slipped through
would fail the test instead of passing quietly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from analysis.errors import AnalysisError
from analysis.pilot import subsession as ss, welch, wps
from analysis.pilot.stopping import StopTarget, decide_key, execution_estimate
from analysis.pilot.subsession import NotEnoughData, PilotInputError

TARGET = StopTarget(ci_percent=0.02, min_executions=3)


def refused(call, *args, match: str, kind: type[Exception] = PilotInputError, **kwargs) -> str:
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(kind, match=match) as info:
            call(*args, **kwargs)
    err = info.value
    assert isinstance(err, AnalysisError) and isinstance(err, ValueError)
    assert "\n" not in str(err) and str(err)
    # Ours, not a numpy/scipy failure on its way up: no chained traceback to print.
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
    return str(err)


def quietly(call, *args, **kwargs):
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        return call(*args, **kwargs)


@pytest.mark.parametrize(
    "call, args, kwargs, match",
    [
        (ss.sample_mean, ([],), {}, "no values"),
        (ss.ci_width, ([1.0],), {}, "at least 2"),
        (ss.ci_width, ([1.0],), {"mean_method": "binary"}, "at least 2"),
        (ss.subsession_var, ([1.0, 2.0, 3.0], 2), {}, "1 subsession"),
        (ss.analyse_sample, ([],), {"ci_percent": 0.1}, "no values"),
        (wps.wps_fit, ([10, 20], [10**9, 2 * 10**9]), {}, "at least 3"),
        (wps.wps_fit, ([10, 20, 30], [10**9, 2 * 10**9, 3 * 10**9]), {"threshold_ns": 2 * 10**9}, "1 round"),
        (welch.optimal_sample_size_for_eq_test, (1.0, 1, 1.0, 2.0, 5, 1.0, 0.05), {}, "at least 2"),
        (welch.welch_dof, (1.0, 1.0, 1, 5), {}, "at least 2"),
    ],
)
def test_too_few_readings(call, args, kwargs, match):
    refused(call, *args, match=match, kind=NotEnoughData, **kwargs)


def test_too_few_readings_where_pilot_answers_anyway():
    assert quietly(ss.subsession_autocorr, [1.0, 2.0, 3.0], 2) == 1.0  # n // q < 2: Pilot's 1
    assert quietly(ss.optimal_subsession_size, [1.0, 2.0]) == -1
    assert quietly(ss.required_samples, [1.0, 2.0], ci_percent=0.1) is None  # Pilot needs n >= 3
    assert quietly(welch.p_eq, 1.0, 2.0, 1, 5, 1.0, 1.0).p == 0.5
    estimate = quietly(execution_estimate, [1.0], TARGET)
    assert estimate.mean == 1.0 and estimate.ci_width is None and "too short" in estimate.reason


def test_constant_series():
    flat = [2.5] * 60
    assert quietly(ss.subsession_var, flat, 1) == 0.0
    assert quietly(ss.subsession_autocorr, flat, 1) == 1.0  # 0/0: Pilot's "highly correlated"
    assert quietly(ss.optimal_subsession_size, flat) == -1
    assert quietly(ss.analyse_sample, flat, ci_width=0.1, min_samples=0).required is None  # no q
    assert quietly(ss.ci_width, flat, 2) == 0.0
    assert quietly(execution_estimate, flat, TARGET).ci_width == 0.0
    same = [1.0] * 12
    assert quietly(decide_key, [quietly(execution_estimate, same, TARGET)] * 3, [12] * 3, TARGET).converged
    refused(wps.wps_fit, [100] * 5, [10**9] * 5, match="same work amount", kind=NotEnoughData)
    refused(welch.p_eq, 1.0, 1.0, 5, 5, 0.0, 0.0, match="both variances are 0")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values(bad):
    message = refused(execution_estimate, [1.0, 1.1, bad, 1.0], TARGET, match="value 2 is")
    assert "iteration times" in message
    refused(ss.sample_mean, [1.0, bad], match="finite")
    refused(wps.wps_fit, [1, 2, 3], [10**9, bad, 3e9], match="round durations")
    refused(welch.p_eq, bad, 1.0, 5, 5, 1.0, 1.0, match="first mean")


def test_negative_and_impossible_values():
    refused(execution_estimate, [1.0, -0.5, 1.0], TARGET, match="iteration 1 took -0.5 s")
    refused(wps.wps_fit, [1, 2, 3], [10**9, -2, 3e9], match="round 1: round duration is -2.0 ns")
    refused(ss.sample_mean, [1.0, 0.0], "harmonic", match="harmonic mean needs values > 0")
    refused(ss.ci_width, [1, 0, 2], 1, 0.95, "binary", match="must be 0 or 1")
    refused(welch.p_eq, 1.0, 1.0, 5, 5, -1.0, 1.0, match="variance cannot be negative")
    refused(ss.subsession_var, [1.0, 2.0, 3.0, 4.0], 0, match="q must be a whole number")
    refused(decide_key, [quietly(execution_estimate, [1.0] * 5, TARGET)], [-1], TARGET, match="iterations run")


def test_zero_work_amount():
    refused(wps.wps_fit, [10, 0, 30], [10**9, 2e9, 3e9], match="round 1: work amount is 0.0 units")
    refused(wps.next_wps_work_amount, 0, 1.0, 10, 1000, match="work amount is 0")
    refused(wps.next_wps_work_amount, 10, 0.0, 10, 1000, match="duration must be > 0")
    refused(wps.next_wps_work_amount, 10, 1.0, 10, 10, match="must exceed the minimum")


def test_zero_target_ci():
    refused(StopTarget, ci_percent=0, match="ci_percent must be a fraction > 0")
    refused(StopTarget, ci_width=0.0, match="target CI width must be a number > 0")
    refused(StopTarget, match="no target CI")
    refused(ss.analyse_sample, [1.0, 2.0, 3.0, 4.0], ci_width=0, match="target CI width")
    refused(ss.required_samples, [1.0, 2.0, 3.0], ci_percent=-0.1, match="ci_percent")
    refused(ss.required_ci_width, 0.0, ci_percent=0.1, match="give ci_width instead")


def test_bad_settings():
    refused(StopTarget, ci_percent=0.02, min_executions=1, match="min_executions must be at least 2")
    refused(StopTarget, ci_percent=0.02, max_executions=2, match="below min_executions")
    refused(StopTarget, ci_percent=0.02, estimate="bootstrap", match="estimate must be one of")
    refused(StopTarget, ci_percent=0.02, confidence=95, match="between 0 and 1")
    refused(wps.wps_fit, [1, 2, 3], [1, 2, 3], variant="newest", match="variant must be one of")
    refused(ss.sample_mean, [1.0], "geometric", match="mean method must be one of")
    refused(ss.sample_mean, [[1.0, 2.0]], match="flat list")
    refused(ss.sample_mean, ["x"], match="not a list of numbers")
