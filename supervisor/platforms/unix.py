"""What the Linux and OpenBSD platforms share: the boot-cycle steps built
from their controls, sensors, kernel log and benchmark user."""

from __future__ import annotations

import json
from abc import abstractmethod
from pathlib import Path
from typing import Any, Callable

from supervisor.durable import write_atomic
from supervisor.errors import PlatformError
from supervisor.experiment.model import Waits
from supervisor.platforms.amperf import check_amperf
from supervisor.platforms.base import Platform, PostCheckResult
from supervisor.platforms.benchmark_user import BenchmarkUser
from supervisor.platforms.controls import Control, ControlReport
from supervisor.platforms.kernel_log import unexpected
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.temperatures import busy_loop_heat, wait_for_baselines
from supervisor.platforms.throttle import throttle_changes
from supervisor.platforms.undo_replay import undo_entry
from supervisor.system import Clock, Commands, SystemRoot
from supervisor.state.layout import BOOT_BASELINES

MAX_LOG_LINES = 200  # kernel log lines stored per record


class UnixPlatform(Platform):
    os_name = "unix"

    def __init__(self, policy: PlatformPolicy, state_dir: Path, *, root: SystemRoot, commands: Commands,
                 clock: Clock, log, waits: Waits | None = None, heat: Callable[[], None] | None = None):
        self.policy = policy
        self.state_dir = Path(state_dir)
        self.root = root
        self.commands = commands
        self.clock = clock
        self.log = log
        self.waits = waits if waits is not None else Waits()   # the experiment's [waits]; Krun's values
        self.heat = heat if heat is not None else busy_loop_heat
        self.undo = self.undo_log()
        self.user = BenchmarkUser(policy.benchmark_user_name, commands, self.state_dir, log, self.os_name, self.root)
        self.restore_failures: list[str] = []

    # --- per-OS pieces -----------------------------------------------------
    @abstractmethod
    def controls(self) -> list[Control]: ...

    @abstractmethod
    def read_temperatures(self) -> dict[str, float]: ...

    @abstractmethod
    def is_virtual(self) -> tuple[bool | None, str]: ...   # None: nothing tells

    @abstractmethod
    def kernel_log_position(self) -> Any: ...

    @abstractmethod
    def kernel_log_since(self, position: Any) -> tuple[list[str], bool]: ...

    @abstractmethod
    def kernel_log_allow(self) -> list[str]: ...

    def throttle_counters(self) -> dict[str, int]:
        return {}

    def nominal_hz(self) -> float | None:
        return self.policy.amperf_nominal_hz

    def extra_snapshot(self) -> dict[str, Any]:
        return {}

    # --- inspection (platform show / check) -----------------------------------
    def inspect(self) -> list[ControlReport]:
        return [c.inspect() for c in self.controls()] + self.extra_checks()

    def extra_checks(self) -> list[ControlReport]:
        """Checks that are not settings: benchmark user name, sensors, kernel log access."""
        reports: list[ControlReport] = []
        if self.policy.benchmark_user:
            problem = self.user.check_not_foreign()
            reports.append(ControlReport("benchmark_user", f"fresh account {self.user.name!r}",
                                         "foreign account exists" if problem else "name free or ours",
                                         problem is None, "fix needed" if problem else "none",
                                         problem, fatal=problem is not None))
        if self.policy.temperatures == "check":
            sensors = self.read_temperatures()
            virtual, _ = self.is_virtual()
            missing = not sensors and not virtual
            reports.append(ControlReport(
                "temperatures", "sensors to wait on", f"{len(sensors)} sensors" if sensors else "no sensors",
                not missing, "fix needed" if missing else "none",
                self._no_sensor_fix() if missing else None, fatal=missing))
        if self.policy.kernel_log == "check":
            pos = self.kernel_log_position()
            reports.append(ControlReport(
                "kernel_log", "readable", "unreadable" if pos is None else "readable", pos is not None,
                "fix needed" if pos is None else "none",
                "cannot read the kernel log; run coldrun as root or set kernel_log = \"ignore\""
                if pos is None else None, fatal=pos is None))
        return reports

    def _no_sensor_fix(self) -> str:
        return ("no CPU temperature sensor found (temperature_sensors in [platform] names which): load the "
                "CPU's sensor driver (coretemp, k10temp: apt-get install lm-sensors; sensors-detect), name this "
                "machine's sensors in temperature_sensors, or set temperatures = \"ignore\" in [platform]")

    # --- Platform interface ------------------------------------------------------
    def apply_and_verify(self) -> list[ControlReport]:
        reports: list[ControlReport] = []
        for control in self.controls():
            report = control.enforce(self.undo)
            self.log.info("platform control", **report.as_dict())
            reports.append(report)
        problems = [f"{r.control}: {r.fix}" for r in reports if r.fatal]
        for r in self.extra_checks():
            reports.append(r)
            if r.fatal:
                problems.append(f"{r.control}: {r.fix}")
        if problems:
            raise PlatformError("platform not ready: " + " | ".join(problems))
        return reports

    def take_baselines(self) -> dict[str, float]:
        if self.policy.temperatures == "ignore":
            return {}
        self.log.info("pausing before the baseline temperatures", seconds=self.waits.baseline_pause)
        self.clock.sleep(self.waits.baseline_pause)
        temps = self.read_temperatures()
        if not temps:
            virtual, why = self.is_virtual()
            if not virtual:
                raise PlatformError(self._no_sensor_fix())
            self.log.info("no temperature sensors on this virtual machine", evidence=why)
        self.log.info("temperature baselines", **{k: round(v, 2) for k, v in temps.items()})
        return temps

    def wait_until_ready(self, baselines: dict[str, float]) -> None:
        self.log.info("boot settle", seconds=self.waits.boot_settle)
        self.clock.sleep(self.waits.boot_settle)
        self.commands.run(["sync"])
        self.clock.sleep(self.waits.sync)
        if self.policy.temperatures == "check" and baselines:
            baselines = self._idle_baselines(baselines)
            heat = self.heat if self.policy.warm_up_when_cold else None
            wait_for_baselines(self.read_temperatures, baselines,
                               tolerance=self.waits.temperature_tolerance,
                               deadline_seconds=self.waits.temperature_deadline,
                               clock=self.clock, log=self.log, heat=heat)

    def _idle_baselines(self, at_start: dict[str, float]) -> dict[str, float]:
        """The baselines every boot waits for: taken at the first boot, after its settle, of the
        sensors recorded at start.  At `start` someone may still be working on the machine; after
        a reboot and the settle it is as idle as it will be at every later boot."""
        path = self.state_dir / BOOT_BASELINES
        try:
            return {k: float(v) for k, v in json.loads(path.read_text()).items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, AttributeError) as e:
            raise PlatformError(f"{path}: unreadable ({e}); delete it to take the baselines again") from None
        temps = self.read_temperatures()
        idle = {name: temps[name] for name in at_start if name in temps}
        write_atomic(path, json.dumps(idle).encode())
        self.log.info("temperature baselines taken at the first boot (those at start: recorded only)",
                      **{k: round(v, 2) for k, v in idle.items()})
        return idle

    def snapshot(self) -> dict[str, Any]:
        snap: dict[str, Any] = {
            "kernel_log_position": self.kernel_log_position() if self.policy.kernel_log == "check" else None,
            "throttle_counters": self.throttle_counters() if self.policy.throttle_counters == "check" else {},
            "temperatures": self.read_temperatures() if self.policy.temperatures == "check" else {},
            "time": self.clock.time(),
        }
        snap.update(self.extra_snapshot())
        return snap

    def post_checks(self, before: dict[str, Any], measurements: dict[str, Any]) -> PostCheckResult:
        result = PostCheckResult()
        # Kernel log: flagged and stored, not re-run (as Krun: a note for the reader).
        pos = before.get("kernel_log_position")
        if self.policy.kernel_log == "check" and pos is not None:
            lines, lost = self.kernel_log_since(pos)
            bad = unexpected(lines, self.kernel_log_allow())
            if bad or lost:
                result.flags.append("kernel_log")
                result.details["kernel_log"] = bad[:MAX_LOG_LINES]
                result.details["kernel_log_unexpected_count"] = len(bad)
                if lost:
                    result.details["kernel_log_lost_records"] = True
        # Throttle counters: the machine throttled during the run -> re-run.
        if self.policy.throttle_counters == "check":
            changes = throttle_changes(before.get("throttle_counters") or {}, self.throttle_counters())
            if changes:
                result.flags.append("thermal_throttle")
                result.details["thermal_throttle"] = changes
                result.rerun = True
        # APERF/MPERF: busy cores off their nominal frequency -> re-run.
        if self.policy.amperf == "check":
            am = check_amperf(measurements, bounds=self.policy.amperf_ratio_bounds,
                              busy_fraction=self.policy.amperf_busy_fraction, nominal_hz=self.nominal_hz())
            result.details["amperf"] = am.details()
            if am.flags():
                result.flags.extend(am.flags())
                result.rerun = True
            elif not am.checked:
                self.log.warning("APERF/MPERF not checked", reason=am.reason)
        if self.policy.temperatures == "check":
            result.details["temperatures_after"] = self.read_temperatures()
        return result

    def end_launch(self, job_name: str) -> None:
        if self.policy.benchmark_user:
            self.user.delete()

    def remove_leftover_launch(self) -> list[str]:
        done = self.user.remove_leftover() if self.policy.benchmark_user else None
        return [done] if done else []

    def restore(self) -> None:
        self.restore_failures = self.undo.replay(undo_entry(self.root, self.commands))
        for line in self.restore_failures:
            self.log.error("restore failed", problem=line)
        if not self.restore_failures:
            self.log.info("platform settings restored")

    def restore_control(self, name: str) -> list[str]:
        return self.undo.replay(undo_entry(self.root, self.commands), control=name)
