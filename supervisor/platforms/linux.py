"""The Linux platform: controls from the policy, sysfs sensors, /dev/kmsg."""

from __future__ import annotations

import platform as _pyplatform
import sys
from typing import Any

from supervisor.errors import PlatformError
from supervisor.platforms import linux_facts as facts
from supervisor.platforms.audit import VOLATILE, coldrun_version, digest_lines
from supervisor.platforms.controls import Control
from supervisor.platforms.cpulist import parse_cpulist
from supervisor.platforms.kernel_log import DEFAULT_ALLOW, kmsg_position, kmsg_since, read_kmsg
from supervisor.platforms.linux_controls import (BENCH_CGROUP, CounterAccessControl, CpusetControl,
                                                 EppControl, GovernorControl,
                                                 TicklessCheck, TurboControl, intel_pstate_check,
                                                 overcommit_control, smt_control, swap_control,
                                                 sysctl_control, thp_control)
from supervisor.platforms.temperatures import read_linux_temperatures
from supervisor.platforms.throttle import read_throttle_counters
from supervisor.platforms.unix import UnixPlatform


class LinuxPlatform(UnixPlatform):
    name = "linux"
    os_name = "linux"

    # --- machine shape -----------------------------------------------------------
    def cpus(self) -> list[int]:
        return facts.online_cpus(self.root)

    def benchmark_cpus(self) -> set[int]:
        if self.policy.benchmark_cpus:
            return parse_cpulist(self.policy.benchmark_cpus)
        cpus = self.cpus()
        return set(cpus[1:]) if len(cpus) > 1 else set(cpus)

    def is_virtual(self) -> tuple[bool, str]:
        v = facts.detect_virtualisation(self.root)
        return v.virtual, v.evidence

    def controls(self) -> list[Control]:
        p, root, cpus = self.policy, self.root, self.cpus()
        out: list[Control] = []
        if p.governor != "ignore":
            out.append(GovernorControl(root, cpus, p.governor))
        if p.energy_performance_preference != "ignore":
            out.append(EppControl(root, cpus, p.energy_performance_preference))
        if p.intel_pstate == "disable":
            out.append(intel_pstate_check(root))
        if p.turbo != "ignore":
            out.append(TurboControl(root, self.commands, cpus, str(p.turbo), p.msr_turbo))
        if p.perf_max_sample_rate != "ignore":
            out.append(sysctl_control("perf_max_sample_rate", root, "/proc/sys/kernel/perf_event_max_sample_rate",
                                      str(p.perf_max_sample_rate)))
        if p.perf_cpu_time_max_percent != "ignore":
            out.append(sysctl_control("perf_cpu_time_max_percent", root,
                                      "/proc/sys/kernel/perf_cpu_time_max_percent",
                                      str(p.perf_cpu_time_max_percent)))
        if p.counters != "off":
            out.append(CounterAccessControl(root, self.commands, cpus, p.counters, p.perf_event_paranoid,
                                            unprivileged=p.benchmark_user))
        if p.aslr != "ignore":
            out.append(sysctl_control("aslr", root, "/proc/sys/kernel/randomize_va_space", "2" if p.aslr else "0"))
        if p.tickless == "require":
            out.append(TicklessCheck(root, self.benchmark_cpus(), cpus))
        if p.smt != "ignore":
            out.append(smt_control(root, p.smt))
        if p.overcommit_memory != "ignore":
            out.append(overcommit_control(root, p.overcommit_memory))
        if p.swap != "ignore":
            out.append(swap_control(root, p.swap))
        if p.transparent_hugepages != "ignore":
            out.append(thp_control(root, p.transparent_hugepages))
        if p.pinning:
            out.append(CpusetControl(root, self.benchmark_cpus()))
        return out

    # --- sensors, counters, kernel log ----------------------------------------------
    def read_temperatures(self) -> dict[str, float]:
        return read_linux_temperatures(self.root)

    def throttle_counters(self) -> dict[str, int]:
        return read_throttle_counters(self.root)

    def kernel_log_position(self) -> int | None:
        return kmsg_position(self.root)

    def kernel_log_since(self, position: Any) -> tuple[list[str], bool]:
        return kmsg_since(self.root, int(position))

    def kernel_log_allow(self) -> list[str]:
        return DEFAULT_ALLOW + list(self.policy.kernel_log_allow)

    def nominal_hz(self) -> float | None:
        return self.policy.amperf_nominal_hz or facts.nominal_hz(self.root)

    def extra_snapshot(self) -> dict[str, Any]:
        freqs = {}
        for c in self.cpus():
            v = facts.read_or_none(self.root, f"{facts.CPU_DIR}/cpu{c}/cpufreq/scaling_cur_freq")
            if v is not None:
                freqs[f"cpu{c}"] = v
        return {"frequencies_khz": freqs}

    # --- running the benchmark ---------------------------------------------------------
    def launch_prefix(self, job_name: str) -> list[str]:
        """Default scheduler, nice -20 (as root), cgroup placement, then drop to the fresh user.

        chrt --other makes the default scheduler (SCHED_OTHER) explicit,
        whatever the supervisor inherited.  setpriv switches uid/gid/groups
        and execs; unlike sudo it leaves inherited fds (the results channel,
        fd 3) open.
        """
        argv = ["chrt", "--other", "0", "nice", "-n", str(self.policy.nice)]
        if self.policy.pinning:
            argv += [sys.executable, "-m", "supervisor.platforms.cgexec", str(self.root.path(BENCH_CGROUP)), "--"]
        if self.policy.benchmark_user:
            self.user.create()
            argv += self.user.switch_argv()
        if self.policy.counters == "off":
            argv += ["env", "COLDRUN_COUNTERS=off"]  # libkruntime then reports wall-clock only, on purpose
        return argv

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
