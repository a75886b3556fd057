"""Platform layer: controls and checks per OS, behind one interface (see base.py).

Contract C (used by the supervisor):

    make_platform(name, policy, state_dir, *, root, commands, clock, log, waits=None) -> Platform
    detect_platform_name() -> "linux" | "openbsd"

``waits`` is the experiment's [waits] table (supervisor.experiment.model.Waits);
Krun's values when absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

from supervisor.errors import ColdrunError
from supervisor.platforms.audit import compare_audit
from supervisor.platforms.base import Platform, PostCheckResult
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.experiment.model import Waits
from supervisor.system import Clock, Commands, SystemRoot


PLATFORM_NAMES = ("simulated", "linux", "openbsd")

__all__ = ["make_platform", "detect_platform_name", "compare_audit", "restore_undo_log",
           "Platform", "PostCheckResult", "PlatformPolicy", "PLATFORM_NAMES"]


def detect_platform_name() -> str:
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform.startswith("openbsd"):
        return "openbsd"
    raise ColdrunError(f"unsupported operating system {sys.platform!r}: coldrun runs on Linux and OpenBSD "
                       "(use --simulate-reboots elsewhere)")


def make_platform(name: str, policy: PlatformPolicy, state_dir: Path, *, root: SystemRoot,
                  commands: Commands, clock: Clock, log, waits: Waits | None = None) -> Platform:
    if name == "simulated":
        # Each platform module imports this package (its facts, audit), so they are imported on use.
        from supervisor.platforms.simulated import SimulatedPlatform
        return SimulatedPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log)
    if name == "linux":
        from supervisor.platforms.linux import LinuxPlatform
        return LinuxPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log, waits=waits)
    if name == "openbsd":
        from supervisor.platforms.openbsd import OpenBSDPlatform
        return OpenBSDPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log, waits=waits)
    raise ColdrunError(f"unknown platform {name!r}; expected one of {', '.join(PLATFORM_NAMES)}")


def restore_undo_log(state_dir: Path, *, root: SystemRoot, commands: Commands, log) -> list[str]:
    """Replay another (e.g. crashed) experiment's undo log; returns failures, one line each."""
    from supervisor.platforms.unix import undo_entry
    from supervisor.state.undo import UndoLog
    undo = UndoLog(Path(state_dir))
    if not undo.pending():
        return []
    log.info("restoring settings left by an earlier experiment", undo_log=str(undo.path))
    failures = undo.replay(undo_entry(root, commands))
    for line in failures:
        log.error("restore failed", problem=line)
    return failures
