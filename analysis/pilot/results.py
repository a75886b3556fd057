"""Pilot's analysis of benchmark results: every process execution, then every key.

What ``coldrun-analyze pilot RESULTS...`` reports, and the Pilot section of
the HTML report. It applies exactly the functions the supervisor's Pilot
stopping rule decides with (``analysis.pilot.stopping``), so a report shows
the numbers a Pilot-stopped experiment was stopped on:

- per process execution, :func:`~analysis.pilot.stopping.execution_estimate`
  with ``estimate="pilot"``: the stable segment [begin, end) (EDM changepoints
  and Pilot's dominant segment; all iterations of an execution shorter than
  30), its mean, Pilot's q, the full CI width and the required iterations
  q x max(opt, min_samples) within the execution;
- per key, :func:`~analysis.pilot.stopping.decide_key`: the executions are
  the independent samples, so the key's mean is the mean of the usable
  executions' means and its CI is Pilot's CI of those means; whether that
  CI meets the target, and how many more executions it would need (not
  capped: the report has no max_executions).

Executions without data (errored, crashed, invalid ...:
``analysis.execution_states``) stay rows that say so. One warning line
each for an execution too short for warm-up removal (fewer than 30
iterations) and for one whose stable iterations are all equal (a coarse
clock: its CI width is 0). NaN, infinite or negative times never get here:
the loader drops such an execution with a warning (state ``invalid``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Iterable

from analysis import execution_states
from analysis.errors import WarningSink, stderr_warning
from analysis.pilot import stopping
from analysis.pilot.level_shift import level_shift
from analysis.pilot.stopping import ExecutionEstimate, KeyDecision, StopTarget

# decide_key caps the executions it asks for at max_executions; a report
# says how many the target needs, so the cap is out of reach.
UNCAPPED_EXECUTIONS = 10**9
# A report judges the executions it is given (is the CI within the target?);
# the stopping rule's larger minimum guards its early stop, not a report.
REPORT_MIN_EXECUTIONS = 2


@dataclass(frozen=True)
class ExecutionRow:
    pexec: int
    state: str  # analysis.execution_states
    iterations: int
    estimate: ExecutionEstimate | None  # None: no data
    warning: str | None = None  # what the reader must know about this estimate (a level shift)

    def as_dict(self) -> dict:
        e = self.estimate
        return {
            "pexec": self.pexec,
            "state": self.state,
            "iterations": self.iterations,
            "stable_segment": list(e.segment) if e and e.segment else None,
            "q": e.q if e else None,
            "mean": e.mean if e else None,
            "ci_width": e.ci_width if e else None,
            "required_samples": e.required_iterations if e else None,
            "note": "; ".join(filter(None, (e.reason, self.warning))) if e else execution_states.label(self.state),
        }


@dataclass(frozen=True)
class KeyReport:
    key: str
    executions: list[ExecutionRow]
    decision: KeyDecision

    def usable_means(self) -> list[float]:
        return [r.estimate.mean for r in self.executions if r.estimate is not None and r.estimate.mean is not None]

    def median_segment(self) -> tuple[int, int] | None:
        """The median begin and the median end of the executions' stable segments."""
        segments = [r.estimate.segment for r in self.executions if r.estimate is not None and r.estimate.segment]
        if not segments:
            return None
        return (statistics.median_low(s[0] for s in segments), statistics.median_low(s[1] for s in segments))

    def median_q(self) -> int | None:
        qs = [r.estimate.q for r in self.executions if r.estimate is not None and r.estimate.q is not None]
        return statistics.median_low(qs) if qs else None

    def summary_dict(self) -> dict:
        d = self.decision
        segment = self.median_segment()
        return {
            "executions": len(self.executions),  # every slot, failed ones too
            "usable": d.usable,
            "median_stable_segment": list(segment) if segment else None,
            "median_q": self.median_q(),
            "mean": d.mean,
            "ci_width": d.ci_width,
            "target_ci_width": d.target_width,
            "target_met": d.converged,
            "more_executions": d.more_executions,
        }

    def as_dict(self) -> dict:
        return {"key": self.key, "executions": [r.as_dict() for r in self.executions],
                "summary": self.summary_dict()}


