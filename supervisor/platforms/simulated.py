"""The simulated platform: every step logs what a real platform would do, and changes nothing.

Used by ``coldrun start --simulate-reboots``: no root, no system changes.
reboot() is never called in simulated mode (the supervisor re-executes
itself instead); calling it is a bug and says so.
"""

from __future__ import annotations

from typing import Any

from supervisor.platforms.base import Platform, PostCheckResult
from supervisor.experiment.platform_policy import PlatformPolicy


class SimulatedPlatform(Platform):
    name = "simulated"

    def __init__(self, policy: PlatformPolicy, state_dir: Any = None, *, log: Any,
                 root: Any = None, commands: Any = None, clock: Any = None):
        # Same keywords as make_platform(); a simulated platform needs only the log.
        self.policy = policy
        self.log = log

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
        self.log.info("simulated: would create a fresh benchmark user and pin/nice the runner; running as is",
                      job=job_name)
        return []

    def end_launch(self, job_name: str) -> None:
        self.log.info("simulated: would delete the benchmark user", job=job_name)

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
