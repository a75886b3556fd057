"""Reconciliation at start-up: settle what the previous boot left behind (DESIGN.md "Crash safety").

- an append to the schedule that a cut left unfinished is discarded (it was
  never committed, so nothing acted on it; the next decision appends again);
- half-written record temp files are removed (they never count);
- a runner left running by a killed supervisor (simulated reboots) is killed,
  if its pid still has the start time runner.json recorded, and its cgroup emptied
  (a pair execution: both runners; and what the kind leaves, e.g. its duet
  barrier: ``remove_cut_leftovers``); then the benchmark user that run had (the state dir's marker names it) is deleted;
- a job marked running whose record exists takes the record's outcome
  (the cut fell between record and flag); a pair job needs both sides' records:
  a lone half is removed and the attempt counts as crashed;
- a job marked running with no record crashed during its run: re-queued, or
  marked crashed, per the re-run policy (and always marked crashed once its
  attempts are used up).  Attempt counts stay in the schedule.
"""

from __future__ import annotations

from supervisor.boot.context import Boot
from supervisor.launch.process import kill_orphan
from supervisor.state.records import attempt_paths, read_record, remove_temp_files
from supervisor.state.schedule import CRASHED, OUTSTANDING, RUNNING
from supervisor.boot.crash_points import pause_point



def reconcile(ctx: Boot) -> list[str]:
    """Apply the rules above; returns one line per change (also logged)."""
    state, schedule, exp, log, platform = ctx.state, ctx.schedule, ctx.exp, ctx.log, ctx.platform
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
    orphans = state.runners_in_flight()
    for orphan in orphans:       # a pair execution leaves two
        what = kill_orphan(int(orphan["pid"]), orphan.get("create_time"), orphan.get("cgroup"))
        note(f"{what} (runner left by the previous boot)")
    kind_leftovers = ctx.kind.remove_cut_leftovers(state)
    for line in kind_leftovers:
        note(line)
    if orphans or kind_leftovers:
        state.clear_runner()
    for line in platform.remove_leftover_launch():
        note(line)
    for job in schedule.jobs:
        if job.state != RUNNING:
            continue
        paths = attempt_paths(state.path, job.index, job.attempts, job.key)
        written = [p for p in paths.values() if p.exists()]
        if written and len(written) < len(paths):
            for half in written:     # a cut between a pair's two records: half a pair never counts as whole
                half.unlink()
                note(f"removed {half.name}: the other side of its pair execution was never recorded")
            written = []
        if written:
            outcome = read_record(written[0]).outcome   # a record whose outcome is not C/E/T/O is refused there
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
