"""Between executions: each [stop] key's records so far decide whether it gets another execution.

``settle_run_length`` runs once per boot, after reconciliation and before the
next job is chosen: after the last execution's record and flag, never while a
benchmark runs.  For every key with no outstanding job it

1. takes the key's decision from run_length.json when that was made from the
   key's finished executions, else analyses them (``run_length_analysis``: Pilot's
   stopping rule, or WPS) and writes the decision durably;
2. unless the key is done, appends its next job with the iteration count or
   param the decision chose (Schedule.append).

A decision is a function of the records and the previous decision, and is
written before it is acted on, so a cut anywhere is settled by the same steps
at the next boot: no job is appended twice and none is lost.

Keys grow one job at a time: they stay interleaved in the experiment's order,
each execution's iterations or param depends on the one before, and a key
stops as soon as its target is met.  The decision's ``more_executions`` (how
many more the analysis expects) feeds the ETA.  A key reaching
``max_executions`` stops, converged or not, whatever the analysis says.
"""

from __future__ import annotations

from typing import Any

from contracts.keys import Key
from supervisor.boot.context import Boot
from supervisor.boot.crash_points import pause_point
from supervisor.errors import ColdrunError
from supervisor.experiment.plan import JobSpec
from supervisor.state.records import read_record, record_path
from supervisor.kinds.stop.analysis import run_length_analysis
from supervisor.kinds.stop.state import load_decisions, save_decisions
from supervisor.kinds.stop.table import Stop
from supervisor.state.schedule import COMPLETED, OUTSTANDING, RUNNING, SKIPPED, JobLine

PER_ITERATION = "seconds per iteration"
WPS_RATE = "v (param units per second)"


def settle_run_length(ctx: Boot) -> str | None:
    """Decide and append for every [stop] key that needs it; a stop reason (one line) when analysis fails."""
    keys: dict[str, list[JobLine]] = {}
    for job in ctx.schedule.jobs:
        if job.state != SKIPPED:
            keys.setdefault(job.key, []).append(job)
    decisions = load_decisions(ctx.state.path)
    for key, jobs in keys.items():
        if any(j.state in (OUTSTANDING, RUNNING) for j in jobs):
            continue
        decision = decisions.get(key)
        if decision is None or decision["executions"] != len(jobs):
            try:
                decision = _decide(ctx, key, jobs, decision)
            except ColdrunError as e:
                return f"{key}: {e}"
            except (ValueError, ArithmeticError) as e:    # AnalysisError is a ValueError
                return f"{key}: the run-length analysis failed on {len(jobs)} executions ({e})"
            decisions[key] = decision
            save_decisions(ctx.state.path, decisions)
            _log_decision(ctx, key, decision)
            pause_point("after-decision", ctx.schedule.boots)
        following = decision["next"]
        if following is not None:
            spec = JobSpec(key, len(jobs), False, following["iterations"], following["param"])
            ctx.schedule.append([spec], checkpoint=lambda point: pause_point(point, ctx.schedule.boots))
            ctx.log.info("appended job", key=key, pexec=spec.pexec, iterations=spec.iterations, param=spec.param)
    return None


def _log_decision(ctx: Boot, key: str, d: dict[str, Any]) -> None:
    fields = {k: d[k] for k in ("executions", "usable", "mean", "ci_width", "target_width", "more_executions",
                                "reason")}
    if not d["done"]:
        ctx.log.info("run length: key needs more executions", key=key, **fields)
    elif d["converged"]:
        ctx.log.info("run length: key reached its target", key=key, **fields)
    else:
        ctx.log.warning("run length: key stopped at max_executions without reaching its target", key=key, **fields)


def _stop(ctx: Boot) -> Stop:
    """The experiment's [stop] table: decisions are made only for a [stop] experiment (StopKind.settle)."""
    assert ctx.exp.stop is not None
    return ctx.exp.stop


def _decide(ctx: Boot, key: str, jobs: list[JobLine], previous: dict[str, Any] | None) -> dict[str, Any]:
    decide = _decide_wps if _stop(ctx).wps is not None else _decide_pilot
    decision = decide(ctx, jobs, previous or {})
    stop = _stop(ctx)
    if not decision["done"] and len(jobs) >= stop.max_executions:    # the supervisor's bound, whatever the analysis
        decision.update(done=True, converged=False, more_executions=0, next=None,
                        reason=f"max_executions ({stop.max_executions}) reached: {decision['reason']}")
    if decision["done"]:
        decision["next"] = None
    decision["executions"] = len(jobs)
    return decision


