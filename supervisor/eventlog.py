"""Logging: structlog JSON lines to <state>/log, plus one human line per event on stderr."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog
import structlog.typing

from supervisor.durable import is_full, write_all

_HUMAN_SKIP = {"event", "level", "timestamp", "pid"}


class _Tee:
    """Writes the human form of each event to stderr, then lets the JSON renderer run."""

    def __init__(self, stream: TextIO | None):
        self.stream = stream

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if self.stream is not None:
            extras = " ".join(f"{k}={v}" for k, v in event.items() if k not in _HUMAN_SKIP and v is not None)
            stamp = time.strftime("%H:%M:%S")
            level = event.get("level", method)
            lead = "" if level == "info" else f"{level.upper()}: "
            self.stream.write(f"[{stamp}] {lead}{event['event']}{' ' if extras else ''}{extras}\n")
            self.stream.flush()
        return event


class _AppendLogger:
    """Appends each rendered line to the log file, opened per write so no fd outlives an exec.

    Warnings and errors are fsynced: they are rare, and they are what a reader
    needs after a crash (a reconciliation's note must survive a power cut in the
    next boot too).  Info lines are left to the page cache.

    The log is diagnostics: the records and the schedule are the results.  So a
    log that cannot be written (full disk, replaced by a directory or a symlink)
    never stops the supervisor: it says so once on stderr (the journal, on a real
    machine), keeps the events on stderr, retries at every event, and when the log
    is writable again notes how many events are missing from it.
    """

    def __init__(self, path: Path | None, stderr: TextIO | None):
        self.path = path
        self.stderr = stderr
        self.missed = 0

    def _append(self, line: str, durable: bool) -> None:
        assert self.path is not None
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            write_all(fd, line.encode("utf-8", "replace"))
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)

    def msg(self, message: str, durable: bool = False) -> None:
        if self.path is None:
            return
        try:
            if self.missed:
                self._append(json.dumps({"event": "event log was not writable", "missed_events": self.missed,
                                         "level": "warning"}) + "\n", durable)
                self.missed = 0
            self._append(message + "\n", durable)
        except OSError as e:
            if not self.missed:
                why = "the filesystem is full" if is_full(e) else (e.strerror or str(e))
                (self.stderr or sys.stderr).write(
                    f"coldrun: warning: {self.path}: cannot write the event log ({why}); events go to stderr "
                    f"only until it can be written again; records and the schedule are not affected\n")
            self.missed += 1

    def durable_msg(self, message: str) -> None:
        self.msg(message, durable=True)

    info = debug = log = msg
    warning = error = critical = exception = durable_msg


def make_logger(log_path: Path | None, stderr: TextIO | None = sys.stderr, **context: Any):
    """A bound structlog logger; ``log_path`` None logs to stderr only."""
    processors: list[structlog.typing.Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _Tee(stderr),
        structlog.processors.JSONRenderer(default=str),
    ]
    return structlog.wrap_logger(_AppendLogger(log_path, stderr), processors=processors,
                                 wrapper_class=structlog.BoundLogger).bind(pid=os.getpid(), **context)
