"""stopping.py: one execution's estimate, one key's decision, and the rule simulated on many keys."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.pilot import subsession as ss
from analysis.pilot.stopping import ExecutionEstimate, KeyDecision, StopTarget, decide_key, execution_estimate

TARGET = StopTarget(ci_percent=0.02, min_executions=3)  # the rule at a small minimum


def noisy(levels: list[tuple[float, int]], seed: int = 1, cv: float = 0.01) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.full(n, level) for level, n in levels])
    return x * (1 + cv * rng.standard_normal(x.size))


def estimate(mean: float | None, segment=(0, 100), required: int | None = 300) -> ExecutionEstimate:
    usable = mean is not None
    return ExecutionEstimate(mean, segment if usable else None, 1 if usable else None, 0.01 if usable else None,
                             required if usable else None, "test")


# --- one execution ---------------------------------------------------------------------------


def test_pilot_estimate_drops_the_warm_up():
    times = noisy([(2.0, 60), (1.0, 240)])
    est = execution_estimate(times, TARGET)
    # EDM's medians put the change at 58 here, not 60 (Pilot's changepoints, not ours to fix).
    assert est.segment is not None and 55 <= est.segment[0] <= 65 and est.segment[1] == 300
    begin, end = est.segment
    assert est.mean == pytest.approx(ss.sample_mean(times[begin:end]))
    assert est.mean == pytest.approx(1.0, rel=0.01)
    stable = times[begin:end]
    assert est.q == ss.optimal_subsession_size(stable) and est.q is not None
    assert est.ci_width == ss.ci_width(stable, est.q)
    assert est.required_iterations == ss.required_samples(stable, ci_percent=0.02) >= TARGET.min_samples
    assert est.reason.startswith("stable segment [")


def test_pilot_estimate_keeps_short_executions_whole():
    est = execution_estimate([1.0, 1.1, 0.9, 1.0] * 5, TARGET)
    assert est.segment == (0, 20) and est.mean == pytest.approx(1.0)
    assert "fewer than 30" in est.reason


def test_pilot_estimate_without_a_dominant_segment_is_unusable():
    """methods.md: [1.1]x30 + [5.1]x30 + [1.1]x30 has changepoints [30, 60] and no dominant segment."""
    est = execution_estimate([1.1] * 30 + [5.1] * 30 + [1.1] * 30, TARGET)
    assert est.mean is None and est.segment is None and est.required_iterations is None
    assert "no stable segment" in est.reason


def test_warmup_stats_estimate_is_the_steady_state_mean():
    times = noisy([(2.0, 50), (1.0, 250)], seed=3)
    est = execution_estimate(times, StopTarget(ci_percent=0.02, estimate="warmup_stats"))
    assert est.segment is not None and 45 <= est.segment[0] <= 55 and est.segment[1] == 300
    assert est.mean == pytest.approx(1.0, rel=0.01)
    assert "warmup_stats" in est.reason


def test_warmup_stats_without_a_steady_state_is_unusable():
    times = noisy([(1.0, 180), (2.0, 20)], seed=4, cv=0.001)
    est = execution_estimate(times, StopTarget(ci_percent=0.02, estimate="warmup_stats"))
    assert est.mean is None and "no steady state" in est.reason


def test_constant_and_empty_executions():
    est = execution_estimate([0.5] * 100, TARGET)
    assert (est.mean, est.q, est.ci_width, est.required_iterations) == (0.5, 1, 0.0, TARGET.min_samples)
    empty = execution_estimate([], TARGET)
    assert empty.mean is None and empty.reason == "no iterations"
    assert execution_estimate([1.0, 2.0], TARGET).ci_width is None  # a mean, but too short for a CI


# --- one key ---------------------------------------------------------------------------------


def test_min_executions_before_done():
    d = decide_key([estimate(1.0), estimate(1.0001)], [100, 100], TARGET)
    assert not d.done and d.more_executions == 1 and d.usable == 2
    d = decide_key([estimate(1.0), estimate(1.0001), estimate(0.9999)], [100] * 3, TARGET)
    assert d.done and d.converged and d.more_executions == 0 and d.next_iterations is None
    assert d.ci_width is not None and d.target_width is not None and d.ci_width <= d.target_width
    assert d.mean == pytest.approx(1.0) and "target reached" in d.reason


def test_required_executions_follow_pilots_formula():
    means = [1.0, 1.05, 0.95, 1.02]
    d = decide_key([estimate(m) for m in means], [100] * 4, StopTarget(ci_percent=0.02, min_executions=3, max_executions=1000))
    width = 0.02 * ss.sample_mean(means)
    t_over_e = ss.t_quantile(0.95, 3) / (width / 2)
    required = max(math.ceil(ss.subsession_var(means, 1) * t_over_e**2), TARGET.min_executions)
    assert d.more_executions == required - 4 and not d.done
    assert d.ci_width == pytest.approx(ss.ci_width(means, 1))
    assert d.target_width == pytest.approx(width)


def test_max_executions_ends_without_convergence():
    target = StopTarget(ci_percent=0.001, min_executions=2, max_executions=4)
    ests = [estimate(m) for m in (1.0, 1.2, 0.8)]
    d = decide_key(ests, [100] * 3, target)
    assert not d.done and d.more_executions == 1  # never past max_executions
    d = decide_key([*ests, estimate(None)], [100] * 4, target)  # an unusable execution still counts
    assert d.done and not d.converged and d.more_executions == 0 and d.usable == 3
    assert "max_executions" in d.reason


def test_no_usable_execution_yet():
    d = decide_key([estimate(None)], [100], TARGET)
    assert (d.usable, d.mean, d.ci_width, d.done) == (0, None, None, False)
    assert d.more_executions == TARGET.min_executions and d.next_iterations == 200  # Pilot's doubling


def test_next_iterations_pilots_round_rule():
    ests = [estimate(1.0, segment=(50, 200), required=300), estimate(1.1, segment=(50, 200), required=300)]
    # need 300 stable iterations, 200 run per 150 stable: int(1.2 * 300 * 4/3) = 480
    assert decide_key(ests, [200, 200], TARGET).next_iterations == 480
    assert decide_key(ests, [200, 200], TARGET, max_iterations=300).next_iterations == 300
    small = [estimate(1.0, segment=(0, 100), required=10), estimate(1.1, segment=(0, 100), required=10)]
    assert decide_key(small, [100, 100], TARGET).next_iterations == 100  # the first usable length is the floor
    huge = [estimate(1.0, segment=(0, 100), required=10_000), estimate(1.1, segment=(0, 100), required=10_000)]
    assert decide_key(huge, [100, 100], TARGET).next_iterations == 500  # soft limit: 5 x the average run
    # Pilot's soft limit takes the integer average: 5 x (151 // 2) = 375, not 377.
    assert decide_key(huge, [100, 51], TARGET).next_iterations == 375


def test_decide_key_rejects_mismatched_lists():
    with pytest.raises(ss.PilotInputError, match="one per execution"):
        decide_key([estimate(1.0)], [100, 100], TARGET)


# --- the rule on many keys -------------------------------------------------------------------


def ar1_noise(phi: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Stationary AR(1) with unit variance."""
    e = rng.standard_normal(n) * math.sqrt(1 - phi * phi)
    x = np.empty(n)
    x[0] = rng.standard_normal()
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def fixed_schedule(worst_cv: float, ci_percent: float, confidence: float) -> int:
    """Executions a fixed schedule needs so the noisiest key's CI reaches the target.

    Sized from the between-execution spread alone (the iterations' own noise
    only adds to it), so the fixed schedule it gives is, if anything, too cheap.
    """
    n = 2
    while 2 * ss.t_quantile(confidence, n - 1) * worst_cv / math.sqrt(n) > ci_percent:
        n += 1
    return n


def run_key(mu: float, cv_between: float, phi: float, target: StopTarget, rng: np.random.Generator,
            first_iterations: int = 120, max_iterations: int = 400) -> tuple[KeyDecision, list[int]]:
    """Executions of one key until decide_key says done: a 30-iteration warm-up at 1.3x, then the steady mean."""
    estimates: list[ExecutionEstimate] = []
    runs: list[int] = []
    iterations = first_iterations
    while True:
        steady = mu * (1 + cv_between * rng.standard_normal())
        times = steady * (1 + 0.03 * ar1_noise(phi, iterations, rng))
        times[:30] *= 1.3
        estimates.append(execution_estimate(times, target))
        runs.append(iterations)
        decision = decide_key(estimates, runs, target, max_iterations=max_iterations)
        if decision.done:
            return decision, runs
        iterations = decision.next_iterations or iterations


def test_adaptive_stopping_end_to_end():
    """Keys with known means: iterations (i.i.d. or AR(1)) -> Pilot's stable segment -> decide_key."""
    rng = np.random.default_rng(20261124)
    target = StopTarget(ci_percent=0.02, min_executions=8, max_executions=40, min_samples=50)
    keys = 150
    mus, cvs = rng.uniform(0.05, 1.0, keys), rng.uniform(0.001, 0.02, keys)
    executions, covered, converged = [], 0, 0
    for k in range(keys):
        decision, runs = run_key(mus[k], cvs[k], 0.0 if k % 2 else 0.6, target, rng)
        executions.append(len(runs))
        converged += decision.converged
        assert decision.mean is not None and decision.ci_width is not None
        covered += abs(decision.mean - mus[k]) <= decision.ci_width / 2
    fixed = fixed_schedule(cvs.max(), target.ci_percent, target.confidence)
    saved = fixed * keys - sum(executions)
    print(f"end to end: {keys} keys, adaptive {sum(executions)} executions, fixed {fixed} x {keys} = {fixed * keys}, "
          f"saved {saved}; converged {converged}; coverage {covered / keys:.3f}")
    assert converged == keys
    assert saved > 0.25 * fixed * keys
    # 150 keys: the coverage estimate has an SE of about 0.018; 0.89 allows 3 SE below 0.95.
    assert covered / keys >= 0.89