def report_target(*, ac_limit: float, min_samples: int, ci_percent: float | None, ci_width: float | None,
                  confidence: float) -> StopTarget:
    """The stopping rule's target for a report: Pilot's estimate, no cap on executions."""
    return StopTarget(ci_percent=ci_percent, ci_width=ci_width, confidence=confidence,
                      min_executions=REPORT_MIN_EXECUTIONS, max_executions=UNCAPPED_EXECUTIONS, estimate="pilot",
                      ac_limit=ac_limit, min_samples=min_samples)


def target_dict(target: StopTarget) -> dict:
    return {"ac_limit": target.ac_limit, "ci_percent": target.ci_percent, "ci_width": target.ci_width,
            "confidence": target.confidence, "min_samples": target.min_samples,
            "min_executions": target.min_executions}


def analyse_key(key: str, executions: list[list[float]], states: list[str],
                target: StopTarget) -> tuple[KeyReport, list[str]]:
    """One key's rows and decision, and its warning lines."""
    rows: list[ExecutionRow] = []
    warnings: list[str] = []
    for i, (times, state) in enumerate(zip(executions, states)):
        if not times:
            rows.append(ExecutionRow(i, state, 0, None))
            continue
        estimate = stopping.execution_estimate(times, target)
        rows.append(ExecutionRow(i, state, len(times), estimate))
        where = f"{key} process execution {execution_states.execution_number(i)}"
        if len(times) < stopping.PILOT_MIN_SEGMENT:
            warnings.append(f"{where}: {len(times)} iterations, fewer than {stopping.PILOT_MIN_SEGMENT}: "
                            "no warm-up removal (EDM cannot run); all are analysed")
        elif estimate.segment is not None and (shift := level_shift(times, estimate.segment)) is not None:
            b, e = estimate.segment
            rows[-1] = ExecutionRow(i, state, len(times), estimate, shift.phrase())
            warnings.append(f"{where}: Pilot's stable segment [{b}, {e}) {shift.phrase()}")
        elif estimate.segment is not None and estimate.ci_width == 0.0:
            b, e = estimate.segment
            warnings.append(f"{where}: all {e - b} stable iterations take the same time (a coarse clock?); "
                            "CI width 0")
    merged = sum(1 for r in rows if r.estimate is not None and (r.estimate.q or 1) > 1)
    if merged:
        warnings.append(f"{key}: {merged} of {len(rows)} process executions have autocorrelated stable iterations "
                        "(q > 1): their own CIs cover about 92-93% for a nominal 95% (Pilot's q rule; "
                        "bench/bench_coverage.py; --ac-limit 0.05 comes closer); the key's CI, over the executions' "
                        "means, is not affected")
    present = [r for r in rows if r.estimate is not None]
    decision = stopping.decide_key([r.estimate for r in present],  # type: ignore[misc]
                                   [r.iterations for r in present], target)
    return KeyReport(key, rows, decision), warnings


def _analyse_key_task(task: tuple) -> tuple[KeyReport, list[str]]:
    return analyse_key(*task)


def analyse_results(results: dict, target: StopTarget, *, jobs: int = 1,
                    warn: WarningSink = stderr_warning) -> list[KeyReport]:
    """Every key of one machine's Krun-shaped results (``analysis.inputs``), sorted by key.

    ``jobs`` > 1 analyses keys in forked worker processes.
    """
    from analysis.workers import run_parallel

    wct = results.get("wallclock_times", {})
    states = results.get(execution_states.STATES_KEY) or execution_states.from_flags(results, "results", warn)
    tasks = [(key, wct[key], states[key], target) for key in sorted(wct)]
    done = run_parallel(_analyse_key_task, tasks, jobs, None)
    for _, warnings in done:
        for line in warnings:
            warn(line)
    return [report for report, _ in done]


def reports_dict(files: Iterable[tuple[str, str, list[KeyReport]]], target: StopTarget) -> dict[str, Any]:
    """The JSON of ``coldrun-analyze pilot RESULTS...``: the settings, then per file its keys."""
    return {"settings": target_dict(target),
            "results": [{"file": path, "machine": machine, "keys": [k.as_dict() for k in keys]}
                        for path, machine, keys in files]}