def _seconds(ctx: Boot, job: JobLine) -> list[float]:
    """The wall-clock times of a job's final record; none unless it completed."""
    if job.state != COMPLETED:
        return []
    return list(read_record(record_path(ctx.state.path, job.index, job.attempts)).wallclock_times)


def _decide_pilot(ctx: Boot, jobs: list[JobLine], previous: dict[str, Any]) -> dict[str, Any]:
    """Pilot's stopping rule over the executions' steady-state means (analysis.pilot.stopping)."""
    stop, analysis = _stop(ctx), run_length_analysis(ctx.seams)
    target = analysis.target(stop)
    known = previous.get("estimates", {})
    estimates = {str(j.index): known.get(str(j.index)) or analysis.execution_estimate(_seconds(ctx, j), target)
                 for j in jobs}
    adapting = stop.adapt_iterations
    d = analysis.decide_key(list(estimates.values()), [j.iterations for j in jobs], target,
                            max_iterations=stop.max_iterations if adapting else None)
    last = jobs[-1]
    chosen = d.get("next_iterations") if adapting else None
    vm = ctx.exp.vms[Key.parse(last.key).vm]
    iterations = min(max(int(chosen or last.iterations), 1), ctx.kind.most_iterations(vm))
    return {"usable": d["usable"], "measure": PER_ITERATION, "mean": d["mean"], "ci_width": d["ci_width"],
            "target_width": d["target_width"], "more_executions": d["more_executions"], "done": bool(d["done"]),
            "converged": bool(d["converged"]), "reason": d["reason"],
            "next": {"iterations": iterations, "param": last.param}, "estimates": estimates, "wps_slices": None}


def _decide_wps(ctx: Boot, jobs: list[JobLine], previous: dict[str, Any]) -> dict[str, Any]:
    """WPS: fit t = alpha + param / v over the completed executions (mean seconds per iteration against param),
    stop when v's CI is narrow enough, else choose the next param with Pilot's slice schedule."""
    stop, analysis = _stop(ctx), run_length_analysis(ctx.seams)
    wps = stop.wps
    assert wps is not None     # _decide chose WPS because [stop.wps] is there
    points = []
    for job in jobs:
        times = _seconds(ctx, job)
        if times:
            points.append((job.param, sum(times) / len(times)))
    fit, why = None, f"{len(points)} completed executions; the fit needs 3"
    if len(points) >= 3:
        try:
            fit = analysis.wps_fit([p for p, _ in points], [s * 1e9 for _, s in points], ac_limit=stop.ac_limit,
                                   confidence=stop.confidence)
        except ValueError as e:     # Pilot's "not enough data" (too few subsessions) among them
            why = f"no fit yet: {e}"
    v = fit["v_per_s"] if fit else None
    width = fit["v_ci_width"] if fit else None
    target = stop.ci_percent * v if v is not None and v > 0 else None
    # Pilot wants 0 < width: exact data (width 0) would never stop it; here it is narrow enough.
    met = target is not None and width is not None and width <= target
    converged = met and len(jobs) >= stop.min_executions
    if fit:
        shown = "unknown" if width is None else f"{width:.6g}"
        why = (f"v = {v:.6g} param/s, CI width {shown} {'<=' if met else '>'} target "
               f"{'unknown' if target is None else f'{target:.6g}'}"
               + ("" if converged or not met else f"; min_executions ({stop.min_executions}) not reached"))
    slices = previous.get("wps_slices")
    if points:
        param, slices = analysis.next_wps_work_amount(points[-1][0], points[-1][1], wps.min_param, wps.max_param,
                                                      desired_session_s=wps.session, slices=slices)
    else:
        param = wps.min_param     # nothing completed yet: start the schedule again from the smallest
    param = min(max(param, wps.min_param), wps.max_param)
    return {"usable": len(points), "measure": WPS_RATE, "mean": v, "ci_width": width, "target_width": target,
            "more_executions": 0 if converged else max(stop.min_executions - len(jobs), 1), "done": converged,
            "converged": converged, "reason": why, "next": {"iterations": jobs[-1].iterations, "param": param},
            "estimates": {}, "wps_slices": slices}
