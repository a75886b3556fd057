"""Which Platform a state dir runs on: simulated for --simulate-reboots, else the detected OS (contract C)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.experiment.model import Experiment
from supervisor.platforms import detect_platform_name, make_platform
from supervisor.platforms.base import Platform
from supervisor.system import Clock, Commands, SystemRoot


def build_platform(mode: str, exp: Experiment, state_dir: Path, *, root: SystemRoot,
                   commands: Commands, clock: Clock, log: Any) -> Platform:
    name = "simulated" if mode == "simulated" else detect_platform_name()
    return make_platform(name, exp.platform, state_dir, root=root, commands=commands, clock=clock, log=log,
                         waits=exp.waits)
