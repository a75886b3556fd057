"""Pilot's comparison with a baseline: Welch's t-test and the sample size it needs.

Source: ascar-io/pilot-bench d8bf8a5 ``lib/libpilot.cc`` (``pilot_p_eq``,
``pilot_calc_deg_of_freedom``, ``pilot_optimal_sample_size_for_eq_test``);
../shared/reference/methods.md §1 (e). Checked against the ``welch`` and
``welch_raw`` rows of ../shared/golden/pilot/golden_*.jsonl.

- Degrees of freedom (Welch-Satterthwaite), **not floored** (Pilot's doc
  floors it; its code does not):
  nu = (v1/n1 + v2/n2)^2 / ((v1/n1)^2/(n1-1) + (v2/n2)^2/(n2-1)).
- ``p_eq``: d = m1 - m2, sc = sqrt(v1/n1 + v2/n2), p = 2 F_t(-|d/sc|; nu),
  and the CI of the difference d -+ t^-1(1 - (1-cl)/2; nu) sc.
  n1 < 2 or n2 < 2: p = 0.5 ("cannot tell") and no CI or dof (Pilot leaves
  its outputs untouched). A negative variance is an error (Pilot aborts).
  Both variances 0: the test is undefined (Pilot divides 0 by 0 or by 0);
  an error here.
- ``optimal_sample_size_for_eq_test``: t = t^-1(p_req / 2; nu) with nu from
  the baseline and the new sample; n_new = trunc(v_new / ((d/t)^2 - v_base/n_base)).
  Pilot casts that double to size_t, which is garbage (undefined) when the
  denominator is <= 0 or the quotient is not finite or too large: coldrun
  returns **None** there ("no sample size reaches p_req": the difference
  is too small against the baseline's own uncertainty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from analysis.pilot.subsession import NotEnoughData, PilotInputError, check_confidence, t_quantile

UNDECIDED_P = 0.5  # Pilot's p when a sample has fewer than 2 values
_SIZE_T_LIMIT = 2.0**64  # beyond this Pilot's size_t cast is undefined


@dataclass(frozen=True)
class WelchResult:
    p: float  # two-sided p of H0: equal means (0.5 when a sample is too small)
    dof: float | None  # Welch's unrounded degrees of freedom; None when n < 2
    ci: tuple[float, float] | None  # CI of mean1 - mean2; None when n < 2


def _check_summary(mean: float, n: int, var: float, which: str) -> None:
    if not (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
        raise PilotInputError(f"{which} sample size must be a whole number >= 0, not {n!r}")
    for name, value in (("mean", mean), ("variance", var)):
        if not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise PilotInputError(f"{which} {name} must be a finite number, not {value!r}")
    if var < 0:
        raise PilotInputError(f"{which} variance is {var}; a variance cannot be negative")


def welch_dof(var1: float, var2: float, n1: int, n2: int) -> float:
    """``pilot_calc_deg_of_freedom``: Welch-Satterthwaite, unrounded."""
    if n1 < 2 or n2 < 2:
        raise NotEnoughData(f"sample sizes {n1} and {n2}; Welch's degrees of freedom need at least 2 each")
    a, b = var1 / n1, var2 / n2
    denominator = a * a / (n1 - 1) + b * b / (n2 - 1)
    if denominator == 0:
        raise PilotInputError("both variances are 0; Welch's t-test is undefined")
    return (a + b) * (a + b) / denominator


def p_eq(
    mean1: float, mean2: float, n1: int, n2: int, var1: float, var2: float, confidence: float = 0.95
) -> WelchResult:
    """``pilot_p_eq``: Welch's two-sided p and the CI of mean1 - mean2."""
    from scipy.stats import t as student_t

    check_confidence(confidence)
    _check_summary(mean1, n1, var1, "first")
    _check_summary(mean2, n2, var2, "second")
    if n1 < 2 or n2 < 2:
        return WelchResult(UNDECIDED_P, None, None)
    dof = welch_dof(var1, var2, n1, n2)
    d = mean1 - mean2
    sc = math.sqrt(var1 / n1 + var2 / n2)
    p = float(student_t.cdf(-abs(d / sc), dof)) * 2
    half = t_quantile(confidence, dof) * sc
    return WelchResult(p, dof, (d - half, d + half))


def optimal_sample_size_for_eq_test(
    baseline_mean: float,
    baseline_n: int,
    baseline_var: float,
    new_mean: float,
    new_n: int,
    new_var: float,
    required_p: float,
) -> int | None:
    """``pilot_optimal_sample_size_for_eq_test``: new-sample size for p <= required_p.

    Raises :class:`NotEnoughData` (Pilot's rc 30) when a sample has fewer
    than 2 values; None where Pilot's cast gives garbage (module doc).
    """
    from scipy.stats import t as student_t

    _check_summary(baseline_mean, baseline_n, baseline_var, "baseline")
    _check_summary(new_mean, new_n, new_var, "new")
    if not (isinstance(required_p, (int, float)) and 0 < required_p < 1):
        raise PilotInputError(f"the required p must be between 0 and 1 (e.g. 0.05), not {required_p!r}")
    if baseline_n < 2 or new_n < 2:
        raise NotEnoughData(f"sample sizes {baseline_n} and {new_n}; the test needs at least 2 each")
    dof = welch_dof(baseline_var, new_var, baseline_n, new_n)
    t = float(student_t.ppf(required_p / 2, dof))
    d_over_t = (baseline_mean - new_mean) / t
    denominator = d_over_t * d_over_t - baseline_var / baseline_n
    if not denominator > 0:
        return None
    size = new_var / denominator
    if not (math.isfinite(size) and size < _SIZE_T_LIMIT):
        return None
    return int(size)
