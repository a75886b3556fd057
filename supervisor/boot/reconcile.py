"""Reconciliation at start-up: settle what the previous boot left behind (DESIGN.md "Crash safety").

- an append to the schedule that a cut left unfinished is discarded (it was
  never committed, so nothing acted on it; the next decision appends again);
- half-written record temp files are removed (they never count);
- a runner left running by a killed supervisor (simulated reboots) is killed,
  if its pid still has the start time runner.json recorded, and its cgroup emptied;
- a job marked running whose record exists takes the record's outcome
  (the cut fell between record and flag);
- a job marked running with no record crashed during its run: re-queued, or
  marked crashed, per the re-run policy (and always marked crashed once its
  attempts are used up).  Attempt counts stay in the schedule.
"""

from __future__ import annotations

from typing import Any

from supervisor.experiment.model import Experiment
from supervisor.launch.process import kill_orphan
from supervisor.state.records import read_record, record_path, remove_temp_files
from supervisor.state.schedule import CRASHED, OUTSTANDING, RUNNING, Schedule
from supervisor.state.statedir import StateDir
from supervisor.boot.crash_points import pause_point



def reconcile(state: StateDir, schedule: Schedule, exp: Experiment, log: Any) -> list[str]:
    """Apply the rules above; returns one line per change (also logged)."""
    changes: list[str] = []

    def note(line: str) -> None:   # logged at once: a cut may follow any change
        changes.append(line)
        log.warning("reconcile: " + line)

    if schedule.append_in_flight:
        dropped = schedule.discard_unfinished_append()
        note(f"discarded an unfinished append to the schedule ({dropped} bytes after the {len(schedule.jobs)} "
             f"committed jobs)")
    for name in remove_temp_files(state.path):
        note(f"removed half-written record {name}")
    orphan = state.runner_in_flight()
    if orphan:
        what = kill_orphan(int(orphan["pid"]), orphan.get("create_time"), orphan.get("cgroup"))
        note(f"{what} (runner left by the previous boot)")
        state.clear_runner()
    for job in schedule.jobs:
        if job.state != RUNNING:
            continue
        rec = record_path(state.path, job.index, job.attempts)
        if rec.exists():
            outcome = read_record(rec).outcome     # a record whose outcome is not C/E/T/O is refused there
            schedule.set_job(job, outcome)
            note(f"job {job.index} ({job.key} #{job.pexec}) had its record: now {job.state_name}")
        elif exp.rerun.crashed == "requeue" and job.attempts < exp.rerun.max_attempts:
            schedule.set_job(job, OUTSTANDING)
            note(f"job {job.index} ({job.key} #{job.pexec}) crashed during attempt {job.attempts}: "
                           f"re-queued")
        else:
            schedule.set_job(job, CRASHED)
            note(f"job {job.index} ({job.key} #{job.pexec}) crashed during attempt {job.attempts}: "
                           f"marked crashed")
        pause_point("in-reconcile", schedule.boots)
    return changes
