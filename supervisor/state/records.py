"""Execution records: one JSON file per finished process execution attempt.

Named ``executions/job<index>-attempt<n>.json``; written temp + fsync +
rename + fsync(dir) before the schedule's flag changes, so a record on disk
is the truth about its attempt.  The final record of a job is the one whose
attempt equals the job's attempt count in the schedule; earlier attempts
(re-runs) are kept beside it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from supervisor.errors import ColdrunError
from supervisor.durable import is_temp_name, write_atomic

RECORD_VERSION = 1
_NAME = re.compile(r"job(\d{6})-attempt(\d{3})\.json")

# Record "outcome" values: the schedule state the job takes once the record is written.
OUTCOME_COMPLETED, OUTCOME_ERRORED, OUTCOME_TIMED_OUT, OUTCOME_RERUN = "C", "E", "T", "O"


def record_name(index: int, attempt: int) -> str:
    return f"job{index:06d}-attempt{attempt:03d}.json"


def executions_dir(state_dir: Path) -> Path:
    return state_dir / "executions"


def write_record(state_dir: Path, record: dict[str, Any]) -> Path:
    path = executions_dir(state_dir) / record_name(record["job_index"], record["attempt"])
    write_atomic(path, json.dumps(record, sort_keys=True).encode())
    return path


def record_path(state_dir: Path, index: int, attempt: int) -> Path:
    return executions_dir(state_dir) / record_name(index, attempt)


def read_record(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as e:
        raise ColdrunError(f"{path}: execution record unreadable ({e}); the file was written atomically, "
                           f"so it was changed after coldrun wrote it")


def list_records(state_dir: Path) -> dict[tuple[int, int], Path]:
    """(job index, attempt) -> path, ignoring temp files."""
    out = {}
    d = executions_dir(state_dir)
    if d.is_dir():
        for entry in os.scandir(d):
            m = _NAME.fullmatch(entry.name)
            if m:
                out[(int(m.group(1)), int(m.group(2)))] = Path(entry.path)
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
