"""What every step of a boot works on: the state dir, the schedule, the experiment (and its kind), the log and the
platform."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from supervisor.cpulist import process_cpus
from supervisor.experiment.model import Experiment
from supervisor.platforms.base import Platform
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir


@dataclass
class Boot:
    state: StateDir
    schedule: Schedule
    exp: Experiment
    log: Any
    platform: Platform      # everything done to the machine goes through it
    seams: dict[str, Any] = field(default_factory=dict)   # a kind's own seams (Machine's), by name
    cpus: Callable[[], list[int]] = field(default=process_cpus)   # Machine.cpus for this mode and policy
    # the experiment's kind (boot/kinds): what differs between plain, [stop], [duet], [screening]
    kind: Any = None
