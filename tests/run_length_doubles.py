"""Test doubles with the API of analysis.pilot.stopping and analysis.pilot.wps (/work/wt/PILOT_API.md).

They let the supervisor's side of [stop] be tested without numpy and without
Pilot's statistics: the numbers are simple and predictable on purpose, not
Pilot's.  Hand them to the supervisor through its seam:
``FakeMachine(..., run_length=double_analysis())``.

- an execution's estimate is the mean of all its times (unusable when it has none);
  its required iterations are twice what it ran;
- a key's CI width is the range of its executions' means; it converges once it has
  min_executions and that range is within the target; more_executions is what is
  left to min_executions (at least 1); next_iterations doubles the last, capped at
  max_iterations (None without one);
- the WPS fit is least squares of duration on work amount, v = 1 / slope, and its
  CI width is v times the largest relative residual; the next work amount steps
  by (max - min) / slices, and the slices double when it passes max.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from supervisor.kinds.stop.analysis import RunLengthAnalysis


@dataclass(frozen=True)
class StopTarget:
    ci_percent: float | None = None
    ci_width: float | None = None
    confidence: float = 0.95
    min_executions: int = 3
    max_executions: int = 30
    estimate: str = "pilot"
    ac_limit: float = 0.1
    min_samples: int = 200


@dataclass(frozen=True)
class ExecutionEstimate:
    mean: float | None
    segment: tuple[int, int] | None
    q: int | None
    ci_width: float | None
    required_iterations: int | None
    reason: str


@dataclass(frozen=True)
class KeyDecision:
    executions: int
    usable: int
    mean: float | None
    ci_width: float | None
    target_width: float | None
    more_executions: int
    next_iterations: int | None
    done: bool
    converged: bool
    reason: str


@dataclass
class FakeStopping:
    """analysis.pilot.stopping's API; ``calls`` records what the supervisor asked; ``fail`` raises in decide_key."""
    calls: list[tuple] = field(default_factory=list)
    fail: Exception | None = None
    StopTarget = StopTarget
    ExecutionEstimate = ExecutionEstimate

    def execution_estimate(self, times: Sequence[float], target: StopTarget) -> ExecutionEstimate:
        self.calls.append(("execution_estimate", len(times), target.estimate))
        if not times:
            return ExecutionEstimate(None, None, None, None, None, "no iterations")
        return ExecutionEstimate(sum(times) / len(times), (0, len(times)), 1, 0.0, 2 * len(times),
                                 f"double: mean of {len(times)}")

    def decide_key(self, estimates: Sequence[ExecutionEstimate], iterations_run: Sequence[int],
                   target: StopTarget, *, max_iterations: int | None = None) -> KeyDecision:
        self.calls.append(("decide_key", len(estimates), tuple(iterations_run), max_iterations))
        if self.fail is not None:
            raise self.fail
        assert all(isinstance(e, ExecutionEstimate) for e in estimates)
        means = [e.mean for e in estimates if e.mean is not None]
        n = len(estimates)
        mean = sum(means) / len(means) if means else None
        ci = max(means) - min(means) if len(means) >= 2 else None
        widths = [w for w in ((target.ci_percent * mean) if target.ci_percent and mean else None,
                              target.ci_width) if w is not None]
        width = min(widths) if widths else None
        converged = n >= target.min_executions and ci is not None and width is not None and ci <= width
        done = converged or n >= target.max_executions
        more = 0 if done else min(max(target.min_executions - n, 1), target.max_executions - n)
        following = None if done or max_iterations is None else min(max_iterations, 2 * iterations_run[-1])
        reason = "double: " + ("target reached" if converged else "max reached" if done else f"{more} more")
        return KeyDecision(n, len(means), mean, ci, width, more, following, done, converged, reason)


@dataclass(frozen=True)
class WpsResult:
    alpha_s: float
    v_per_s: float
    v_ci_width: float
    ssr: float
    ssr_percent: float
    subsession_size: int
    q: int
    rounds_used: int


@dataclass
class FakeWps:
    """analysis.pilot.wps's API (the part the supervisor uses)."""
    calls: list[tuple] = field(default_factory=list)

    def next_wps_work_amount(self, last_work: int, last_duration_s: float, min_work: int, max_work: int,
                             desired_session_s: float = 60.0, slices: int | None = None) -> tuple[int, int]:
        self.calls.append(("next_wps_work_amount", last_work, slices))
        slices = slices or 4
        following = last_work + (max_work - min_work) // slices
        if following > max_work:
            slices *= 2
            following = min_work + (max_work - min_work) // slices
        return following, slices

    def wps_fit(self, work_amounts, durations_ns, *, ac_limit=0.1, threshold_ns=0, confidence=0.95,
                variant="textbook") -> WpsResult:
        self.calls.append(("wps_fit", tuple(work_amounts)))
        n = len(work_amounts)
        if n < 3:
            raise ValueError(f"double: {n} rounds; WPS needs at least 3")
        w_mean, t_mean = sum(work_amounts) / n, sum(durations_ns) / n
        sxx = sum((w - w_mean) ** 2 for w in work_amounts)
        if sxx == 0:
            raise ValueError("double: one work amount for every round")
        slope = sum((w - w_mean) * (t - t_mean) for w, t in zip(work_amounts, durations_ns)) / sxx
        alpha = t_mean - slope * w_mean
        residuals = [abs(alpha + slope * w - t) / t for w, t in zip(work_amounts, durations_ns)]
        v = 1e9 / slope
        return WpsResult(alpha / 1e9, v, v * max(residuals), 0.0, 0.0, n, 1, n)


def double_analysis(**stopping) -> RunLengthAnalysis:
    """The supervisor's run-length seam on the doubles (``stopping``: FakeStopping's fields)."""
    return RunLengthAnalysis(stopping=FakeStopping(**stopping), wps=FakeWps(), required=())
