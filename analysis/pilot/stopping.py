"""Pilot's stopping rule across process executions: does a benchmark key need more?

The supervisor calls this between executions, never during one
(../shared/DESIGN.md), with every finished execution's iteration times of
one key. Pilot (Li et al.) decides the
length of one session of rounds; coldrun applies the same statistics one
level up, where **process executions are the independent samples**.

One execution (:func:`execution_estimate`):

- ``estimate="pilot"``: the mean of Pilot's stable (dominant) segment,
  ``analysis.pilot.edm.dominant_segment`` (EDM, min_size 30, percent 0.25),
  as Pilot's ingest keeps unit readings: fewer than 30 iterations -> all of
  them (Pilot keeps a short round whole); no dominant segment -> unusable.
- ``estimate="warmup_stats"``: warmup_stats' steady-state mean of the
  execution (outliers, R-exact changepoints, classification, steady
  segments: the existing analysis with its defaults: window 10 %, steady
  25 %, delta 0.001 s), the unweighted mean of the steady segments' means;
  the segment runs from the first steady segment to the end. Fewer than 4
  non-outlier iterations or "no steady state" -> unusable.
- Within the segment (3 or more iterations): Pilot's optimal subsession size
  q at ``ac_limit``, the full CI width at ``confidence`` and the required
  iterations q * max(opt, min_samples) for the target width (ci_percent of
  the segment's mean and/or ci_width). Pilot's own session always used cl
  0.95 and AC limit 0.1 here; coldrun passes the target's values.
  No q within the AC limit: q, CI and required are None (Pilot's -1).
- Departure: a constant segment (coarse clock) has a zero-width CI, so q = 1,
  width 0 and required = min_samples; Pilot's autocorrelation of a constant
  series is 1 (its NaN rule) and it would never find a q.
- Times must be finite and >= 0: anything else is corrupt data and raises
  :class:`~analysis.pilot.subsession.PilotInputError` (an AnalysisError).
  An execution without iterations is unusable, not an error.

One key (:func:`decide_key`):

- mean: the arithmetic mean of the usable executions' means; the CI across
  executions is Pilot's subsession CI of those means (Student t, full width)
  with Pilot's q at ``ac_limit``, normally 1. Departure: when no q passes the
  limit, q = 1 (executions are independent by construction, each after a
  reboot; the lag-1 autocorrelation of a handful of means is mostly noise,
  and Pilot's "not enough data" would only keep doubling the executions).
  All means equal: width 0 (the constant-series departure above).
- required executions = q * max(opt, min_executions), opt = ceil(var_q (T/e)^2)
  as in Pilot; with fewer than 2 usable executions, max(min_executions, 2).
- done and converged when usable >= required; this is equivalent to the CI
  being no wider than the target. Departure: Pilot's session rule is strict
  (done when required < total), which here would make min_executions mean
  one more than it says. Done, not converged, at max_executions.
- Coverage: stopping as soon as the CI looks narrow enough favours runs
  whose spread happens to look small. Simulated
  (tests/analysis/pilot/test_pilot_stopping.py), the final 95 % CIs cover
  about 0.95 at the default min_executions 8 but only 0.87-0.92 at 3
  (Pilot guards its own sessions with a 200-sample minimum).
- more_executions = required - usable, at least 1, never past
  max_executions (unusable executions count toward max_executions).
- next_iterations (Pilot's next-round work amount, adapted): need = the
  mean required iterations of the executions that have one (rounded up);
  next = int(1.2 * need * (iterations run / stable iterations)) over those
  executions (Pilot's 1.2 safety factor over its work per kept unit);
  when no execution gives a requirement, twice the last execution's
  iterations (Pilot's doubling); at least the iterations of the first usable
  execution (Pilot's adjusted minimum work amount: the first round long
  enough); then capped at ``max_iterations`` and at 5 x the average
  iterations run so far (Pilot's soft limit). None when done or nothing ran.
  Known limit, as in Pilot: the ratio assumes the warm-up grows with the
  execution; the floor keeps executions from shrinking below the first
  usable length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from analysis.pilot import subsession as ss
from analysis.pilot.subsession import PilotInputError

if TYPE_CHECKING:
    import numpy as np

ESTIMATES = ("pilot", "warmup_stats")
# Pilot's next-round rule (ascar-io/pilot-bench d8bf8a5 lib/workload.cc):
SAFETY_FACTOR = 1.2  # it asks for 20 % more than it computes
SOFT_LIMIT_FACTOR = 5  # round_work_amount_to_avg_amount_limit_: at most 5 x the integer average so far
PILOT_MIN_SEGMENT = 30  # Pilot's MIN_CHANGEPOINT_DETECTION_SAMPLE_SIZE


@dataclass(frozen=True)
class StopTarget:
    ci_percent: float | None = None  # wanted FULL CI width as a fraction of the mean (0.02 = 2 %)
    ci_width: float | None = None  # wanted FULL CI width, absolute (seconds); if both: the smaller width wins (Pilot)
    confidence: float = 0.95
    min_executions: int = 8  # see Coverage above: 3 undercovers
    max_executions: int = 30
    estimate: str = "pilot"  # "pilot": Pilot's stable segment; "warmup_stats": warmup_stats' steady state
    ac_limit: float = 0.1
    min_samples: int = 200  # Pilot's minimum subsession sample size, within one execution

    def __post_init__(self) -> None:
        ss.required_ci_width(1.0, self.ci_percent, self.ci_width)  # one given, each > 0
        ss.check_confidence(self.confidence)
        for name in ("min_executions", "max_executions", "min_samples"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise PilotInputError(f"{name} must be a whole number >= 0, not {value!r}")
        if self.min_executions < 2:
            raise PilotInputError(f"min_executions must be at least 2 (a CI needs two executions), "
                                  f"not {self.min_executions}")
        if self.max_executions < self.min_executions:
            raise PilotInputError(f"max_executions ({self.max_executions}) is below "
                                  f"min_executions ({self.min_executions})")
        if self.estimate not in ESTIMATES:
            raise PilotInputError(f"estimate must be one of {', '.join(ESTIMATES)}, not {self.estimate!r}")
        if not (isinstance(self.ac_limit, (int, float)) and 0 <= self.ac_limit <= 1):
            raise PilotInputError(f"ac_limit must be between 0 and 1 (Pilot's default 0.1), not {self.ac_limit!r}")


@dataclass(frozen=True)
class ExecutionEstimate:
    mean: float | None  # None: unusable (too few readings, no stable segment / steady state)
    segment: tuple[int, int] | None  # [begin, end) of the iterations the mean is taken over
    q: int | None  # subsession size within the execution
    ci_width: float | None  # within-execution full CI width
    required_iterations: int | None  # Pilot: q * max(opt, min_samples) stable iterations for the target width
    reason: str  # one line, e.g. "stable segment [31, 2000)" or why unusable


@dataclass(frozen=True)
class KeyDecision:
    executions: int  # executions analysed (usable or not)
    usable: int
    mean: float | None  # grand mean over usable executions' means
    ci_width: float | None  # full CI width ACROSS executions
    target_width: float | None
    more_executions: int  # 0 when done; never past max_executions
    next_iterations: int | None  # iterations for this key's next execution, None = keep as is
    done: bool
    converged: bool  # done because the target was reached (not because max was hit)
    reason: str  # one line for status/logs


def _unusable(reason: str) -> ExecutionEstimate:
    return ExecutionEstimate(None, None, None, None, None, reason)


def _times(times: Sequence[float]) -> np.ndarray:
    import numpy as np

    arr = ss.as_sample(times, what="iteration times")
    negative = np.flatnonzero(arr < 0)
    if negative.size:
        i = int(negative[0])
        raise PilotInputError(f"iteration times: iteration {i} took {arr[i]} s; a time cannot be negative")
    return arr


def _pilot_segment(arr: np.ndarray) -> tuple[tuple[int, int] | None, float | None, str]:
    from analysis.pilot import edm

    n = arr.size
    if n < PILOT_MIN_SEGMENT:
        return (0, n), None, f"all {n} iterations (fewer than {PILOT_MIN_SEGMENT}: Pilot keeps them all)"
    segment = edm.dominant_segment(arr)
    if segment is None:
        return None, None, f"no stable segment longer than half of the {n} iterations"
    return segment, None, f"stable segment [{segment[0]}, {segment[1]})"


def steady_segment(arr: np.ndarray) -> tuple[tuple[int, int] | None, float | None, str]:
    """warmup_stats' steady state of one execution: ([begin, n) or None, its mean, why); also the
    screening analysis' warm-up cut (analysis.screen.executions)."""
    from analysis import changepoints, classify, outliers

    n = arr.size
    outs = outliers.find_outliers(arr, outliers.default_window(n))
    try:
        seg = changepoints.segment_execution(arr, outs)
    except changepoints.TooShortForChangepoints as exc:
        return None, None, str(exc)
    cls = classify.classify_execution(seg.changepoints, seg.means, seg.variances, n, classify.default_steady(n))
    if cls == classify.NO_STEADY_STATE:
        return None, None, "no steady state (warmup_stats)"
    steady = classify.steady_state(arr.tolist(), outs, seg.changepoints, seg.means, seg.variances, cls)
    first = steady.first_steady_segment
    begin = 0 if first == 0 else seg.changepoints[first - 1] + 1
    return (begin, n), steady.steady_state_mean, f"steady state [{begin}, {n}) ({cls}, warmup_stats)"


