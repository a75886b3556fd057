"""What every step of a boot works on: the state dir, the schedule, the experiment and the seams."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supervisor.experiment.model import Experiment
from supervisor.platforms.base import Platform
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir
from supervisor.system import Clock, Commands, SystemRoot


@dataclass
class Boot:
    state: StateDir
    schedule: Schedule
    exp: Experiment
    log: Any
    root: SystemRoot
    commands: Commands
    clock: Clock
    platform: Platform | None = None   # injected by tests; else built from the schedule's mode
