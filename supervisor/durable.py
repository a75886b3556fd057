"""Crash-safe file writes: what is on disk after a power cut is old or new, never half.

Every file coldrun must not lose (records, schedule, undo log, unit files,
the benchmark-user marker) is written as temp + fsync + rename + fsync(dir).
The temp file gets an unpredictable name and is created with O_EXCL |
O_NOFOLLOW and an explicit mode, so nothing planted beside the target (a
symlink, a file of the same name) is followed or truncated, and the umask
never decides who may read the result.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from supervisor.errors import ColdrunError

# Errors that mean "the filesystem is full", whoever's quota it is.
_FULL = {errno.ENOSPC, errno.EDQUOT}


class WriteFailed(ColdrunError, OSError):
    """A durable write failed; still an OSError, so callers that settle OSErrors keep doing so.

    The message names the file and the fix; the CLI prints it as one line.
    """

    def __init__(self, path: Path, err: OSError):
        if err.errno in _FULL:
            message = (f"{path}: cannot write: the filesystem is full ({err.strerror}); free space on it, "
                       f"then run the command again (nothing already written was lost)")
        else:
            message = f"{path}: cannot write ({err.strerror or err})"
        ColdrunError.__init__(self, message)
        self.errno, self.strerror, self.filename = err.errno, err.strerror, str(path)
        self.message = message

    def __str__(self) -> str:
        return self.message


def is_full(err: OSError) -> bool:
    """Whether ``err`` says the filesystem (or the user's quota) is full."""
    return err.errno in _FULL


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a write_atomic temp file (left behind when a write was cut short)."""
    return name.startswith(".") and name.endswith(".tmp")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` durably: temp + fsync + rename + fsync(dir).

    ``mode`` is set exactly (fchmod), whatever the umask.  Any OSError comes
    out as WriteFailed naming ``path``; the temp file is removed.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as e:
        raise WriteFailed(path, e) from e
    try:
        try:
            os.fchmod(fd, mode)  # the umask must not decide a file's mode
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteFailed(path, e) from e
    try:
        fsync_dir(path.parent)
    except OSError as e:
        raise WriteFailed(path.parent, e) from e
