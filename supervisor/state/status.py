"""`coldrun status`: progress read from the schedule and records, and what was altered, as one StatusReport
(contracts/status_report.py) that both the text form and --json render; takes no lock, writes nothing."""

from __future__ import annotations

import os
import socket
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contracts.status_report import (BatchProgress, JobCounts, KeyProgress, LastError, PairProgress, RunLength,
                                     ScreeningProgress, StatusReport)
from supervisor.errors import ColdrunError
from supervisor.experiment.duet import pair_sides
from supervisor.experiment.model import Experiment
from supervisor.state import layout
from supervisor.state.outcome import FAILED_STATES, standing_code
from supervisor.state.records import list_attempts
from supervisor.state.run_length import expected_jobs, finished_jobs, jobs_by_key, load_decisions, target_text
from supervisor.state.schedule import OUTSTANDING, RUNNING, Schedule
from supervisor.state.screening import plan_for, switched_for
from supervisor.state.statedir import StateDir
from supervisor.state.verify import load_record, verify_records

# status's code when records were altered: the state dir is damaged, as for a corrupt schedule.
EXIT_ALTERED = 4


def per_job_overhead(exp: Experiment) -> float:
    """Seconds each process execution waits besides running (boot settle + sync)."""
    return exp.waits.boot_settle + exp.waits.sync


def estimate_remaining(schedule: Schedule, per_iteration: dict[str, list[float]], overhead: float,
                       expected: dict[str, tuple[int, int]] | None = None) -> float | None:
    """Krun's ETA per iteration: each outstanding job's iterations x its key's mean seconds per iteration (so
    executions of other lengths count right), plus the executions [stop]'s decisions still expect beyond the
    schedule (``expected``: key -> (count, iterations)), each with its waits (``overhead``); a boot that only
    switches [screening] levels reboots before any wait, so it adds nothing here.  None until every such key
    has a sample."""
    work = [(job.key, job.iterations) for job in schedule.jobs if job.state in (OUTSTANDING, RUNNING)]
    for key, (count, iterations) in (expected or {}).items():
        work += [(key, iterations)] * count
    total = 0.0
    for key, iterations in work:
        samples = per_iteration.get(key)
        if not samples:
            return None
        total += sum(samples) / len(samples) * iterations + overhead
    return total


def status_report(state_dir: str) -> StatusReport:
    """How the experiment in ``state_dir`` stands (raises ColdrunError when it is not a readable state dir)."""
    import psutil
    state = StateDir(state_dir)
    schedule = state.schedule()
    exp, _ = state.experiment(schedule, check_source=False)
    altered = verify_records(state, schedule)
    c = schedule.counts()
    per_iteration, last_error, kept_sides = _read_records(state.path, schedule)
    decisions = load_decisions(state.path) if exp.stop is not None else {}
    running = schedule.status == "running"
    expected = expected_jobs(schedule, decisions) if running else {}
    holder = state.lock_holder()
    screening = _screening(state.path, schedule) if exp.screening is not None else None
    return StatusReport(
        experiment=exp.name, state_dir=os.path.abspath(state_dir), machine=socket.gethostname(),
        status=schedule.status, mode=schedule.mode, counts=JobCounts(**c),
        done=sum(c[k] for k in ("completed", *FAILED_STATES)), total=len(schedule.jobs) - c["skipped"],
        more_expected=sum(n for n, _ in expected.values()), boots=schedule.boots,
        eta_seconds=(estimate_remaining(schedule, per_iteration, per_job_overhead(exp), expected)
                     if running else None),
        supervisor_pid=holder if running and holder and psutil.pid_exists(holder) else None,
        last_error=last_error,
        stop_reason=state.stop_reason() if schedule.status == "stopped" else None,
        altered=altered,
        run_length=None if exp.stop is None else _run_length(state.path, schedule, decisions, exp.stop),
        pairs=None if exp.duet is None else _pairs(schedule, kept_sides), screening=screening)


def report_exit_code(report: StatusReport) -> int:
    """status's exit code: the experiment's standing (state/outcome.py), or 4 when records were altered."""
    if report.altered:
        return EXIT_ALTERED
    missed = [k for k in report.run_length.keys if k.done and not k.converged] if report.run_length else []
    return standing_code(report.status, sum(getattr(report.counts, k) for k in FAILED_STATES), len(missed))


