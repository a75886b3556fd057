"""The Linux platform: controls from the policy, sysfs sensors, /dev/kmsg."""

from __future__ import annotations

import json
import platform as _pyplatform
import sys
from typing import Any

from supervisor.errors import PlatformError
from supervisor.platforms import linux_facts as facts
from supervisor.platforms import linux_topology as topology
from supervisor.platforms.audit import VOLATILE, coldrun_version, digest_lines
from supervisor.platforms.controls import Control, ControlSeams, select
from supervisor.platforms.kernel_log import DEFAULT_ALLOW, kmsg_position, kmsg_since, read_kmsg
from supervisor.platforms.linux_controls import (Aslr, ClocksourceControl, CounterAccessControl,
                                                 CpusetControl, EppControl, GovernorControl, IntelPerfLimits,
                                                 IntelPstateCheck, Overcommit,
                                                 PerfCpuTimeMax, PerfSampleRate, SmtCheck, SwapCheck,
                                                 TicklessCheck, TransparentHugepages, TurboControl)
from supervisor.platforms.linux_systemd import HousekeepingSlices, TimersControl, systemd_booted, units_started
from supervisor.platforms.temperatures import read_linux_temperatures
from supervisor.platforms.throttle import read_throttle_counters
from supervisor.platforms.base import LaunchPrefix, PostCheckResult
from supervisor.state.layout import AUDIT
from supervisor.platforms.unix import UnixPlatform


# Every Linux control, in the order apply_and_verify() enforces them and `platform show`
# prints them (tests/unit/platforms/test_cli.py pins that order).  Each is included when
# the [platform] table asks for it (Control.chosen).  Restore replays the undo log newest
# first, so settings are put back in the reverse of this order.  Rules:
LINUX_CONTROLS: tuple[type[Control], ...] = (
    # CPU frequency first, the governor leading: it picks how the driver sets the
    # frequency, and what the driver then does with EPP and turbo.
    GovernorControl,
    # EPP after the governor: with intel_pstate or amd-pstate active, switching to the
    # "performance" governor sets EPP to "performance" itself and the driver refuses any
    # other EPP under it (EBUSY).  Written after, EPP usually already reads back as wanted
    # and nothing is recorded, so restore cannot hit that refusal either.
    EppControl,
    # Check-only: stands by the frequency settings it explains (turbo's switch depends on it).
    IntelPstateCheck,
    # After the governor: intel_pstate recomputes its limits on a governor change.
    IntelPerfLimits,
    # Turbo after the governor and EPP: intel_pstate recomputes each policy's limits,
    # turbo cap included, on a governor change, so turbo is written and read back after.
    # Before counters: the MSR switch loads the msr module (without an undo entry), and
    # counters, for root-run benchmarks, then finds /dev/cpu/N/msr in place.
    TurboControl,
    # perf_event_max_sample_rate before perf_cpu_time_max_percent: the kernel refuses
    # (EINVAL) a sample-rate write while perf_cpu_time_max_percent is 0 or 100, so
    # setting the latter to 0 first would make the former fail; restore (newest first)
    # then puts perf_cpu_time_max_percent back before the sample rate, as it must.
    PerfSampleRate,
    PerfCpuTimeMax,
    # Counter access after the perf sysctls: it lowers kernel.perf_event_paranoid (lets
    # the benchmark user open per-CPU events), so it is the perf change restore takes back
    # first, and its report describes perf as the benchmark will find it.
    CounterAccessControl,
    # Independent of one another: the order is only the order of the report.
    TimersControl,
    ClocksourceControl,
    Aslr,
    TicklessCheck,
    SmtCheck,
    Overcommit,
    SwapCheck,
    TransparentHugepages,
    # Before the partition: the slices' own cpusets keep systemd from switching cpuset off
    # at the root, which would dissolve it; restored after the partition is gone.
    HousekeepingSlices,
    # Pinning last: the one control that creates something (a cgroup that takes the
    # benchmark cores from every other cgroup) rather than changing a value; made last,
    # it is the first thing restore removes.
    CpusetControl,
)


