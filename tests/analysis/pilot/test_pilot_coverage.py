"""Coverage of Pilot's CI of the mean on autocorrelated series (simulated AR(1), seeded).

With Pilot's subsession size (first q whose batch means have |r1| <= 0.1)
the 95 % CI keeps close to its coverage; the naive i.i.d. CI (q = 1) does
not once phi > 0.

Pilot's rule cannot reach the nominal 95 % exactly: it stops at the first q
whose *sample* lag-1 autocorrelation is within 0.1, so the batch means it
uses still have a true lag-1 autocorrelation of about 0.1, and their
variance understates the variance of the mean by 1.08-1.11 in SE. Computed
exactly from the AR(1) covariance at the q it picks (n = 1000), the
expected coverage is 0.930 for phi 0.5 (q 9) and 0.924 for phi 0.8 (q 24),
whatever the series length; ../shared/reference/methods.md does not claim
more. Over seeds the measured coverage is 0.92-0.94 (mean 0.934 for phi
0.5, 0.927 for 0.8); one estimate from 2000 series has an SE of 0.006. So
the test asks for >= 0.91 there (theory minus about 2.5 SE), >= 0.935 for
phi 0, and for the naive CI to fall well short.

The issue's bar (>= 93.5 % for every phi) is reached by the same rule with a
stricter limit: at ``--ac-limit 0.05`` the residual batch-mean correlation
is about 0.05 and the measured coverage is 0.9365 (phi 0.5) and 0.9405
(phi 0.8). The second test holds that, so a user who needs the nominal
coverage knows which knob gives it.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis.pilot import subsession as ss

SERIES = 2000
LENGTH = 1000
BURN_IN = 200
AC_LIMIT = 0.1
# phi: (least coverage with Pilot's q, most coverage of the naive CI)
EXPECTATIONS = {0.0: (0.935, 1.0), 0.5: (0.91, 0.80), 0.8: (0.91, 0.56)}


def ar1(phi: float, rng: np.random.Generator, rows: int = SERIES, length: int = LENGTH) -> np.ndarray:
    """``rows`` AR(1) series of ``length``, mean 0, unit innovations (recursion over time, vectorised over rows)."""
    noise = rng.standard_normal((length + BURN_IN, rows))
    x = np.empty_like(noise)
    x[0] = noise[0]
    for i in range(1, noise.shape[0]):
        x[i] = phi * x[i - 1] + noise[i]
    return x[BURN_IN:].T


def coverage(x: np.ndarray, ac_limit: float = AC_LIMIT) -> tuple[float, float]:
    """Fractions of rows whose 95 % CI (Pilot's q; q = 1) holds the true mean 0."""
    pilot = naive = 0
    for row in x:
        mean = ss.sample_mean(row)
        q = ss.optimal_subsession_size(row, ac_limit=ac_limit)
        pilot += q > 0 and abs(mean) <= ss.ci_width(row, q) / 2  # no q counts as a miss
        naive += abs(mean) <= ss.ci_width(row, 1) / 2
    return pilot / len(x), naive / len(x)


@pytest.mark.parametrize("phi", sorted(EXPECTATIONS))
def test_ci_coverage_with_pilots_subsession_size(phi):
    rng = np.random.default_rng(20260 + int(phi * 10))
    with_q, naive = coverage(ar1(phi, rng))
    print(f"AR(1) phi {phi}: coverage with Pilot's q {with_q:.4f}, naive (q = 1) {naive:.4f}")
    least, naive_most = EXPECTATIONS[phi]
    assert with_q >= least
    if phi > 0:
        assert naive <= naive_most
        assert with_q - naive >= 0.1
    else:
        assert naive >= least


STRICT_AC_LIMIT = 0.05


@pytest.mark.parametrize("phi", sorted(EXPECTATIONS))
def test_ci_coverage_reaches_the_bar_with_a_stricter_ac_limit(phi):
    rng = np.random.default_rng(20260 + int(phi * 10))
    with_q, naive = coverage(ar1(phi, rng), STRICT_AC_LIMIT)
    print(f"AR(1) phi {phi}, ac limit {STRICT_AC_LIMIT}: coverage with Pilot's q {with_q:.4f}, naive {naive:.4f}")
    assert with_q >= 0.935


def test_a_key_whose_executions_merge_subsessions_is_warned_that_their_cis_undercover():
    from analysis.pilot.results import analyse_key
    from analysis.pilot.stopping import StopTarget

    rng = np.random.default_rng(12)
    target = StopTarget(ci_percent=1.0)
    autocorrelated = [list(1.0 + 0.01 * row) for row in ar1(0.9, rng, rows=3, length=500)]
    _, warnings = analyse_key("b:vm:v", autocorrelated, ["completed"] * 3, target)
    assert any(w.startswith("b:vm:v: ") and " of 3 process executions have autocorrelated stable iterations" in w
               for w in warnings)
    independent = [list(1.0 + 0.01 * row) for row in ar1(0.0, rng, rows=3, length=500)]
    _, warnings = analyse_key("b:vm:v", independent, ["completed"] * 3, target)
    assert not any("autocorrelated" in w for w in warnings)
