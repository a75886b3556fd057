"""Records checked against the schedule: what was altered since coldrun wrote it.

A record is written (atomically) before its job's flag changes, so for every
attempt the schedule counts, the record on disk says how it ended.  A flag or
a record that disagrees was changed by hand (or by a disk fault); coldrun
never repairs that: `status` shows it, `resume` stops the experiment, `export`
refuses.  Running jobs are left to reconciliation (their record may not be
written yet).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from contracts.execution_record import OUTCOME_RERUN, ExecutionRecord
from supervisor.errors import ColdrunError
from contracts.keys import side_key
from supervisor.state.records import attempt_paths, executions_dir, list_attempts, read_record
from supervisor.state.schedule import OUTSTANDING, RUNNING, SKIPPED, WITH_RECORD, JobLine, Schedule
from supervisor.state.statedir import StateDir


def load_record(path) -> tuple[ExecutionRecord | None, str | None]:
    """(record, None) or (None, problem line)."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return None, f"{path}: record is a symlink; coldrun writes plain files, so it was altered"
        rec = read_record(path)
    except ColdrunError as e:
        return None, str(e)
    except OSError as e:
        return None, f"{path}: record unreadable ({e.strerror})"
    return rec, None


def verify_records(state: StateDir, schedule: Schedule) -> list[str]:
    """One line per problem; empty when every record agrees with the schedule."""
    problems: list[str] = []
    d = executions_dir(state.path)
    if os.path.lexists(d) and (os.path.islink(d) or not d.is_dir()):
        return [f"{d}: is not the directory of execution records; the state dir was altered"]
    records = list_attempts(state.path)
    jobs = schedule.jobs
    for (index, attempt), sides in sorted(records.items()):
        for path in sides.values():
            if index >= len(jobs):
                problems.append(f"{path}: record for job {index}, but the schedule has {len(jobs)} jobs")
            elif attempt > jobs[index].attempts or attempt == 0:
                problems.append(f"{path}: record for attempt {attempt}, but the schedule counts "
                                f"{jobs[index].attempts} attempts of job {index}; the schedule was altered")
    for job in jobs:
        if job.state == SKIPPED and job.attempts:
            problems.append(f"{schedule.path}: job {job.index} ({job.key}) is skipped but has {job.attempts} "
                            f"attempts; the schedule was altered")
        for attempt in range(1, job.attempts + 1):
            problems += _attempt_problems(state, job, attempt, records.get((job.index, attempt), {}))
    return problems


def _attempt_problems(state: StateDir, job: JobLine, attempt: int, found: dict[str, Path]) -> list[str]:
    """One attempt's records (a pair job's: both sides) against the job's line."""
    problems: list[str] = []
    last = attempt == job.attempts
    expected = attempt_paths(state.path, job.index, attempt, job.key)
    stray = sorted(set(found) - set(expected))
    for side in stray:
        problems.append(f"{found[side]}: record of a {'pair side' if side else 'single execution'}, but job "
                        f"{job.index} is {job.key}; the state dir was altered")
    present = {side: found[side] for side in expected if side in found}
    if not present:
        if last and job.state in WITH_RECORD:
            problems.append(f"{next(iter(expected.values()))}: record missing, but job {job.index} ({job.key} "
                            f"#{job.pexec}) is {job.state_name} after attempt {attempt}; the state dir was altered")
        return problems          # a crash leaves no record: crashed, re-queued or still running
    if last and job.state == RUNNING:
        return problems          # reconciliation settles it
    for side, path in expected.items():
        if side not in present:
            problems.append(f"{path}: record missing, but the other side of this pair execution was recorded; "
                            f"the state dir was altered")
    for side, path in present.items():
        rec, problem = load_record(path)
        if problem:
            problems.append(problem)
            continue
        assert rec is not None
        if rec.key != side_key(job.key, side) or rec.pexec != job.pexec:
            problems.append(f"{path}: record is for {rec.key} #{rec.pexec}, the schedule says "
                            f"{job.key} #{job.pexec}; the state dir was altered")
            continue
        outcome = rec.outcome
        if not last:
            want = {OUTCOME_RERUN}                  # an earlier attempt that ended in a re-run
        elif job.state in WITH_RECORD:
            want = {job.state}
        elif job.state == OUTSTANDING:
            want = {OUTCOME_RERUN}                  # re-queued after a disturbed attempt
        else:                                       # crashed or skipped: no record for the last attempt
            want = set()
        if outcome not in want:
            problems.append(f"{path}: record says outcome {outcome!r} but the schedule has job {job.index} "
                            f"({job.key} #{job.pexec}) {job.state_name} after attempt {job.attempts}; the "
                            f"schedule or the record was altered")
    return problems


def altered_line(problems: list[str]) -> str:
    """The first problem and how many more: one line for errors and stop reasons."""
    more = f" (and {len(problems) - 1} more; coldrun status lists them)" if len(problems) > 1 else ""
    return problems[0] + more
