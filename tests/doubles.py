"""Test doubles for the seams in supervisor/system.py and the platform (never imported by production code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from supervisor.platforms.base import Platform
from supervisor.platforms.factory import Machine
from supervisor.system import CommandResult, SystemRoot


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


class FakeMachine(Machine):
    """A Machine whose platform is a test double, bound to the state dir, seams and log of each request.

    ``modes`` records the mode each boot asked for.  The double stands in for
    every mode: tests choose hardware or simulated behaviour by the double.
    """

    def __init__(self, double: Platform, *, root: SystemRoot | None = None,
                 commands: RecordingCommands | None = None, clock: FakeClock | None = None,
                 run_length: Any = None):
        super().__init__(root=root, commands=commands or RecordingCommands(), clock=clock or FakeClock())
        if run_length is not None:      # tests/run_length_doubles.py: [stop]'s analysis without numpy
            self.seams["run_length"] = run_length
        self.double = double
        self.modes: list[str] = []

    def platform(self, mode: str, exp: Any, state_dir: Path, log: Any) -> Platform:
        self.modes.append(mode)
        d = self.double
        d.state_dir, d.root, d.commands, d.log = Path(state_dir), self.root, self.commands, log
        return d
