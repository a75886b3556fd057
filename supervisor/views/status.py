"""`coldrun status`: progress read from the schedule and records, and what was altered, as one StatusReport
(contracts/status_report.py) that both the text form and --json render; takes no lock, writes nothing."""

from __future__ import annotations

import os
import socket
from collections import Counter, defaultdict
from pathlib import Path
from typing import Literal, cast

import psutil

from contracts.status_report import Failure, JobCounts, LastError, StatusReport
from supervisor.boot.kinds import kind_for
from contracts.keys import pair_sides
from supervisor.state.outcome import FAILED_STATES, standing_code
from supervisor.state.records import list_attempts
from supervisor.state.schedule import CRASHED, OUTSTANDING, RUNNING, Schedule
from supervisor.state.statedir import StateDir
from supervisor.state.verify import load_record, verify_records

# status's code when records were altered: the state dir is damaged, as for a corrupt schedule.
EXIT_ALTERED = 4


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
    state = StateDir(state_dir)
    schedule = state.schedule()
    exp, _ = state.experiment(schedule, check_source=False)
    altered = verify_records(state, schedule)
    c = schedule.counts()
    per_iteration, last_error, failures, kept_sides, files_changed = _read_records(state.path, schedule)
    kind = kind_for(exp)
    running = schedule.status == "running"
    expected = kind.expected_jobs(state.path, schedule) if running else {}
    holder = state.lock_holder()
    attended = running and state.lock_held()
    return StatusReport(
        experiment=exp.name, state_dir=os.path.abspath(state_dir), machine=socket.gethostname(),
        status=schedule.status, mode=schedule.mode, counts=JobCounts(**c),
        done=sum(c[k] for k in ("completed", *FAILED_STATES)), total=len(schedule.jobs) - c["skipped"],
        more_expected=sum(n for n, _ in expected.values()), boots=schedule.boots,
        eta_seconds=(estimate_remaining(schedule, per_iteration, exp.waits.per_execution, expected)
                     if running else None),
        supervisor_pid=holder if attended and holder and psutil.pid_exists(holder) else None,
        unattended=running and not attended,
        last_error=last_error, failures=failures,
        stop_reason=state.stop_reason() if schedule.status == "stopped" else None,
        altered=altered, files_changed=files_changed, **kind.status_parts(state.path, schedule, kept_sides))


def report_exit_code(report: StatusReport) -> int:
    """status's exit code: the experiment's standing (state/outcome.py), or 4 when records were altered."""
    if report.altered:
        return EXIT_ALTERED
    missed = [k for k in report.run_length.keys if k.done and not k.converged] if report.run_length else []
    return standing_code(report.status, sum(getattr(report.counts, k) for k in FAILED_STATES), len(missed))


def _read_records(state_path: Path, schedule: Schedule) -> tuple[dict[str, list[float]], LastError | None,
                                                                  list[Failure], Counter[str], list[str]]:
    """Seconds per iteration of every job key's records (a pair job's: both sides'), the newest errored or
    timed-out one, every failed attempt (crashed jobs from the schedule), per pair job key the sides kept
    from failed pair executions (final attempts), and the executions that ran with changed files."""
    per_iteration: dict[str, list[float]] = defaultdict(list)
    last_error = None
    failed: list[tuple[int, Failure]] = [
        (i, Failure(key=key, pexec=job.pexec, attempt=job.attempts, state="crashed",
                    reason="the boot that ran it never finished (a crash or power cut); no record"))
        for i, job in enumerate(schedule.jobs) if job.state == CRASHED
        for key in (pair_sides(job.key) or (job.key,))]
    kept: Counter[str] = Counter()
    files_changed: list[str] = []
    loaded = [(attempt, load_record(path)[0])
              for (idx, attempt), sides in list_attempts(state_path).items() for path in sides.values()]
    # In the order they ran: by boot (a continue keeps counting), never by a file time or started_at, which follow
    # the wall clock (set back or forward between boots).
    for attempt, rec in sorted(((a, r) for a, r in loaded if r is not None),   # None: listed in `altered`
                               key=lambda ar: (ar[1].boot, ar[1].job_index, ar[0], ar[1].key)):
        job_key = rec.pair.pair_id.rpartition("#")[0] if rec.pair else rec.key
        if rec.duration_seconds is not None:
            per_iteration[job_key].append(rec.duration_seconds / rec.iterations)
        if "files_changed" in rec.flags:
            files_changed.append(f"{rec.key} #{rec.pexec} attempt {attempt}")
        if rec.outcome in ("E", "T"):
            # outcome E or T: the record's state is errored or timed_out (STATE_OF_OUTCOME)
            failed_state = cast(Literal["errored", "timed_out"], rec.state)
            last_error = LastError(key=rec.key, pexec=rec.pexec, attempt=attempt, state=failed_state, reason=rec.reason)
            failed.append((rec.job_index, Failure(key=rec.key, pexec=rec.pexec, attempt=attempt, state=failed_state,
                                                  reason=rec.reason)))
        if (rec.pair and rec.pair.partner_failed and rec.pair.own_outcome == "C" and rec.job_index < len(schedule.jobs)
                and schedule.jobs[rec.job_index].attempts == attempt):
            kept[job_key] += 1
    failures = [f for _, f in sorted(failed, key=lambda jf: (jf[0], jf[1].attempt, jf[1].key))]
    return per_iteration, last_error, failures, kept, files_changed
