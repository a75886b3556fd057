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

from contracts.execution_record import OUTCOME_RERUN, ExecutionRecord
from supervisor.errors import ColdrunError
from supervisor.state.records import executions_dir, list_records, read_record, record_path
from supervisor.state.schedule import OUTSTANDING, RUNNING, SKIPPED, WITH_RECORD, Schedule
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
    records = list_records(state.path)
    jobs = schedule.jobs
    for (index, attempt), path in sorted(records.items()):
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
            path = records.get((job.index, attempt))
            last = attempt == job.attempts
            if path is None:
                if last and job.state in WITH_RECORD:
                    problems.append(f"{record_path(state.path, job.index, attempt)}: record missing, but job "
                                    f"{job.index} ({job.key} #{job.pexec}) is {job.state_name} after attempt "
                                    f"{attempt}; the state dir was altered")
                continue          # a crash leaves no record: crashed, re-queued or still running
            if last and job.state == RUNNING:
                continue          # reconciliation settles it
            rec, problem = load_record(path)
            if problem:
                problems.append(problem)
                continue
            assert rec is not None
            if rec.key != job.key or rec.pexec != job.pexec:
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
