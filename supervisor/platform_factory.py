"""Which Platform a state dir runs on: simulated for --simulate-reboots, else the detected OS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.platforms.base import Platform
from supervisor.platforms.policy import PlatformPolicy
from supervisor.platforms.simulated import SimulatedPlatform
from supervisor.system import Clock, Commands, SystemRoot


def build_platform(mode: str, policy: PlatformPolicy, state_dir: Path, *, root: SystemRoot,
                   commands: Commands, clock: Clock, log: Any) -> Platform:
    if mode == "simulated":
        return SimulatedPlatform(policy, state_dir, root=root, commands=commands, clock=clock, log=log)
    from supervisor.platforms import detect_platform_name, make_platform
    return make_platform(detect_platform_name(), policy, state_dir, root=root, commands=commands,
                         clock=clock, log=log)