def execution_estimate(times: Sequence[float], target: StopTarget) -> ExecutionEstimate:
    """The estimate of one process execution's iteration time (module doc)."""
    from analysis import changepoints

    arr = _times(times)
    if arr.size == 0:
        return _unusable("no iterations")
    reason = changepoints.out_of_range(arr)
    if reason:
        return _unusable(reason)
    finder = _pilot_segment if target.estimate == "pilot" else steady_segment
    segment, mean, reason = finder(arr)
    if segment is None:
        return _unusable(reason)
    stable = arr[segment[0]: segment[1]]
    if mean is None:
        mean = ss.sample_mean(stable)
    if stable.size < ss.MIN_SAMPLES_FOR_REQUIRED:
        return ExecutionEstimate(mean, segment, None, None, None, f"{reason}; too short for a CI")
    if stable.min() == stable.max():
        return ExecutionEstimate(mean, segment, 1, 0.0, target.min_samples, f"{reason}; constant")
    analysis = ss.analyse_sample(stable, ci_percent=target.ci_percent, ci_width=target.ci_width,
                                 min_samples=target.min_samples, confidence=target.confidence,
                                 ac_limit=target.ac_limit)
    if analysis.q is None:
        reason += f"; autocorrelated beyond {target.ac_limit} at every subsession size"
    return ExecutionEstimate(mean, segment, analysis.q, analysis.ci_width, analysis.required, reason)


