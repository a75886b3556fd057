"""Logging: structlog JSON lines to <state>/log, plus one human line per event on stderr."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

import structlog

_HUMAN_SKIP = {"event", "level", "timestamp", "pid"}


class _Tee:
    """Writes the human form of each event to stderr, then lets the JSON renderer run."""

    def __init__(self, stream: TextIO | None):
        self.stream = stream

    def __call__(self, logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
        if self.stream is not None:
            extras = " ".join(f"{k}={v}" for k, v in event.items() if k not in _HUMAN_SKIP and v is not None)
            stamp = time.strftime("%H:%M:%S")
            level = event.get("level", method)
            lead = "" if level == "info" else f"{level.upper()}: "
            self.stream.write(f"[{stamp}] {lead}{event['event']}{' ' if extras else ''}{extras}\n")
            self.stream.flush()
        return event


class _AppendLogger:
    """Appends each rendered line to the log file, opened per write so no fd outlives an exec."""

    def __init__(self, path: Path | None):
        self.path = path

    def msg(self, message: str) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(message + "\n")

    info = debug = warning = error = critical = exception = log = msg


def make_logger(log_path: Path | None, stderr: TextIO | None = sys.stderr, **context: Any):
    """A bound structlog logger; ``log_path`` None logs to stderr only."""
    import os
    processors = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _Tee(stderr),
        structlog.processors.JSONRenderer(default=str),
    ]
    return structlog.wrap_logger(_AppendLogger(log_path), processors=processors,
                                 wrapper_class=structlog.BoundLogger).bind(pid=os.getpid(), **context)
