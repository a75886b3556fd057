"""Helpers for platform tests: copies of the fake machine trees, a log that
remembers, and stateful command doubles for what RecordingCommands cannot
express (a user that exists after useradd, an MSR that keeps what wrmsr wrote)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Sequence


from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.kept_state import kept_dir
from supervisor.system import CommandResult, SystemRoot
from doubles import FakeClock

ROOTS = Path(__file__).resolve().parents[2] / "fixtures" / "roots"
LINUX_SHAPES = ["intel-desktop", "amd-server", "acpi-old", "vm-nocpufreq"]


# A minimal experiment whose [platform] table the tests fill in.
EXPERIMENT = """
name = "t"
executions = 1
[benchmarks]
fib = 1
[variants.v]
target = "bench.py"
[vms.py]
runner = "python"
executable = "@python"
iterations = 2
variants = ["v"]
[platform]
{platform}
"""


# coldrun's own directories on the machine (active marker, kept undo logs: platforms/kept_state.py), which a
# restore empties but leaves, with the parents it made in a tree that had no /var; anything in them counts.
COLDRUN_OWN = ("var", "var/lib", "var/lib/coldrun", "var/lib/coldrun/experiments")


def undo_path(root: Path, state: Path) -> Path:
    """Where a real platform on the tree ``root`` keeps the undo log of the experiment in ``state``."""
    return kept_dir(SystemRoot(root), state) / "undo.json"


def tree_digest(path: Path) -> dict[str, str]:
    """relative path -> content hash (or "dir"/"link"), for byte-for-byte comparisons; coldrun's own empty
    directories under /var/lib/coldrun do not count."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for d in dirnames:
            rel = os.path.relpath(os.path.join(dirpath, d), path)
            if rel not in COLDRUN_OWN:
                out[rel] = "dir"
        for f in filenames:
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, path)
            out[rel] = "link:" + os.readlink(full) if os.path.islink(full) else \
                hashlib.sha256(Path(full).read_bytes()).hexdigest()
    return out


class MemoryLog:
    def __init__(self):
        self.events: list[tuple[str, str, dict]] = []

    def _log(self, level):
        def log(event, **kw):
            self.events.append((level, event, kw))
        return log

    def __getattr__(self, level):
        if level in ("debug", "info", "warning", "error", "critical", "msg"):
            return self._log(level)
        raise AttributeError(level)

    def named(self, event: str) -> list[dict]:
        return [kw for _, e, kw in self.events if e == event]


class FakeMachineCommands:
    """Answers the commands the Linux platform runs, keeping state between calls."""

    def __init__(self, users: set[str] | None = None, msr: dict[int, int] | None = None,
                 dpkg: str = "libc6 2.36-9 amd64\ncoreutils 9.1-1 amd64\n", msr_module: bool = True):
        self.users = set(users or ())
        self.msr = dict(msr or {})
        self.msr_module = msr_module    # False: rdmsr fails as without /dev/cpu/N/msr until modprobe msr
        self.allowed = {"system.slice": "", "user.slice": ""}   # systemd slices' AllowedCPUs ("": all)
        self.dpkg = dpkg
        self.calls: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], *, input: str | None = None, timeout: float | None = None) -> CommandResult:
        a = tuple(str(x) for x in argv)
        self.calls.append(a)
        ok = lambda out="": CommandResult(a, 0, out, "")  # noqa: E731
        if a[0] == "id":
            return ok("1001\n") if a[-1] in self.users else CommandResult(a, 1, "", f"id: '{a[-1]}': no such user")
        if a[0] == "useradd":
            self.users.add(a[-1])
            return ok()
        if a[0] == "userdel":
            self.users.discard(a[-1])
            return ok()
        if a[0] == "rdmsr" and self.msr and not self.msr_module:
            return CommandResult(a, 2, "", f"rdmsr: open: No such file or directory")
        if a[0] == "rdmsr" and self.msr:
            return ok(f"{self.msr[int(a[2])]:x}\n")
        if a[:2] == ("modprobe", "msr"):
            self.msr_module = True
            return ok()
        if a[:3] == ("modprobe", "-r", "msr"):
            self.msr_module = False
            return ok()
        if a[0] == "wrmsr" and self.msr:
            self.msr[int(a[2])] = int(a[4], 16)
            return ok()
        if a[:2] == ("systemctl", "set-property"):
            self.allowed[a[3]] = a[4].split("=", 1)[1]
            return ok()
        if a[:2] == ("systemctl", "show") and "--property=AllowedCPUs" in a:
            return ok(self.allowed[a[-1]] + "\n")
        if a[0] in ("modprobe", "sync", "systemctl", "shutdown"):
            return ok()
        if a[0] == "dpkg-query":
            return ok(self.dpkg)
        return CommandResult(a, 127, "", f"{a[0]}: command not found")


def make_linux(root: Path, state_dir: Path, policy: PlatformPolicy | None = None, commands=None,
               clock=None, log=None, **kw):
    from supervisor.platforms.factory import make_platform
    return make_platform("linux", policy or PlatformPolicy(), state_dir, root=SystemRoot(root),
                         commands=commands or FakeMachineCommands(), clock=clock or FakeClock(),
                         log=log or MemoryLog(), **kw)


def vm_policy(**kw) -> PlatformPolicy:
    """What a user sets to run the real Linux platform in a VM without cpufreq or sensors."""
    base = dict(governor="ignore", turbo="ignore", energy_performance_preference="ignore",
                tickless="ignore", intel_pstate="ignore")
    base.update(kw)
    return PlatformPolicy(**base)
