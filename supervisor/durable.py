"""Crash-safe file writes: what is on disk after a power cut is old or new, never half.

Every file coldrun must not lose (records, schedule, undo log, unit files,
the benchmark-user marker) is written as temp + fsync + rename + fsync(dir).
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a write_atomic temp file (left behind when a write was cut short)."""
    return name.startswith(".") and name.endswith(".tmp")


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` durably: temp + fsync + rename + fsync(dir)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)  # the umask must not decide a unit file's mode
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    fsync_dir(path.parent)
