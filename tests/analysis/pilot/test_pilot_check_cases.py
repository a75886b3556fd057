"""The check cases of ../shared/reference/methods.md §1, from Pilot's own tests and papers."""

from __future__ import annotations

import math

import pytest

from analysis.pilot import subsession as ss
from analysis.pilot import welch, wps
from pilot_golden import close, series, wps_rounds

FERRARI = series("ferrari48")


def test_ferrari_library_values():
    """unit_test_statistics.cc, exact doubles."""
    mean = ss.sample_mean(FERRARI)
    assert close(mean, 1.756458333333333)
    assert close(ss.subsession_var(FERRARI, 1), 0.073474423758865273)
    assert close(ss.subsession_autocov(FERRARI, 1), 0.046770566452423196)
    assert close(ss.subsession_autocorr(FERRARI, 1), 0.63655574361384437)
    assert close(ss.subsession_autocorr(FERRARI, 2), 0.55892351761172487)
    assert close(ss.subsession_var(FERRARI, 4), 0.05264711174242424)
    assert close(ss.subsession_autocorr(FERRARI, 4), 0.08230986644266707)
    assert close(ss.ci_width(FERRARI, 4, 0.95), 0.29157062128900485)
    assert ss.optimal_subsession_size(FERRARI) == 4
    # Pilot's optimal sample size (True, q 4, opt 34): required = q x opt with no minimum.
    sized = ss.analyse_sample(FERRARI, ci_width=0.1 * mean, min_samples=0)
    assert (sized.q, sized.required) == (4, 4 * 34)


def test_harmonic_mean_and_binomial_ci():
    assert close(ss.sample_mean(FERRARI[:6], "harmonic"), 1.6568334130160711)
    assert series("pub_harmonic6") == FERRARI[:6]
    binary = [1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    assert series("binary20") == binary
    assert close(ss.ci_width(binary, 1, 0.95, "binary"), 0.46566845477273205)


def _six(x: float) -> float:
    return round(x, 6)


@pytest.mark.parametrize(
    "method, ac_limit, expected",
    [
        # cli/test/unit_test_analyze.sh: default preset quick (ac 0.8), --preset strict (0.1), -m 1 (harmonic).
        ("arithmetic", 0.8, {"mean": 1.756458, "q": 1, "ci": 0.157416, "var": 0.073474}),
        ("arithmetic", 0.1, {"mean": 1.756458, "q": 4, "ci": 0.291571, "var": 0.052647, "ac": 0.082310}),
        ("harmonic", 0.8, {"mean": 1.713913, "q": 1, "ci": 0.159384, "var": 0.075323, "ac": 0.646682}),
    ],
)
def test_bench_analyze_cli_goldens(method, ac_limit, expected):
    q = ss.optimal_subsession_size(FERRARI, method, ac_limit)
    assert len(FERRARI) == 48
    assert q == expected["q"]
    assert _six(ss.sample_mean(FERRARI, method)) == expected["mean"]
    assert _six(ss.ci_width(FERRARI, q, 0.95, method)) == expected["ci"]
    assert _six(ss.subsession_var(FERRARI, q, method)) == expected["var"]
    if "ac" in expected:
        assert _six(ss.subsession_autocorr(FERRARI, q, method)) == expected["ac"]


def test_yale_body_temperature():
    """TestOfSignificance: 65 vs 65 temperatures, Welch's unrounded dof."""
    result = welch.p_eq(98.105, 98.394, 65, 65, 0.699**2, 0.743**2)
    assert close(result.p, 0.024022856222597727)
    assert close(result.dof, 127.52594900691858)
    assert result.ci is not None
    assert close(result.ci[0], -0.53937134791178476) and close(result.ci[1], -0.038628652088218252)
    # Exactly n2 in real arithmetic; Pilot truncates, so 64 is as right as 65 (README "Tolerance").
    assert welch.optimal_sample_size_for_eq_test(98.105, 65, 0.699**2, 98.394, 65, 0.743**2, result.p) in (64, 65)


def test_speed_of_light():
    """TestSpeedOfLight: vel1 (n 100) against vel2 (n 23), at 0.99."""
    vel1, vel2 = series("pub_light_vel1"), series("pub_light_vel2")
    assert (len(vel1), len(vel2)) == (100, 23)
    v1, v2 = ss.subsession_var(vel1, 1), ss.subsession_var(vel2, 1)
    assert math.sqrt(v1) == pytest.approx(79.0105478191, abs=1e-9)
    assert math.sqrt(v2) == pytest.approx(107.114618526, abs=1e-8)
    result = welch.p_eq(ss.sample_mean(vel1), ss.sample_mean(vel2), 100, 23, v1, v2, 0.99)
    assert result.dof == pytest.approx(27.754, abs=1e-3)
    assert result.p == pytest.approx(0.0003625357, abs=1e-10)
    assert result.ci is not None
    assert result.ci[0] == pytest.approx(30.67544, abs=1e-5) and result.ci[1] == pytest.approx(161.68977, abs=1e-5)


OLS1_W = [50, 100, 150, 200, 250]
OLS1_T_NS = [int((2 * w + 42 + e) * 1e9) for w, e in zip(OLS1_W, [20, -9, -18, -25, 30])]

OLS_CASES = {
    # name: (work amounts, durations ns, alpha, v, ssr, original v_ci, fork v_ci)
    "ols1": (OLS1_W, OLS1_T_NS, 40.4, 0.49800796812749004, 2327.6, 0.18031725051092712, 0.30160248000899775),
    "ols3": (*wps_rounds("wps_ols3"), 2.029655249066034, 148182202.22358331, 0.2059332822291205,
             15068212467.989027, 178441309.31850272),
    "ols4": (*wps_rounds("wps_ols4"), 2.6945964769784672, 172572240.77355415, 0.5919330707383702,
             114550295.40768626, 141053262.11992693),
}


@pytest.mark.parametrize("name", sorted(OLS_CASES))
@pytest.mark.parametrize("variant", wps.VARIANTS)
def test_ordinary_least_squares(name, variant):
    """OrdinaryLeastSquareLinearRegression1, 3, 4 (AC limit 1, threshold 0: q = 1)."""
    w, t, alpha, v, ssr, ci_original, ci_fork = OLS_CASES[name]
    fit = wps.wps_fit(w, t, ac_limit=1, threshold_ns=0, variant=variant)
    assert fit.q == 1 and fit.subsession_size == len(w) == fit.rounds_used
    assert close(fit.alpha_s, alpha) and close(fit.v_per_s, v) and close(fit.ssr, ssr)
    if variant == "ascar":
        assert close(fit.v_ci_width, ci_original)
    elif variant == "fork" or not math.isinf(fit.v_ci_width):
        assert close(fit.v_ci_width, ci_fork)
    else:  # ols3: 1/v +- hw reaches 0, so the textbook fit says the CI of v is unbounded
        assert name == "ols3"


def test_ols1_matches_its_golden_input():
    assert wps_rounds("wps_ols1") == (OLS1_W, OLS1_T_NS)


@pytest.mark.parametrize("variant", wps.VARIANTS)
def test_ols2_noise_free(variant):
    w, t = wps_rounds("wps_pub_ols2")
    fit = wps.wps_fit(w, t, ac_limit=1, variant=variant)
    assert fit.ssr == pytest.approx(0, abs=1e-20)
    assert fit.v_per_s == pytest.approx(30e9, rel=1e-12)
    assert fit.alpha_s == pytest.approx(-1541.7e-9, rel=1e-4)
    assert fit.v_ci_width <= 1e-9 * fit.v_per_s


@pytest.mark.parametrize("name", ["wps_pub_fixed_4", "wps_pub_fixed_12"])
@pytest.mark.parametrize("variant", wps.VARIANTS)
def test_fixed_setup_and_warm_up(name, variant):
    """ReadingsWithFixedSetupAndWarmupDuration*: v = 1.5 recovered, CI about 0."""
    fit = wps.wps_fit(*wps_rounds(name), ac_limit=1, variant=variant)
    assert fit.v_per_s == pytest.approx(1.5, abs=1e-8)
    assert fit.v_ci_width <= 1e-9 * fit.v_per_s


def test_slice_schedule():
    """TestCalcNextRoundWorkAmountFromWPS: min 10, max 1000, 60 s session."""
    work, slices = wps.next_wps_work_amount(10, 1.0, 10, 1000)
    assert work == 21  # slice 11 from k = max(1 s, (120 - 20) / 90 s)
    work, slices = wps.next_wps_work_amount(365, 1.0, 10, 1000, slices=slices)
    assert work == 373
    work, slices = wps.next_wps_work_amount(999, 1.0, 10, 1000, slices=slices)
    assert work == 15  # past max - slice: the slice halves to 5
    work, slices = wps.next_wps_work_amount(15, 1.0, 10, 1000, slices=slices)
    assert work == 20


def test_slice_schedule_edges():
    assert wps.next_wps_work_amount(3, 1.0, 10, 1000, slices=90) == (21, 90)  # below min: min + slice
    assert wps.next_wps_work_amount(20, 1.0, 10, 15)[0] == 11  # range <= 10: slices = range, slice 1, never halved
    assert wps.next_wps_work_amount(1000, 1.0, 0, 8, slices=8) == (1, 8)
