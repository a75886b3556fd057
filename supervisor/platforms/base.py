"""The platform interface the supervisor's boot cycle calls.

One implementation per OS (Linux, OpenBSD) and a simulated one that only
logs what it would do.  The supervisor calls, at every boot:

    platform.apply_and_verify()            # step 4: fatal -> PlatformError
    platform.wait_until_ready(baselines)   # step 5: boot settle, sync, temperatures
    before = platform.snapshot()           # step 6
    prefix = platform.launch_prefix(job)   # step 7: argv prefix (user, nice, pinning)
    ...runner runs...
    flags, details = platform.post_checks(before, measurements)   # step 9
    platform.reboot()                      # step 10

and once per experiment ``take_baselines()`` at start and ``restore()`` at
finish or abort.  ``audit()`` gives the fingerprint compared at each boot.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PostCheckResult:
    """What the post-execution checks found.

    ``flags`` are short machine-readable names (e.g. "kernel_log",
    "thermal_throttle", "amperf_throttle", "amperf_turbo") stored in the
    execution record; ``rerun`` asks the re-run policy to consider running
    the job again; ``details`` is stored verbatim in the record.
    """

    flags: list[str] = field(default_factory=list)
    rerun: bool = False
    details: dict[str, Any] = field(default_factory=dict)


class Platform(ABC):
    name: str = "abstract"

    @abstractmethod
    def apply_and_verify(self) -> list[dict[str, Any]]:
        """Re-apply every control of the policy and read each back.

        Returns one report per control ({"control", "wanted", "found", "ok",
        "action"}) for the log; raises PlatformError when a fatal check fails.
        """

    @abstractmethod
    def take_baselines(self) -> dict[str, float]:
        """Temperature baselines (sensor name -> degrees C), after the pause."""

    @abstractmethod
    def wait_until_ready(self, baselines: dict[str, float]) -> None:
        """Boot settle, sync, and wait for temperatures within tolerance.

        Raises PlatformError when the monotonic deadline passes.
        """

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """State taken just before a run: kernel log position, throttle counters, temperatures, ..."""

    @abstractmethod
    def launch_prefix(self, job_name: str) -> list[str]:
        """argv to put before the runner's argv (user switch, nice, pinning); [] when simulated."""

    @abstractmethod
    def end_launch(self, job_name: str) -> None:
        """Undo what launch_prefix prepared (delete the benchmark user, ...)."""

    @abstractmethod
    def post_checks(self, before: dict[str, Any], measurements: dict[str, Any]) -> PostCheckResult:
        """Kernel log, throttle counters, APERF/MPERF after a run."""

    @abstractmethod
    def audit(self) -> dict[str, Any]:
        """Facts that must not change during an experiment (plus volatile ones under "volatile")."""

    @abstractmethod
    def restore(self) -> None:
        """Replay the undo log in reverse, restoring every changed setting."""

    @abstractmethod
    def reboot(self) -> None:
        """Reboot through the init system. Does not return on a real machine."""
