"""`coldrun status`: progress read from the schedule and records, and what was altered; takes no lock, writes
nothing."""

from __future__ import annotations

import os
import time
from collections import defaultdict

from supervisor.experiment.model import Experiment
from supervisor.state.records import list_records
from supervisor.state.run_length import expected_jobs, jobs_by_key, key_line, load_decisions, target_text
from supervisor.state.schedule import OUTSTANDING, RUNNING, Schedule
from supervisor.state.statedir import StateDir
from supervisor.state.verify import load_record, verify_records
from supervisor.experiment.quantities import format_duration


def per_job_overhead(exp: Experiment) -> float:
    """Seconds each process execution waits besides running (boot settle + sync)."""
    return exp.waits.boot_settle + exp.waits.sync


def estimate_remaining(schedule: Schedule, per_iteration: dict[str, list[float]], overhead: float,
                       expected: dict[str, tuple[int, int]] | None = None) -> float | None:
    """Krun's ETA per iteration: each outstanding job's iterations x its key's mean seconds per iteration (so
    executions of other lengths count right), plus the executions [stop]'s decisions still expect beyond the
    schedule (``expected``: key -> (count, iterations)); None until every such key has a sample."""
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


def status_text(state_dir: str) -> str:
    return status_report(state_dir)[0]


def status_report(state_dir: str) -> tuple[str, list[str]]:
    """(the text `coldrun status` prints, one line per way the state dir was altered)."""
    import psutil
    state = StateDir(state_dir)
    schedule = state.schedule()
    exp, _ = state.experiment(schedule, check_source=False)
    altered = verify_records(state, schedule)
    c = schedule.counts()
    done = c["completed"] + c["errored"] + c["timed_out"] + c["crashed"]
    total = len(schedule.jobs) - c["skipped"]
    lines = [f"experiment {exp.name}: {schedule.status} ({schedule.mode}), boot {schedule.boots}",
             f"progress: {done}/{total} done ({100.0 * done / total if total else 100:.0f}%)",
             f"  completed {c['completed']}, errored {c['errored']}, timed out {c['timed_out']}, "
             f"crashed {c['crashed']}, outstanding {c['outstanding']}, running {c['running']}, "
             f"skipped {c['skipped']}"]
    per_iteration: dict[str, list[float]] = defaultdict(list)
    last_error = None
    for (idx, attempt), path in sorted(list_records(state.path).items(), key=lambda kv: os.lstat(kv[1]).st_mtime):
        rec, problem = load_record(path)
        if rec is None:
            continue   # listed in `altered`
        if rec.duration_seconds is not None:
            per_iteration[rec.key].append(rec.duration_seconds / rec.iterations)
        if rec.outcome in ("E", "T"):
            last_error = f"{rec.key} #{rec.pexec} attempt {attempt}: {rec.reason}"
    decisions = load_decisions(state.path) if exp.stop is not None else {}
    if exp.stop is not None:
        lines.append(f"run length: {target_text(exp.stop)}")
        lines.extend(key_line(key, jobs, decisions.get(key), exp.stop) for key, jobs in jobs_by_key(schedule).items())
    if schedule.status == "running":
        expected = expected_jobs(schedule, decisions)
        more = sum(n for n, _ in expected.values())
        known = f" for the {c['outstanding'] + c['running']} jobs now known" + (
            f" and the {more} more executions the run-length targets expect" if more else "")
        eta = estimate_remaining(schedule, per_iteration, per_job_overhead(exp), expected)
        if eta is None:
            lines.append("ETA: unknown until every outstanding key has run once")
        else:
            finish = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + eta))
            lines.append(f"ETA: {format_duration(eta)} left{known} (about {finish}), reboots not included")
    holder = state.lock_holder()
    if holder and psutil.pid_exists(holder) and schedule.status == "running":
        lines.append(f"supervisor: pid {holder} (lock file; may be stale after a reboot)")
    if last_error:
        lines.append(f"last error: {last_error}")
    if schedule.status == "stopped":
        lines.append(f"stop reason: {state.stop_reason()}")
    if altered:
        lines.append(f"ALTERED: {len(altered)} problem(s) with the records; resume stops and export refuses "
                     f"until they are fixed (restore the files from a backup):")
        lines.extend(f"  {line}" for line in altered)
    return "\n".join(lines), altered
