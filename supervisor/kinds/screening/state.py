"""A screening experiment's plan in the state dir: written once at start, read by every boot and the export.

The plan (experiment.screening_plan) holds every job's treatment, levels,
batch and replicate, so no boot needs pyDOE3 or recomputes the order.  The
switch marker remembers the one job attempt whose reboot-factor levels a
boot switched: if they are still not in force after that reboot, the
execution fails instead of rebooting forever.
"""

from __future__ import annotations

import json
from pathlib import Path

from contracts.status_report import BatchProgress, ScreeningProgress
from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from supervisor.kinds.screening.plan import ScreeningPlan
from supervisor.state import layout
from supervisor.state.schedule import OUTSTANDING, RUNNING, Schedule


def write_plan(state_dir: Path, plan: ScreeningPlan) -> None:
    write_atomic(Path(state_dir) / layout.SCREENING, json.dumps(plan.as_json()).encode(), 0o600)


def load_plan(state_dir: Path) -> ScreeningPlan:
    path = Path(state_dir) / layout.SCREENING
    try:
        return ScreeningPlan.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ColdrunError(f"{path}: the screening plan is missing or unreadable ({e}); "
                           f"the state dir was altered") from None


def plan_for(state_dir: Path, schedule: Schedule) -> ScreeningPlan:
    """The plan, checked against the schedule it was written with: one run per job, the same keys
    (ColdrunError, exit status 4, when the state dir was altered)."""
    plan = load_plan(state_dir)
    keys = [r.key for r in plan.runs]
    if keys != [j.key for j in schedule.jobs]:
        at = next((i for i, (a, b) in enumerate(zip(keys, schedule.jobs)) if a != b.key), None)
        where = f"at job {at}" if at is not None else f"{len(keys)} jobs planned, {len(schedule.jobs)} scheduled"
        raise ColdrunError(f"{Path(state_dir) / layout.SCREENING}: the screening plan does not match the schedule "
                           f"({where}); the state dir was altered: restore it from a backup", 4)
    return plan


def switched_for(state_dir: Path) -> tuple[int, int] | None:
    """(job index, attempt) whose reboot levels were last switched, or None."""
    try:
        data = json.loads((Path(state_dir) / layout.SCREENING_SWITCH).read_text())
        return int(data["job"]), int(data["attempt"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def note_switch(state_dir: Path, job: int, attempt: int) -> None:
    write_atomic(Path(state_dir) / layout.SCREENING_SWITCH, json.dumps({"job": job, "attempt": attempt}).encode(),
                 0o600)


def forget_switch(state_dir: Path) -> None:
    """No switch noted: the next boot switches the job's levels itself when they are not in force."""
    (Path(state_dir) / layout.SCREENING_SWITCH).unlink(missing_ok=True)


def screening_progress(state_path: Path, schedule: Schedule) -> ScreeningProgress:
    """Each batch's treatments and runs ended so far, and the level switches the rest of the order needs."""
    plan = plan_for(state_path, schedule)
    ended = [job.state not in (OUTSTANDING, RUNNING) for job in schedule.jobs]
    batches: dict[int, dict[int, list[bool]]] = {}       # batch -> treatment -> its runs' ended flags
    levels: dict[int, dict[str, str]] = {}               # batch -> its levels of the reboot factors
    for run, done in zip(plan.runs, ended):
        batches.setdefault(run.batch, {}).setdefault(run.treatment, []).append(done)
        levels.setdefault(run.batch, {f: run.levels[f] for f in plan.reboot_factors})
    # The levels in force: a running job's, or those switched (before a reboot) for the job not claimed yet,
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