def _across(means: np.ndarray, target: StopTarget, width: float) -> tuple[int, float, int]:
    """(q, full CI width, required executions) from the usable executions' means."""
    if means.min() == means.max():
        return 1, 0.0, target.min_executions
    q = ss.optimal_subsession_size(means, ac_limit=target.ac_limit)
    q = 1 if q < 0 else q
    ci = ss.ci_width(means, q, target.confidence)
    opt = ss.subsessions_for_width(means, q, width, confidence=target.confidence)
    return q, ci, q * max(opt, target.min_executions)


def _check_runs(estimates: Sequence[ExecutionEstimate], iterations_run: Sequence[int]) -> None:
    if len(estimates) != len(iterations_run):
        raise PilotInputError(f"{len(estimates)} estimates but {len(iterations_run)} iteration counts; "
                              f"give one per execution")
    for i, run in enumerate(iterations_run):
        if not isinstance(run, int) or isinstance(run, bool) or run < 0:
            raise PilotInputError(f"execution {i}: iterations run must be a whole number >= 0, not {run!r}")


def decide_key(
    estimates: Sequence[ExecutionEstimate],
    iterations_run: Sequence[int],
    target: StopTarget,
    *,
    max_iterations: int | None = None,
) -> KeyDecision:
    """Whether a key needs more executions, how many, and how long the next should be (module doc)."""
    import numpy as np

    _check_runs(estimates, iterations_run)
    if max_iterations is not None and (not isinstance(max_iterations, int) or max_iterations < 1):
        raise PilotInputError(f"max_iterations must be a whole number >= 1, not {max_iterations!r}")
    executions = len(estimates)
    means = np.array([e.mean for e in estimates if e.mean is not None], dtype=np.float64)
    usable = means.size
    mean = ci = width = None
    required = max(target.min_executions, 2)
    if usable:
        mean = ss.sample_mean(means)
        width = ss.required_ci_width(mean, target.ci_percent, target.ci_width)
    q = 1
    if usable >= 2:
        assert width is not None
        q, ci, required = _across(means, target, width)
    converged = usable >= required
    done = converged or executions >= target.max_executions
    more = 0 if done else min(max(required - usable, 1), target.max_executions - executions)
    next_iterations = None if done else _next_iterations(estimates, iterations_run, max_iterations)
    reason = _reason(executions, usable, ci, width, q, required, done, converged, more, target)
    return KeyDecision(executions, usable, mean, ci, width, more, next_iterations, done, converged, reason)


def work_for(need: int, work_per_unit: float) -> int:
    """Pilot's ``size_t(1.2 * need * work_per_unit)``, in its operation order."""
    return int(SAFETY_FACTOR * need * work_per_unit)


def _next_iterations(
    estimates: Sequence[ExecutionEstimate], iterations_run: Sequence[int], max_iterations: int | None
) -> int | None:
    if not iterations_run:
        return None
    informed = [(e.required_iterations, e.segment, run) for e, run in zip(estimates, iterations_run)
                if e.required_iterations is not None and e.segment is not None]
    if informed:
        need = math.ceil(sum(required for required, _, _ in informed) / len(informed))
        stable = sum(segment[1] - segment[0] for _, segment, _ in informed)
        proposal = work_for(need, sum(run for _, _, run in informed) / stable)
    else:
        proposal = 2 * iterations_run[-1]
    floor = next((run for e, run in zip(estimates, iterations_run) if e.mean is not None), 0)
    nxt = max(floor, proposal)
    if max_iterations is not None:
        nxt = min(nxt, max_iterations)
    soft = SOFT_LIMIT_FACTOR * (sum(iterations_run) // len(iterations_run))
    return max(1, min(nxt, soft))


def _reason(executions, usable, ci, width, q, required, done, converged, more, target: StopTarget) -> str:
    head = f"{usable} of {executions} executions usable"
    if ci is not None and width is not None:
        head += f"; CI {ci:.6g} (target {width:.6g}, q {q})"
    if converged:
        return f"{head}: target reached"
    if done:
        return f"{head}: max_executions ({target.max_executions}) reached without the target"
    return f"{head}: needs {more} more (required {required})"
