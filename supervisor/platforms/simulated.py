"""The simulated platform: every step logs what a real platform would do, and changes nothing.

Used by ``coldrun start --simulate-reboots``: no root, no system changes.
reboot() is never called in simulated mode (the supervisor re-executes
itself instead); calling it is a bug and says so.

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

from supervisor.platforms.base import Platform, PostCheckResult
from supervisor.platforms.benchmark_user import BenchmarkUser, simulated_user_name
from supervisor.platforms.policy import PlatformPolicy
from supervisor.system import RealCommands


class SimulatedPlatform(Platform):
    name = "simulated"

    def __init__(self, policy: PlatformPolicy, state_dir: Any = None, *, log: Any,
                 root: Any = None, commands: Any = None, clock: Any = None, euid: int | None = None):
        # Same keywords as make_platform(); a simulated platform needs the log, and as root the
        # state dir (the benchmark-user marker) and commands.  ``euid``: tests pretend to be root or not.
        self.policy = policy
        self.log = log
        euid = os.geteuid() if euid is None else euid
        self.user = None
        if euid == 0 and policy.benchmark_user and state_dir is not None:
            self.user = BenchmarkUser(simulated_user_name(policy.benchmark_user_name, Path(state_dir)),
                                      commands or RealCommands(), Path(state_dir), log,
                                      "openbsd" if sys.platform.startswith("openbsd") else "linux")

    def apply_and_verify(self) -> list[dict[str, Any]]:
        reports = []
        for control, wanted in self.policy.model_dump().items():
            reports.append({"control": control, "wanted": wanted, "found": None, "ok": True,
                            "action": "simulated: not applied"})
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

    def launch_prefix(self, job_name: str) -> list[str]:
        if self.user is None:
            self.log.info("simulated: would create a fresh benchmark user and pin/nice the runner; running as is",
                          job=job_name)
            return []
        self.user.create()
        self.log.info("simulated as root: running the benchmark as a fresh unprivileged user, as on a real "
                      "machine; would pin/nice it", job=job_name, user=self.user.name)
        return self.user.switch_argv()

    def end_launch(self, job_name: str) -> None:
        if self.user is None:
            self.log.info("simulated: would delete the benchmark user", job=job_name)
        else:
            self.user.delete()

    def post_checks(self, before: dict[str, Any], measurements: dict[str, Any]) -> PostCheckResult:
        self.log.info("simulated: would check kernel log, throttle counters and APERF/MPERF")
        return PostCheckResult(flags=[], rerun=False, details={"platform": "simulated"})

    def audit(self) -> dict[str, Any]:
        import os
        u = os.uname()
        return {"uname": " ".join([u.sysname, u.nodename, u.release, u.version, u.machine]),
                "platform": "simulated"}

    def restore(self) -> None:
        self.log.info("simulated: would restore changed settings from the undo log; nothing was changed")

    def reboot(self) -> None:
        raise AssertionError("SimulatedPlatform.reboot() called: simulated mode re-executes the supervisor")
