"""Exports, assembled on demand from the schedule and the execution records (contract B).

- native: {"format": "coldrun-native", "format_version": 1, "experiment", "audit", "seed", "order",
  "status", "boots", "error_flag", "jobs", "executions", "rerun_attempts"}; bz2-compressed when the
  output name ends in .bz2.  A job holds its index, key, pexec, state, attempts, iterations and param.
- krun: Krun's results file shape (bz2 JSON) readable by warmup_stats, plus coldrun's
  ``execution_states`` and ``execution_flags`` (which warmup_stats does not read).

Which slots there are (every job's, a pair job's two sides, skipped ones too), and how each
becomes Krun's per-key lists, flags, states, eta_estimates and error_flag, is
contracts.state_view's, which the analysis reads both files back with; a slot's
native ``executions`` entry is contracts.execution_record.native_entry (its record,
or ExecutionSlot's fields).  This module only finds each slot's final record (the
one whose attempt equals the job's attempt count).  Earlier attempts (re-runs) go
to the native "rerun_attempts" and not to Krun's lists.
"""

from __future__ import annotations

import bz2
import json
import os
from pathlib import Path
from typing import Any, Iterator

from contracts import state_view
from contracts.execution_record import ExecutionRecord, native_entry
from supervisor.boot.kinds import kind_for
from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from contracts.keys import record_sides, side_key
from supervisor.experiment.model import experiment_sha256, parse_experiment
from supervisor.state import layout
from supervisor.state.outputs import refuse_state_dir_output
from supervisor.state.records import list_attempts, read_record
from supervisor.state.schedule import WITH_RECORD, JobLine, Schedule
from supervisor.state.statedir import StateDir
from supervisor.state.verify import altered_line, verify_records

def job_records(state: StateDir, schedule: Schedule) -> Iterator[tuple[JobLine, str, ExecutionRecord | None]]:
    """(job line, side, its final record or None) for every job, in schedule order; a pair job gives its
    sides a then b, a single execution side "".

    A job whose state has a record (completed, errored, timed out) must have it (a pair job: both)."""
    available = list_attempts(state.path)
    for job in schedule.jobs:
        for side in record_sides(job.key):
            if job.state not in WITH_RECORD:
                yield job, side, None
                continue
            path = available.get((job.index, job.attempts), {}).get(side)
            if path is None:
                raise ColdrunError(f"{state.path}: job {job.index} ({job.key}) is {job.state_name} but its record "
                                   f"for attempt {job.attempts} is missing; the state dir was altered")
            rec = read_record(path)
            if rec.key != side_key(job.key, side) or rec.pexec != job.pexec:
                raise ColdrunError(f"{path}: record is for {rec.key} #{rec.pexec}, schedule says "
                                   f"{job.key} #{job.pexec}; the state dir was altered")
            yield job, side, rec


def _slot(job: JobLine, side: str, rec: ExecutionRecord | None) -> state_view.Slot:
    return state_view.Slot(side_key(job.key, side), job.pexec, job.state_name, rec, job.index, job.attempts,
                           f"{job.key}#{job.pexec}" if side else None, side or None)


def _audit(state: StateDir) -> dict[str, Any]:
    try:
        audit = json.loads((state.path / layout.AUDIT).read_text())
    except (OSError, ValueError):
        audit = {}
    if not isinstance(audit, dict):
        raise ColdrunError(f"{state.path / 'audit.json'}: not the JSON object coldrun wrote; the state dir was "
                           f"altered")
    if "uname" not in audit:
        u = os.uname()
        audit["uname"] = " ".join([u.sysname, u.nodename, u.release, u.version, u.machine])
    return audit


def _experiment(state: StateDir, schedule: Schedule) -> tuple[str, str]:
    text = state.experiment_bytes()
    if experiment_sha256(text) != schedule.experiment_sha256:
        raise ColdrunError(f"{state.experiment_path}: does not match the schedule; the state dir was altered")
    return text.decode("utf-8", "replace"), schedule.experiment_sha256


def _native_slot(job: JobLine, side: str, rec: ExecutionRecord | None, planned: dict[str, Any]) -> dict[str, Any]:
    """One execution's native entry; one with no record also says what its kind planned for it (``planned``: a
    screening execution's levels)."""
    slot = native_entry(_slot(job, side, rec))
    return slot if rec is not None else {**slot, **planned}


def native_bundle(state: StateDir) -> dict[str, Any]:
    schedule = state.schedule()
    text, sha = _experiment(state, schedule)
    exp = parse_experiment(text.encode(), str(state.experiment_path))
    kind_parts, planned = kind_for(exp).export_parts(state.path, schedule)
    jobs = [{"index": j.index, "key": j.key, "pexec": j.pexec, "state": j.state_name, "attempts": j.attempts,
             "iterations": j.iterations, "param": j.param} for j in schedule.jobs]
    slots = list(job_records(state, schedule))
    finals = {(j.index, j.attempts) for j in schedule.jobs}
    reruns = [read_record(p).as_json() for (idx, att), sides in sorted(list_attempts(state.path).items())
              for _, p in sorted(sides.items())
              if (idx, att) not in finals or schedule.jobs[idx].state not in WITH_RECORD]
    bundle = {"format": "coldrun-native", "format_version": 1,
              "experiment": {"name": exp.name, "sha256": sha, "text": text},
              "audit": _audit(state), "seed": schedule.seed, "order": schedule.order,
              "status": schedule.status, "boots": schedule.boots,
              "error_flag": state_view.error_flag(_slot(*slot) for slot in slots),
              "jobs": jobs,
              "executions": [_native_slot(job, side, rec, planned.get(job.index, {})) for job, side, rec in slots],
              "rerun_attempts": reruns, **kind_parts}
    return bundle


def krun_results(state: StateDir) -> dict[str, Any]:
    schedule = state.schedule()
    text, _ = _experiment(state, schedule)
    out = state_view.krun_results(_slot(*slot) for slot in job_records(state, schedule))
    out["audit"] = _audit(state)
    out["config"] = text
    return out


def write_export(state_dir: str, fmt: str, output: str) -> tuple[int, Path]:
    refuse_state_dir_output(output, "write it outside the state dir, e.g. -o results.json.bz2")
    state = StateDir(state_dir)
    altered = verify_records(state, state.schedule())
    if altered:
        raise ColdrunError(altered_line(altered), 4)
    data = native_bundle(state) if fmt == "native" else krun_results(state)
    payload = json.dumps(data, indent=None if fmt == "native" else 1, sort_keys=True).encode()
    out = Path(output)
    if out.name.endswith(".bz2"):
        payload = bz2.compress(payload, 9)
    elif fmt == "krun":
        raise ColdrunError(f"{output}: Krun results files are bz2-compressed JSON; name it e.g. "
                           f"results.json.bz2")
    # A fresh O_EXCL temp name beside the output, renamed over it: a symlink planted
    # at the output or temp name is replaced, never followed.  0644: results are for sharing.
    try:
        write_atomic(out.absolute(), payload, 0o644)
    except OSError as e:
        raise ColdrunError(f"{output}: cannot write the export ({e.strerror})") from None
    states = ([e["state"] for e in data["executions"]] if fmt == "native"
              else [s for row in data[state_view.STATES_KEY].values() for s in row])
    return sum(s != state_view.SKIPPED for s in states), out     # process executions: skipped slots are none
