"""The seams between coldrun and the machine it controls.

Every read or write under /sys, /proc, /dev, /boot, /etc goes through a
``SystemRoot``; every external command through ``Commands`` (argv lists,
never shell strings); every wait through a ``Clock``.  Tests hand in a fake
root directory, a recorder of commands with canned replies, and a clock
whose sleep takes no real time.  Nothing is monkeypatched from outside.
"""

from __future__ import annotations

import glob as _glob
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Sequence


class SystemRoot:
    """Maps absolute system paths (``/sys/...``) below a root directory."""

    def __init__(self, root: str | os.PathLike = "/"):
        self.root = Path(root)

    def path(self, system_path: str) -> Path:
        if not system_path.startswith("/"):
            raise ValueError(f"system paths are absolute, got {system_path!r}")
        return self.root / system_path.lstrip("/")

    def exists(self, system_path: str) -> bool:
        return self.path(system_path).exists()

    def read_text(self, system_path: str) -> str:
        return self.path(system_path).read_text()

    def write_text(self, system_path: str, text: str) -> None:
        # sysfs files must be written in place, never replaced.
        with open(self.path(system_path), "w") as f:
            f.write(text)

    def glob(self, pattern: str) -> list[str]:
        """Glob a system path pattern; returns system paths (not root-prefixed), sorted."""
        base = str(self.root).rstrip("/")
        found = _glob.glob(str(self.path(pattern)))
        return sorted("/" + os.path.relpath(p, base) if base else p for p in found)


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class Commands(Protocol):
    def run(self, argv: Sequence[str], *, input: str | None = None,
            timeout: float | None = None) -> CommandResult: ...


class RealCommands:
    """Runs commands for real: argv only, no shell, output captured."""

    def run(self, argv: Sequence[str], *, input: str | None = None,
            timeout: float | None = None) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        try:
            p = subprocess.run(argv, input=input, capture_output=True, text=True,
                               timeout=timeout, check=False)
        except FileNotFoundError:
            return CommandResult(argv, 127, "", f"{argv[0]}: command not found")
        except subprocess.TimeoutExpired:
            return CommandResult(argv, 124, "", f"{argv[0]}: timed out after {timeout}s")
        return CommandResult(argv, p.returncode, p.stdout, p.stderr)


@dataclass
class RecordingCommands:
    """Test double: records every argv and answers from canned replies.

    ``replies`` maps an argv prefix (tuple) to a CommandResult-like triple
    (returncode, stdout, stderr); the longest matching prefix wins.  An argv
    with no reply fails loudly with returncode 127 so tests notice.
    """

    replies: dict[tuple[str, ...], tuple[int, str, str]] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, input: str | None = None,
            timeout: float | None = None) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        self.calls.append(argv)
        best = None
        for prefix, reply in self.replies.items():
            if argv[:len(prefix)] == prefix and (best is None or len(prefix) > len(best[0])):
                best = (prefix, reply)
        if best is None:
            return CommandResult(argv, 127, "", f"no canned reply for {argv}")
        rc, out, err = best[1]
        return CommandResult(argv, rc, out, err)


class Clock(Protocol):
    def monotonic(self) -> float: ...
    def time(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class RealClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


@dataclass
class FakeClock:
    """Test double: sleeping advances the clock instantly."""

    now: float = 1000.0
    wall: float = 1_700_000_000.0
    slept: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.wall + (self.now - 1000.0)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += max(0.0, seconds)
