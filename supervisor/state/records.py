"""Execution records: one JSON file per finished process execution attempt.

Named ``executions/job<index>-attempt<n>.json`` (state.layout); written temp +
fsync + rename + fsync(dir) before the schedule's flag changes, so a record on
disk is the truth about its attempt.  A pair job's attempt is two records,
``-a`` and ``-b``: it counts only when both are on disk (reconciliation
removes a lone half, as it removes temp files).  The final record of a job is the one
whose attempt equals the job's attempt count in the schedule; earlier
attempts (re-runs) are kept beside it.  The record's shape is
contracts.execution_record.ExecutionRecord.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from contracts.execution_record import ExecutionRecord, problem
from supervisor.durable import is_temp_name, write_atomic
from supervisor.errors import ColdrunError
from contracts.keys import record_sides
from supervisor.state import layout


def executions_dir(state_dir: Path) -> Path:
    return state_dir / layout.EXECUTIONS


def record_path(state_dir: Path, index: int, attempt: int, side: str = "") -> Path:
    return executions_dir(state_dir) / layout.record_name(index, attempt, side)


def attempt_paths(state_dir: Path, index: int, attempt: int, job_key: str) -> dict[str, Path]:
    """side -> path of every record one attempt of the job is made of (a pair job: a and b)."""
    return {side: record_path(state_dir, index, attempt, side) for side in record_sides(job_key)}


def write_record(state_dir: Path, record: ExecutionRecord) -> Path:
    path = record_path(state_dir, record.job_index, record.attempt, record.pair.side if record.pair else "")
    write_atomic(path, json.dumps(record.as_json(), sort_keys=True).encode())
    return path


def read_record(path: Path) -> ExecutionRecord:
    """The record in ``path``; one line naming the file and the field when it is not a valid record."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ColdrunError(f"{path}: execution record unreadable ({e.strerror})") from None
    try:
        return ExecutionRecord.model_validate_json(data)
    except ValidationError as e:
        raise ColdrunError(f"{path}: not a valid execution record: {problem(e)}; the file was written "
                           f"atomically, so it was changed after coldrun wrote it") from None


def list_records(state_dir: Path) -> dict[tuple, Path]:
    """One entry per record file: (job index, attempt) for a single execution's, (job index, attempt, side)
    for a pair side's."""
    return {(index, attempt, side) if side else (index, attempt): path
            for (index, attempt), sides in list_attempts(state_dir).items() for side, path in sides.items()}


def list_attempts(state_dir: Path) -> dict[tuple[int, int], dict[str, Path]]:
    """(job index, attempt) -> {side: path} ("" for a single execution, a/b for a pair's), ignoring temp files."""
    out: dict[tuple[int, int], dict[str, Path]] = {}
    d = executions_dir(state_dir)
    if d.is_dir():
        for entry in os.scandir(d):
            m = layout.RECORD_NAME.fullmatch(entry.name)
            if m:
                out.setdefault((int(m.group(1)), int(m.group(2))), {})[m.group(3) or ""] = Path(entry.path)
    return out


def remove_temp_files(state_dir: Path) -> list[str]:
    """Half-written records from a cut between write and rename; they never count."""
    removed = []
    d = executions_dir(state_dir)
    if d.is_dir():
        for entry in os.scandir(d):
            if is_temp_name(entry.name):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed
