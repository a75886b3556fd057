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

The platform also owns what is done to the machine between executions: the
boot service, the system-wide active-experiment marker and mail.  This base
class does them for real (through the seams ``root``, ``commands`` and
``log`` and the ``state_dir`` every platform keeps); the simulated platform
overrides each to log what it would do, and re-executes instead of rebooting.
The boot code therefore never asks which mode it runs in.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.platforms import active_marker, boot_service, kept_state
from supervisor.platforms.mail import MailCount, Mailer
from supervisor.experiment.model import Mail
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.controls import ControlReport
from supervisor.state.undo import UndoLog
from supervisor.system import Commands, SystemRoot



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


@dataclass
class LaunchPrefix:
    """What a platform puts before a runner's argv, with what it sets for the runner kept apart.

    ``wrappers`` are commands that exec the next (chrt, nice, cgexec, setpriv);
    ``env`` the variables they set for the runner, so the record can say what
    the runner saw without parsing argv; ``cgroup`` the pinning cgroup the
    wrappers place the runner in (its execution's cgroup goes inside).
    """

    wrappers: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cgroup: str | None = None
    user: str | None = None     # the user the wrappers switch to, if any (a pair's barrier must be theirs)

    def argv(self) -> list[str]:
        """The wrappers, then one `env K=V ...` for the variables."""
        return self.wrappers + (["env", *(f"{k}={v}" for k, v in self.env.items())] if self.env else [])

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """The environment the runner sees: ``base`` with the prefix's variables over it."""
        return {**base, **self.env}


class Platform(ABC):
    name: str = "abstract"
    # Set by every concrete platform's constructor.
    state_dir: Path
    root: SystemRoot
    commands: Commands
    log: Any

    policy: PlatformPolicy

    @abstractmethod
    def apply_and_verify(self) -> list[ControlReport]:
        """Re-apply every control of the policy and read each back.

        Returns one report per control (what was wanted, what reads back, whether
        that is as wanted); raises PlatformError when a fatal check fails.
        """

    def for_job(self, overrides: dict[str, Any]) -> Platform:
        """This platform with some [platform] settings overridden for one job (a screening treatment's control
        levels, or "ignore" for controls whose levels were refused); the same machine, undo log and user."""
        job = copy.copy(self)
        job.policy = PlatformPolicy.model_validate({**self.policy.model_dump(), **overrides})
        # What the experiment file set, plus the overrides: not every field (OpenBSD refuses set Linux fields).
        object.__setattr__(job.policy, "__pydantic_fields_set__", self.policy.model_fields_set | set(overrides))
        return job

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
    def launch_prefix(self, job_name: str) -> LaunchPrefix:
        """What goes before the runner's argv (user switch, nice, pinning); empty when simulated."""

    @abstractmethod
    def end_launch(self, job_name: str) -> None:
        """Undo what launch_prefix prepared (delete the benchmark user, ...)."""

    def remove_leftover_launch(self) -> list[str]:
        """What launch_prefix prepared and a supervisor killed mid-run left (the benchmark user): removed at
        reconcile and abort; one line per removal."""
        return []

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

    # --- the machine between executions (real here; simulated.py logs instead) -------------
    def undo_log(self) -> UndoLog:
        """Where the way back from every change is kept: outside the state dir (platforms/kept_state.py)."""
        return kept_state.undo_log(self.root, self.state_dir)

    def claim_machine(self) -> None:
        """Before a start changes anything: undo what a dead experiment left, then mark this one active."""
        active_marker.replay_previous(self.root, self.commands, self.log, self.state_dir)
        active_marker.write_marker(self.root, self.state_dir)

    def reclaim_machine(self) -> None:
        """`resume --continue`: mark this experiment active again, unless another one is."""
        active_marker.claim_for_continue(self.root, self.state_dir)

    def release_machine(self) -> None:
        """The experiment ended: drop the active marker once nothing is left to restore."""
        active_marker.clear_marker(self.root, self.state_dir, self.log)

    def install_boot_service(self) -> None:
        boot_service.install_and_enable(self.state_dir, root=self.root, commands=self.commands, log=self.log)

    def ensure_boot_service(self) -> None:
        # A power cut during `coldrun start` can leave a schedule without the boot
        # service; a `coldrun resume` by hand must then not reboot into nothing.
        if not boot_service.is_enabled(self.state_dir, root=self.root):
            self.log.warning("boot service was not enabled (power cut during start?); enabling it before "
                             "rebooting")
            self.install_boot_service()

    def remove_boot_service(self) -> None:
        boot_service.disable_and_remove(self.state_dir, root=self.root, commands=self.commands, log=self.log)

    def mail(self, settings: "Mail", counter: MailCount, subject: str, body: str) -> None:
        """A notice that bypasses the quota (started, finished, stopped, aborted)."""
        Mailer(settings.to, settings.quota, counter, commands=self.commands, log=self.log).send(
            subject, body, bypass_quota=True)