def _read_records(state_path: Path, schedule: Schedule) -> tuple[dict[str, list[float]], LastError | None,
                                                                  Counter[str]]:
    """Seconds per iteration of every job key's records (a pair job's: both sides'), the newest errored or
    timed-out one, and per pair job key the sides kept from failed pair executions (final attempts)."""
    per_iteration: dict[str, list[float]] = defaultdict(list)
    last_error = None
    kept: Counter[str] = Counter()
    files = [(attempt, path) for (idx, attempt), sides in list_attempts(state_path).items() for path in sides.values()]
    for attempt, path in sorted(files, key=lambda ap: os.lstat(ap[1]).st_mtime):
        rec, problem = load_record(path)
        if rec is None:
            continue   # listed in `altered`
        job_key = rec.pair.pair_id.rpartition("#")[0] if rec.pair else rec.key
        if rec.duration_seconds is not None:
            per_iteration[job_key].append(rec.duration_seconds / rec.iterations)
        if rec.outcome in ("E", "T"):
            last_error = LastError(key=rec.key, pexec=rec.pexec, attempt=attempt, state=rec.state, reason=rec.reason)
        if (rec.pair and rec.pair.partner_failed and rec.pair.own_outcome == "C" and rec.job_index < len(schedule.jobs)
                and schedule.jobs[rec.job_index].attempts == attempt):
            kept[job_key] += 1
    return per_iteration, last_error, kept


def _pairs(schedule: Schedule, kept_sides: Counter[str]) -> list[PairProgress]:
    """Each pair's pair executions by state, in the order the schedule first names them."""
    by_pair: dict[str, Counter[str]] = {}
    for job in schedule.jobs:
        by_pair.setdefault(job.key, Counter())[job.state_name] += 1
    out = []
    for key, n in by_pair.items():
        sides = pair_sides(key)
        if sides is None:
            continue
        out.append(PairProgress(pair=key, a=sides[0], b=sides[1], completed=n["completed"],
                                failed=sum(n[s] for s in FAILED_STATES), remaining=n["outstanding"] + n["running"],
                                kept_sides=kept_sides[key]))
    return out


def _screening(state_path: Path, schedule: Schedule) -> ScreeningProgress:
    """Each batch's treatments and runs ended so far, and the level switches the rest of the order needs."""
    plan = plan_for(state_path, schedule)
    ended = [job.state not in (OUTSTANDING, RUNNING) for job in schedule.jobs]
    batches: dict[int, dict[int, list[bool]]] = {}       # batch -> treatment -> its runs' ended flags
    levels: dict[int, dict[str, str]] = {}               # batch -> its levels of the reboot factors
    for run, done in zip(plan.runs, ended):
        batches.setdefault(run.batch, {}).setdefault(run.treatment, []).append(done)
        levels.setdefault(run.batch, {f: run.levels[f] for f in plan.reboot_factors})
    # The levels in force: a running job's, or those a switch boot set for the job it has not claimed yet,
    # else the last ended job's.
    switched = switched_for(state_path)
    in_force = [job.index for job in schedule.jobs if job.state == RUNNING
                or (job.state == OUTSTANDING and (job.index, job.attempts) == switched)]
    last = in_force[0] if in_force else max((i for i, done in enumerate(ended) if done), default=None)
    remaining = [i for i, done in enumerate(ended) if not done and i != last]
    return ScreeningProgress(
        design=plan.design, switches_left=plan.switches_ahead(remaining, last),
        batches=[BatchProgress(batch=b, boot_check=b == plan.boot_check_batch,
                               levels={} if b == plan.boot_check_batch else levels[b],   # the check varies them
                               treatments=len(ts), treatments_done=sum(all(flags) for flags in ts.values()),
                               runs=sum(len(flags) for flags in ts.values()),
                               runs_done=sum(sum(flags) for flags in ts.values()))
                 for b, ts in batches.items()])


def _run_length(state_path: Path, schedule: Schedule, decisions: dict[str, dict[str, Any]], stop: Any) -> RunLength:
    keys = []
    for key, jobs in jobs_by_key(schedule).items():
        d = decisions.get(key) or {}
        try:
            keys.append(KeyProgress(
                key=key, executions=finished_jobs(jobs), decided_on=d.get("executions"), measure=d.get("measure"),
                mean=d.get("mean"), ci_width=d.get("ci_width"), target_width=d.get("target_width"),
                more_expected=d.get("more_executions"), converged=bool(d.get("converged")),
                done=bool(d.get("done")), reason=d.get("reason")))
        except ValidationError as e:
            err = e.errors()[0]
            raise ColdrunError(f"{state_path / layout.RUN_LENGTH}: {key}: {err['loc'][0]}: {err['msg']}; coldrun "
                               f"did not write that, so the state dir was altered: restore it from a backup", 4)
    return RunLength(target=target_text(stop), wps=stop.wps is not None, min_executions=stop.min_executions,
                     max_executions=stop.max_executions, keys=keys)
