"""The simulated platform: every step logs what a real platform would do, and changes nothing.

Used by ``coldrun start --simulate-reboots``: no root, no system changes.
A reboot re-executes the running coldrun as ``coldrun resume STATE_DIR``;
the boot service, the active-experiment marker and mail are only logged.

One exception, for safety: run as root, a simulated experiment runs each
benchmark as a fresh unprivileged user exactly as a real one does (same
BenchmarkUser, same drop-privileges prefix), so a benchmark can never write
into the state dir or anywhere else root can.  ``benchmark_user = false``
runs benchmarks as root, as on a real machine.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from supervisor.state.undo import UndoLog
from supervisor.platforms.base import LaunchPrefix, Platform, PostCheckResult
from supervisor.platforms.controls import ControlReport
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.benchmark_user import BenchmarkUser, simulated_user_name
from supervisor.system import RealCommands


class SimulatedPlatform(Platform):
    name = "simulated"

    def __init__(self, policy: PlatformPolicy, state_dir: Any = None, *, log: Any,
                 root: Any = None, commands: Any = None, clock: Any = None, euid: int | None = None):
        # Same keywords as make_platform(); a simulated platform needs the log and the state dir, and as
        # root the commands (the benchmark user).  ``euid``: tests pretend to be root or not.
        self.policy = policy
        # None only for a platform built without a state dir (tests of checks that never touch it); the
        # Platform methods that use state_dir are not called on one.
        self.state_dir = Path(state_dir) if state_dir is not None else None  # type: ignore[assignment]
        self.log = log
        euid = os.geteuid() if euid is None else euid
        self.user = None
        if euid == 0 and policy.benchmark_user and state_dir is not None:
            self.user = BenchmarkUser(simulated_user_name(policy.benchmark_user_name, Path(state_dir)),
                                      commands or RealCommands(), Path(state_dir), log,
                                      "openbsd" if sys.platform.startswith("openbsd") else "linux")

    def apply_and_verify(self) -> list[ControlReport]:
        reports = [ControlReport(control, str(wanted), None, True, "simulated: not applied")
                   for control, wanted in self.policy.model_dump().items()]
        self.log.info("simulated: would apply and verify platform controls", controls=len(reports))
        return reports

    def take_baselines(self) -> dict[str, float]:
        self.log.info("simulated: would pause and read baseline temperatures; no sensors read")
        return {}

    def wait_until_ready(self, baselines: dict[str, float]) -> None:
        self.log.info("simulated: would wait for boot settle, sync and temperatures; not waiting")

    def snapshot(self) -> dict[str, Any]:
        self.log.info("simulated: would snapshot kernel log position and throttle counters")
        return {"platform": "simulated"}

    def launch_prefix(self, job_name: str) -> LaunchPrefix:
        if self.user is None:
            self.log.info("simulated: would create a fresh benchmark user and pin/nice the runner; running as is",
                          job=job_name)
            return LaunchPrefix()
        self.user.create()
        self.log.info("simulated as root: running the benchmark as a fresh unprivileged user, as on a real "
                      "machine; would pin/nice it", job=job_name, user=self.user.name)
        return self.user.switch()

    def remove_leftover_launch(self) -> list[str]:
        done = self.user.remove_leftover() if self.user is not None else None
        return [done] if done else []

    def end_launch(self, job_name: str) -> None:
        if self.user is None:
            self.log.info("simulated: would delete the benchmark user", job=job_name)
        else:
            self.user.delete()

    def post_checks(self, before: dict[str, Any], measurements: dict[str, Any]) -> PostCheckResult:
        self.log.info("simulated: would check kernel log, throttle counters and APERF/MPERF")
        return PostCheckResult(flags=[], rerun=False, details={"platform": "simulated"})

    def audit(self) -> dict[str, Any]:
        u = os.uname()
        return {"uname": " ".join([u.sysname, u.nodename, u.release, u.version, u.machine]),
                "platform": "simulated"}

    def undo_log(self) -> UndoLog:
        """Nothing on the machine is changed; what a kind records (a screening restore) stays in the state dir."""
        return UndoLog(self.state_dir)

    def restore(self) -> None:
        self.log.info("simulated: would restore changed settings from the undo log; nothing was changed")

    def reboot(self) -> None:
        """Replace this process with a fresh `coldrun resume STATE_DIR` of the same coldrun."""
        argv, env = resume_command(self.state_dir)
        self.log.info("simulated: would reboot; re-executing instead", argv=" ".join(argv))
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(argv[0], argv, env)

    def claim_machine(self) -> None:
        self.log.info("simulated: would restore what a dead experiment left and mark this one active")

    def reclaim_machine(self) -> None:
        self.log.info("simulated: would mark this experiment active again")

    def release_machine(self) -> None:
        self.log.info("simulated: would remove the active-experiment marker")

    def install_boot_service(self) -> None:
        self.log.info("simulated: would install and enable the boot service")

    def ensure_boot_service(self) -> None:
        self.log.info("simulated: would check that the boot service is enabled")

    def remove_boot_service(self) -> None:
        self.log.info("simulated: would disable and remove the boot service")

    def mail(self, settings: Any, counter: Any, subject: str, body: str) -> None:
        self.log.info("simulated: would mail", subject=subject, to=",".join(settings.to) or None)


def resume_command(state_dir: Path) -> tuple[list[str], dict[str, str]]:
    """argv and environment that run the same coldrun code as this process, whatever the cwd.

    ``-P`` keeps the cwd off sys.path, so a source checkout (or any `supervisor/`
    directory) in the cwd cannot shadow the coldrun that is running.  When the
    running package is found only through the cwd (an uninstalled checkout run
    from its own directory), its directory goes on PYTHONPATH instead.
    """
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    cwd_entries = {"", ".", os.getcwd()}
    on_path = {str(Path(p).resolve()) for p in sys.path if p not in cwd_entries}
    if package_root not in on_path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return [sys.executable, "-P", "-m", "supervisor", "resume", str(state_dir)], env