def rule_only(keys: int, min_executions: int, rng: np.random.Generator) -> tuple[float, int, int]:
    """(coverage, executions used, fixed-schedule executions) with execution means drawn directly."""
    target = StopTarget(ci_percent=0.02, min_executions=min_executions, max_executions=60)
    mus, cvs = rng.uniform(0.05, 1.0, keys), rng.uniform(0.001, 0.02, keys)
    used = covered = 0
    for mu, cv in zip(mus, cvs):
        estimates: list[ExecutionEstimate] = []
        while True:
            estimates.append(estimate(mu * (1 + cv * rng.standard_normal())))
            decision = decide_key(estimates, [100] * len(estimates), target)
            if decision.done:
                break
        used += len(estimates)
        assert decision.mean is not None and decision.ci_width is not None
        covered += abs(decision.mean - mu) <= decision.ci_width / 2
    return covered / keys, used, fixed_schedule(cvs.max(), 0.02, 0.95) * keys


def test_adaptive_stopping_keeps_coverage():
    """The decision rule alone on 800 keys: coverage of the final CIs at min_executions 8.

    Stopping as soon as the CI is narrow enough favours runs whose variance
    happens to look small, so coverage sits a little below nominal; the
    tolerance is 2.5 points (the estimate's SE is about 0.008). The default
    min_executions 3 is printed for the record: it covers less (0.87-0.92
    in these simulations); Pilot's own guard against this is its minimum of
    200 samples.
    """
    rng = np.random.default_rng(7)
    coverage, used, fixed = rule_only(800, 8, rng)
    print(f"rule only, min_executions 8: coverage {coverage:.3f}, {used} executions against fixed {fixed}, saved {fixed - used}")
    low_coverage, low_used, _ = rule_only(800, 3, rng)
    print(f"rule only, min_executions 3: coverage {low_coverage:.3f}, {low_used} executions")
    assert coverage >= 0.925
    assert used < 0.75 * fixed
    assert low_coverage < coverage
