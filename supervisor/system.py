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
from dataclasses import dataclass
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
