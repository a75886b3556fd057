"""Which Platform a state dir runs on: simulated for --simulate-reboots, else the detected OS (contract C).

    make_platform(name, policy, state_dir, *, root, commands, clock, log, waits=None) -> Platform
    detect_platform_name() -> "linux" | "openbsd"

``waits`` is the experiment's [waits] table (supervisor.experiment.model.Waits); Krun's values when absent.

This is the one place that turns the schedule's mode into behaviour; the
boot code only calls the platform it is given.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from supervisor.cpulist import process_cpus
from supervisor.errors import ColdrunError
from supervisor.experiment.model import Experiment, Waits
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms import active_marker, boot_service
from supervisor.platforms.base import Platform
from supervisor.platforms.kept_state import undo_log
from supervisor.platforms.linux_topology import benchmark_cpus, one_kind
from supervisor.platforms.undo_replay import restore_undo_log
from supervisor.system import Clock, Commands, RealClock, RealCommands, SystemRoot

SIMULATED, HARDWARE = "simulated", "hardware"     # the schedule's mode field
# A state dir that is never created: inspecting controls (platform show, screening checks) reads the machine only.
NO_STATE_DIR = Path("/nonexistent-coldrun-state")
PLATFORM_NAMES = ("simulated", "linux", "openbsd")


def detect_platform_name() -> str:
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform.startswith("openbsd"):
        return "openbsd"
    raise ColdrunError(f"unsupported operating system {sys.platform!r}: coldrun runs on Linux and OpenBSD "
                       "(use --simulate-reboots elsewhere)")


def make_platform(name: str, policy: PlatformPolicy, state_dir: Path, *, root: SystemRoot,
                  commands: Commands, clock: Clock, log, waits: Waits | None = None) -> Platform:
    # Each platform's module is imported when chosen: a boot loads its own OS's, not the other's.
    if name == "simulated":
        from supervisor.platforms.simulated import SimulatedPlatform
        return SimulatedPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log)
    if name == "linux":
        from supervisor.platforms.linux import LinuxPlatform
        return LinuxPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log, waits=waits)
    if name == "openbsd":
        from supervisor.platforms.openbsd import OpenBSDPlatform
        return OpenBSDPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log, waits=waits)
    raise ColdrunError(f"unknown platform {name!r}; expected one of {', '.join(PLATFORM_NAMES)}")


class QuietLog:
    """A platform's log when only its readings matter: every event is dropped."""

    def __getattr__(self, name):
        return lambda *a, **k: None


@dataclass
class Machine:
    """The computer coldrun runs on, seen through its seams; builds the platform for a mode."""

    root: SystemRoot = field(default_factory=lambda: SystemRoot("/"))
    commands: Commands = field(default_factory=RealCommands)
    clock: Clock = field(default_factory=RealClock)
    # A kind's own seams, by name (a [stop] experiment's run-length analysis): tests hand in doubles.
    seams: dict[str, Any] = field(default_factory=dict)
    # This process's CPUs; tests hand in one to see a single-CPU machine refused.
    affinity: Callable[[], list[int]] = field(default=process_cpus)

    def cpus(self, mode: str, policy: PlatformPolicy) -> list[int]:
        """The CPUs runners may be placed on (a pair needs two): with pinning on Linux hardware the
        coldrun.bench partition's (the supervisor's own affinity leaves them out once it exists), else
        this process's, of one core kind on Linux hardware."""
        if mode == HARDWARE and detect_platform_name() == "linux":
            # A pair's sides on equal cores, whatever benchmark_cpus names.
            cpus = sorted(benchmark_cpus(self.root, policy.benchmark_cpus)) if policy.pinning else self.affinity()
            return one_kind(self.root, cpus)
        return self.affinity()

    def require_privileges(self, mode: str) -> None:
        """Refuse a start this process may not make: controlling the machine needs root."""
        if mode == HARDWARE and os.geteuid() != 0:
            raise ColdrunError("coldrun start without --simulate-reboots controls the machine and must run as "
                               "root; add --simulate-reboots to try the experiment without touching the system")

    def refuse_volatile_state_dir(self, mode: str, state_dir: str | Path) -> None:
        """A state dir must outlive the reboots of a real run: not on tmpfs, not where the boot empties it."""
        if mode == HARDWARE:
            from supervisor.platforms.volatile import lost_at_boot   # start's alone
            problem = lost_at_boot(self.root, Path(state_dir).absolute())
            if problem:
                raise ColdrunError(problem)

    def forget_lost_state_dir(self, state_dir: Path, log: Any) -> bool:
        """A hardware experiment whose state dir is gone (deleted, its disk wiped): restore what it changed from
        the machine's own copy of its undo log, remove its boot service and the active marker.  False when the
        machine holds nothing of it.  Its results went with the state dir."""
        state_dir = Path(state_dir).absolute()
        undo = undo_log(self.root, state_dir)
        unit = boot_service.is_enabled(state_dir, root=self.root)
        marked = active_marker.read_marker(self.root) == state_dir
        if not (undo.pending() or unit or marked):
            return False
        failures = restore_undo_log(state_dir, root=self.root, commands=self.commands, log=log)
        boot_service.disable_and_remove(state_dir, root=self.root, commands=self.commands, log=log)  # idempotent
        if failures:
            raise ColdrunError(f"{state_dir}: the state dir is gone and {len(failures)} setting(s) could not be "
                               f"restored ({failures[0]}); restore them by hand (the entries are in {undo.path}), "
                               f"then coldrun abort {state_dir} again")
        active_marker.clear_marker(self.root, state_dir, log)
        return True

    def wind_down_unreadable(self, state_dir: Path, log: Any) -> tuple[bool, list[str]]:
        """A boot that cannot read its state dir's schedule or experiment (damaged): restore what the
        experiment changed from the machine's own copy of its undo log and remove its boot service, so the
        machine neither reboots for ever nor keeps its benchmark settings.  The active marker stays, as for
        any stopped experiment.  Only the copy outside the state dir is replayed: one inside it may be a
        simulated experiment's, which changed nothing real.  Returns whether it was a hardware experiment's (so
        something was done) and what could not be restored."""
        state_dir = Path(state_dir).absolute()
        failures: list[str] = []
        undo = undo_log(self.root, state_dir)
        # A hardware experiment's: the machine keeps its undo log outside the state dir.
        kept = undo.path.parent != state_dir and undo.path.parent.is_dir()
        if kept and undo.pending():
            failures = restore_undo_log(state_dir, root=self.root, commands=self.commands, log=log)
        done = kept or boot_service.is_enabled(state_dir, root=self.root)
        if done:
            boot_service.disable_and_remove(state_dir, root=self.root, commands=self.commands, log=log)
        return done, failures

    def runs_as_benchmark_user(self, mode: str) -> bool:
        """Whether runners of this mode run as the policy's fresh benchmark user (when it asks for one).

        Simulated as root too: a benchmark run as root could write into the state dir."""
        return mode == HARDWARE or os.geteuid() == 0

    def platform(self, mode: str, exp: Experiment, state_dir: Path, log: Any) -> Platform:
        name = "simulated" if mode == SIMULATED else detect_platform_name()
        return make_platform(name, exp.platform, state_dir, root=self.root, commands=self.commands,
                             clock=self.clock, log=log, waits=exp.waits)