class LinuxPlatform(UnixPlatform):
    name = "linux"
    os_name = "linux"

    # --- machine shape -----------------------------------------------------------
    def cpus(self) -> list[int]:
        return facts.online_cpus(self.root)

    def benchmark_cpus(self) -> set[int]:
        return topology.benchmark_cpus(self.root, self.policy.benchmark_cpus)

    def is_virtual(self) -> tuple[bool | None, str]:
        v = facts.detect_virtualisation(self.root)
        return v.virtual, v.evidence

    def controls(self) -> list[Control]:
        machine = ControlSeams(self.root, self.commands, self.policy, self.cpus(), self.benchmark_cpus())
        return select(LINUX_CONTROLS, machine)

    # --- sensors, counters, kernel log ----------------------------------------------
    def read_temperatures(self) -> dict[str, float]:
        return read_linux_temperatures(self.root, self.policy.temperature_sensors)

    def throttle_counters(self) -> dict[str, int]:
        return read_throttle_counters(self.root)

    def kernel_log_position(self) -> int | None:
        return kmsg_position(self.root)

    def kernel_log_since(self, position: Any) -> tuple[list[str], bool]:
        return kmsg_since(self.root, int(position))

    def kernel_log_allow(self) -> list[str]:
        return DEFAULT_ALLOW + list(self.policy.kernel_log_allow)

    def nominal_hz(self) -> float | None:
        """The benchmark CPUs' kind's nominal rate (a hybrid's P- and E-cores differ)."""
        return self.policy.amperf_nominal_hz or topology.kind_nominal_hz(self.root, self.benchmark_cpus())

    def extra_snapshot(self) -> dict[str, Any]:
        freqs = {}
        for c in self.cpus():
            v = facts.read_or_none(self.root, f"{facts.CPU_DIR}/cpu{c}/cpufreq/scaling_cur_freq")
            if v is not None:
                freqs[f"cpu{c}"] = v
        kinds = topology.kind_of(topology.core_kinds(self.root))
        return {"frequencies_khz": freqs, "clocksource": facts.clocksource(self.root).current,
                "core_kinds": {f"cpu{c}": kinds.get(c, "unknown") for c in self.cpus()},
                "benchmark_cpus": sorted(self.benchmark_cpus()),
                "monotonic_us": int(self.clock.monotonic() * 1e6)}

    def post_checks(self, before: dict[str, Any], measurements: dict[str, Any]) -> PostCheckResult:
        """The common checks, and the clock source: one other than at start, or than before the
        run (the kernel's watchdog switched away from an unstable TSC), flags the execution."""
        result = super().post_checks(before, measurements)
        if self.policy.pinning:
            report = self._partition().inspect()
            if not report.ok:   # dissolved while the benchmark ran: others may have shared its CPUs
                result.flags.append("pinning")
                result.details["pinning_after"] = report.found
                result.rerun = True
        if self.policy.timers != "ignore" and systemd_booted(self.root) and "monotonic_us" in before:
            ran = units_started(self.commands, before["monotonic_us"], int(self.clock.monotonic() * 1e6))
            if ran:   # re-run only where [rerun] on_flags names "systemd_units" (not by default)
                result.flags.append("systemd_units")
                result.details["systemd_units"] = ran
                result.rerun = True
        if self.policy.clocksource == "check":
            seen = {"start": self._start_clocksource(), "before": before.get("clocksource"),
                    "after": facts.clocksource(self.root).current}
            if len({v for v in seen.values() if v is not None}) > 1:
                result.flags.append("clocksource")
                result.details["clocksource"] = seen
                result.rerun = True
        return result

    def _partition(self) -> CpusetControl:
        return CpusetControl(ControlSeams(self.root, self.commands, self.policy, self.cpus(), self.benchmark_cpus()))

    def _start_clocksource(self) -> str | None:
        """The clock source the audit recorded at `coldrun start`."""
        try:
            audit = json.loads((self.state_dir / AUDIT).read_text())
        except (OSError, ValueError):
            return None
        return (audit.get(VOLATILE) or {}).get("clocksource")

    # --- running the benchmark ---------------------------------------------------------
    def launch_prefix(self, job_name: str) -> LaunchPrefix:
        """Default scheduler, nice -20 (as root), cgroup placement, then drop to the fresh user.

        chrt --other makes the default scheduler (SCHED_OTHER) explicit,
        whatever the supervisor inherited.  setpriv switches uid/gid/groups
        and execs; unlike sudo it leaves inherited fds (the results channel,
        fd 3) open.
        """
        prefix = LaunchPrefix(["chrt", "--other", "0", "nice", "-n", str(self.policy.nice)])
        if self.policy.pinning:
            # Right before the launch: systemd re-realising the root slice (a daemon-reload, a
            # unit starting) may have switched cpuset off since the boot's apply.
            partition = self._partition()
            report = partition.enforce(self.undo)
            if report.fatal:
                raise PlatformError(f"pinning: {report.fix}")
            if report.action != "none":
                self.log.warning("benchmark partition re-made before the launch", **report.as_dict())
            prefix.cgroup = str(self.root.path(partition.bench))
            prefix.wrappers += [sys.executable, "-m", "supervisor.platforms.cgexec", prefix.cgroup, "--"]
        if self.policy.benchmark_user:
            self.user.create()
            drop = self.user.switch()
            prefix.wrappers += drop.wrappers
            prefix.env.update(drop.env)
            prefix.user = drop.user
        if self.policy.counters == "off":
            prefix.env["COLDRUN_COUNTERS"] = "off"  # libkruntime then reports wall-clock only, on purpose
        return prefix

    # --- audit -------------------------------------------------------------------------
    def audit(self) -> dict[str, Any]:
        root = self.root
        release = facts.kernel_release(root)
        version = facts.read_or_none(root, "/proc/sys/kernel/version") or "unknown"
        host = facts.read_or_none(root, "/proc/sys/kernel/hostname") or "unknown"
        pk = self.commands.run(["dpkg-query", "-W", "-f=${Package} ${Version} ${Architecture}\n"])
        packages = digest_lines(pk.stdout) if pk.ok else f"unavailable ({pk.stderr.strip() or pk.returncode})"
        os_release = {}
        for line in (facts.read_or_none(root, "/etc/os-release") or "").splitlines():
            k, _, v = line.partition("=")
            os_release[k] = v.strip('"')
        records = read_kmsg(root) or []
        uptime = facts.read_or_none(root, "/proc/uptime")
        return {
            "uname": f"Linux {host} {release} {version} {_pyplatform.machine()}",
            "kernel_release": release,
            "kernel_version": version,
            "kernel_cmdline": facts.kernel_cmdline(root),
            "cpu_model": facts.cpu_model(root),
            "cpu_count": len(self.cpus()),
            "microcode": facts.microcode(root),
            "os_release": os_release.get("PRETTY_NAME", "unknown"),
            "debian_version": facts.read_or_none(root, "/etc/debian_version") or "none",
            "packages_sha256": packages,
            "packages_count": len([ln for ln in pk.stdout.splitlines() if ln.strip()]) if pk.ok else None,
            "coldrun_version": coldrun_version(),
            "virtual": self.is_virtual()[0],
            "scaling_driver": facts.scaling_driver(root).describe(),
            VOLATILE: {
                # Recorded, not compared: coldrun itself changes some of these.
                "settings": {r.control: r.found for r in self.inspect()},
                "uptime_s": float(uptime.split()[0]) if uptime else None,
                # Compared by post_checks (a change flags executions), not by the audit.
                "clocksource": facts.clocksource(root).current,
                "boot_id": facts.read_or_none(root, "/proc/sys/kernel/random/boot_id"),
                "kernel_log_tail": [r.message for r in records[-50:]],
            },
        }

    def reboot(self) -> None:
        if self.root.exists("/run/systemd/system"):
            argv = ["systemctl", "reboot"]
        else:
            argv = ["shutdown", "-r", "now"]
        self.log.info("rebooting", argv=argv)
        r = self.commands.run(argv)
        if not r.ok:
            raise PlatformError(f"reboot failed ({' '.join(argv)}): {r.stderr.strip() or r.returncode}")
