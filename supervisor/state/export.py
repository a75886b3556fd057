"""Exports, assembled on demand from the schedule and the execution records (contract B).

- native: {"format": "coldrun-native", "format_version": 1, "experiment", "audit", "jobs", "executions",
  "rerun_attempts"}; bz2-compressed when the output name ends in .bz2.
- krun: Krun's results file shape (bz2 JSON) readable by warmup_stats.

Exactly one final record per finished job: the one whose attempt equals the
job's attempt count in the schedule.  Earlier attempts (re-runs) go to
"rerun_attempts" in the native bundle and are left out of the Krun file.
"""

from __future__ import annotations

import bz2
import json
import os
from pathlib import Path
from typing import Any, Iterator

from supervisor.errors import ColdrunError
from supervisor.experiment.model import experiment_sha256
from supervisor.durable import write_atomic
from supervisor.state.records import list_records, read_record
from supervisor.state.schedule import STATE_NAMES, WITH_RECORD, Schedule
from supervisor.state.statedir import StateDir
from supervisor.state.verify import altered_line, verify_records

MEASUREMENT_KEYS = ("wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts")


def final_records(state: StateDir, schedule: Schedule) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(job line, record) for every job whose state has a record, in schedule order."""
    available = list_records(state.path)
    for job in schedule.jobs:
        if job.state not in WITH_RECORD:
            continue
        path = available.get((job.index, job.attempts))
        if path is None:
            raise ColdrunError(f"{state.path}: job {job.index} ({job.key}) is {job.state_name} but its record "
                               f"for attempt {job.attempts} is missing; the state dir was altered")
        rec = read_record(path)
        if rec.get("key") != job.key or rec.get("pexec") != job.pexec:
            raise ColdrunError(f"{path}: record is for {rec.get('key')} #{rec.get('pexec')}, schedule says "
                               f"{job.key} #{job.pexec}; the state dir was altered")
        yield job, rec


def _audit(state: StateDir) -> dict[str, Any]:
    try:
        audit = json.loads((state.path / "audit.json").read_text())
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


def native_bundle(state: StateDir) -> dict[str, Any]:
    schedule = state.schedule()
    text, sha = _experiment(state, schedule)
    from supervisor.experiment.model import parse_experiment
    name = parse_experiment(text.encode(), str(state.experiment_path)).name
    jobs = [{"index": j.index, "key": j.key, "pexec": j.pexec, "state": STATE_NAMES[j.state]
             if j.state != "R" else "running", "attempts": j.attempts} for j in schedule.jobs]
    executions = []
    for job, rec in final_records(state, schedule):
        executions.append(dict(rec, key=job.key, pexec=job.pexec, state=STATE_NAMES[job.state]))
    finals = {(j.index, j.attempts) for j in schedule.jobs}
    reruns = [read_record(p) for (idx, att), p in sorted(list_records(state.path).items())
              if (idx, att) not in finals or schedule.jobs[idx].state not in WITH_RECORD]
    return {"format": "coldrun-native", "format_version": 1,
            "experiment": {"name": name, "sha256": sha, "text": text},
            "audit": _audit(state), "seed": schedule.seed, "order": schedule.order,
            "status": schedule.status, "boots": schedule.boots,
            "jobs": jobs, "executions": executions, "rerun_attempts": reruns}


def krun_results(state: StateDir) -> dict[str, Any]:
    schedule = state.schedule()
    text, _ = _experiment(state, schedule)
    out: dict[str, Any] = {k: {} for k in MEASUREMENT_KEYS}
    out.update({"pexec_flags": {}, "eta_estimates": {}})
    error_flag = False
    for job, rec in final_records(state, schedule):
        flag = job.state   # C, E or T
        for k in MEASUREMENT_KEYS:
            # Krun stores failed and timed-out executions with empty measurements.
            out[k].setdefault(job.key, []).append(rec.get(k, []) if flag == "C" else [])
        out["pexec_flags"].setdefault(job.key, []).append(flag)
        out["eta_estimates"].setdefault(job.key, []).append(rec.get("duration_seconds", 0.0))
        if flag == "E" or "kernel_log" in rec.get("flags", []):
            error_flag = True
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
