"""Exports, assembled on demand from the schedule and the execution records (contract B).

- native: {"format": "coldrun-native", "format_version": 1, "experiment", "audit", "seed", "order",
  "status", "boots", "error_flag", "jobs", "executions", "rerun_attempts"}; bz2-compressed when the
  output name ends in .bz2.  A job holds its index, key, pexec, state, attempts, iterations and param.
- krun: Krun's results file shape (bz2 JSON) readable by warmup_stats.

Every scheduled execution keeps its slot, so a failed one never shifts the
others of its key:

- native: ``executions`` has one entry per job of the schedule, in schedule
  order: the job's final record (the one whose attempt equals the job's
  attempt count) with the schedule's ``state``, or, for a job without a
  record (crashed, outstanding, running), a slot with empty measurement
  lists (contracts.execution_record.ExecutionSlot).  ``state`` other than
  "completed" marks a slot without measurements.  Earlier attempts (re-runs)
  go to "rerun_attempts".
- krun: per key, one entry per process execution in pexec order, in every
  per-key list; ``pexec_flags`` is "C" (completed), "E" (errored or crashed),
  "T" (timed out) or "O" (not run yet: outstanding or running); any flag but
  "C" has empty measurement lists.  Re-runs are left out.

A [duet] experiment's pair job gives two slots, sides a then b: native ones
under each side's key with ``pair_id`` ("a/b#pexec") and ``side`` (a record's
``pair`` says the rest); Krun ones under each side's key, so an A/A pair's
key gets two executions per pair execution.  A failed pair's slots carry its
state; its native slots keep a side's data that completed on its own.

Skipped jobs (the experiment's ``skip`` patterns, whole keys) are left out of
both, as Krun's results never held them; the native ``jobs`` list has them.

``error_flag`` (both formats) is set, as Krun's, by an errored execution or a
``kernel_log`` post-check flag, and also by a crashed one; not by a timeout.
"""

from __future__ import annotations

import bz2
import json
import os
from pathlib import Path
from typing import Any, Iterator

from contracts.execution_record import MEASUREMENT_KEYS, ExecutionRecord, ExecutionSlot
from supervisor.boot.kinds import kind_for
from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from supervisor.experiment.duet import record_sides, side_key
from supervisor.experiment.model import experiment_sha256, parse_experiment
from supervisor.state import layout
from supervisor.state.records import list_attempts, read_record
from supervisor.state.schedule import (COMPLETED, CRASHED, ERRORED, OUTSTANDING, RUNNING, SKIPPED,
                                       TIMED_OUT, WITH_RECORD, JobLine, Schedule)
from supervisor.state.statedir import StateDir
from supervisor.state.verify import altered_line, verify_records

# The Krun flag of each schedule state (Krun knew C, E and T; "O" is a slot not run yet).
KRUN_FLAGS = {COMPLETED: "C", ERRORED: "E", CRASHED: "E", TIMED_OUT: "T", OUTSTANDING: "O", RUNNING: "O"}


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


def _failed(job: JobLine, rec: ExecutionRecord | None) -> bool:
    """What sets error_flag: an errored or crashed execution, or a kernel_log flag."""
    return job.state in (ERRORED, CRASHED) or (rec is not None and "kernel_log" in rec.flags)


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
    """One execution's slot; a pair's side also says its pair execution (pair_id) and side; one with no record
    what its kind planned for it (``planned``: a screening execution's levels)."""
    key = side_key(job.key, side)
    pair = {"pair_id": f"{job.key}#{job.pexec}", "side": side} if side else {}
    if rec is not None:
        return dict(rec.as_json(), key=key, pexec=job.pexec, state=job.state_name, **pair)
    bench, vm, variant = key.split(":")
    slot = ExecutionSlot(key=key, pexec=job.pexec, state=job.state_name, job_index=job.index, bench=bench,
                         vm=vm, variant=variant, attempt=job.attempts, **pair).model_dump(
        mode="json", exclude_none=bool(side), exclude={"screening"})
    return {**slot, **planned}


def native_bundle(state: StateDir) -> dict[str, Any]:
    schedule = state.schedule()
    text, sha = _experiment(state, schedule)
    exp = parse_experiment(text.encode(), str(state.experiment_path))
    kind_parts, planned = kind_for(exp).export_parts(state.path, schedule)
    jobs = [{"index": j.index, "key": j.key, "pexec": j.pexec, "state": j.state_name, "attempts": j.attempts,
             "iterations": j.iterations, "param": j.param} for j in schedule.jobs]
    slots = [(job, side, rec) for job, side, rec in job_records(state, schedule) if job.state != SKIPPED]
    finals = {(j.index, j.attempts) for j in schedule.jobs}
    reruns = [read_record(p).as_json() for (idx, att), sides in sorted(list_attempts(state.path).items())
              for _, p in sorted(sides.items())
              if (idx, att) not in finals or schedule.jobs[idx].state not in WITH_RECORD]
    bundle = {"format": "coldrun-native", "format_version": 1,
              "experiment": {"name": exp.name, "sha256": sha, "text": text},
              "audit": _audit(state), "seed": schedule.seed, "order": schedule.order,
              "status": schedule.status, "boots": schedule.boots,
              "error_flag": any(_failed(job, rec) for job, _, rec in slots),
              "jobs": jobs, "executions": [_native_slot(job, side, rec, planned.get(job.index, {})) for job, side, rec in slots],
              "rerun_attempts": reruns, **kind_parts}
    return bundle


def krun_results(state: StateDir) -> dict[str, Any]:
    schedule = state.schedule()
    text, _ = _experiment(state, schedule)
    out: dict[str, Any] = {k: {} for k in MEASUREMENT_KEYS}
    out.update({"pexec_flags": {}, "eta_estimates": {}})
    error_flag = False
    for job, side, rec in job_records(state, schedule):   # schedule order is pexec order within a key
        if job.state == SKIPPED:
            continue
        key = side_key(job.key, side)     # a pair's sides go under their own keys
        flag = KRUN_FLAGS[job.state]
        for k in MEASUREMENT_KEYS:
            # Krun stores failed and timed-out executions with empty measurements.
            out[k].setdefault(key, []).append(getattr(rec, k) if flag == "C" else [])
        out["pexec_flags"].setdefault(key, []).append(flag)
        # Krun's eta_estimates are durations; 0.0 where none was measured (crashed, not run yet).
        duration = rec.duration_seconds if rec is not None else None
        out["eta_estimates"].setdefault(key, []).append(duration or 0.0)
        error_flag = error_flag or _failed(job, rec)
    out["audit"] = _audit(state)
    out["config"] = text
    out["error_flag"] = error_flag
    return out


def write_export(state_dir: str, fmt: str, output: str) -> tuple[int, Path]:
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
        raise ColdrunError(f"{output}: cannot write the export ({e.strerror})")
    n = len(data["executions"]) if fmt == "native" else sum(len(v) for v in data["pexec_flags"].values())
    return n, out
