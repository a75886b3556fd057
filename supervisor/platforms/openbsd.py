"""The OpenBSD platform: hw.perfpolicy/hw.setperf, hw.smt, sysctl hw.sensors, malloc options, dmesg,
and the wait for /etc/rc and reorder_kernel (KARL) before anything is applied."""

from __future__ import annotations

import os
import re
from typing import Any

from supervisor.errors import PlatformError
from supervisor.platforms.audit import VOLATILE, coldrun_version, digest_lines
from supervisor.platforms.controls import CheckControl, Control, ControlReport, ControlSeams, select
from supervisor.platforms.kernel_log import OPENBSD_ALLOW, dmesg_new_lines
from supervisor.platforms.base import LaunchPrefix
from supervisor.platforms.unix import UnixPlatform
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import Commands
from supervisor.state.undo import UndoLog

SENSOR_LINE = re.compile(r"^hw\.sensors\.(\S*\.temp\d+)=(-?[\d.]+) degC")
ANCHOR_LINES = 3

# What runs at boot after coldrun's rc.d script was started (src/etc/rc): rc itself (init runs
# `sh /etc/rc autoboot`, init(8)) goes on to rc.local, apmd, cron..., and ends with
# `/usr/libexec/reorder_kernel &`, a ksh script relinking the kernel (KARL) for minutes.
# pgrep(1) matches extended regular expressions against the whole argument list.
BOOT_SCRIPTS = (("/etc/rc", r"^(/bin/)?sh /etc/rc( autoboot)?$"),
                ("reorder_kernel", r"^(/bin/ksh )?/usr/libexec/reorder_kernel"))
# [platform] fields made of Linux's sysfs, /proc, cgroups, MSRs and perf events: nothing to
# apply or read on OpenBSD.  Set in the experiment file, they are refused; left at their
# defaults, `platform check` lists them as unused.
LINUX_ONLY = ("aslr", "governor", "energy_performance_preference", "msr_turbo", "intel_pstate", "tickless",
              "perf_max_sample_rate", "perf_cpu_time_max_percent", "overcommit_memory", "swap",
              "transparent_hugepages", "perf_event_paranoid", "pinning", "benchmark_cpus", "throttle_counters",
              "amperf", "amperf_ratio_bounds", "amperf_busy_fraction", "amperf_nominal_hz", "intel_perf_pct",
              "clocksource", "temperature_sensors", "timers")
BOOT_SCRIPTS_POLL = 5.0           # seconds between looks
BOOT_SCRIPTS_DEADLINE = 3600.0    # a relink takes minutes; an hour means something is stuck


def _sysctl(commands: Commands, name: str) -> str | None:
    r = commands.run(["sysctl", "-n", name])
    return r.stdout.strip() if r.ok else None


def _set(commands: Commands, control: str, name: str, value: str) -> None:
    r = commands.run(["sysctl", f"{name}={value}"])
    if not r.ok:
        raise PlatformError(f"{control}: sysctl {name}={value} failed: "
                            f"{(r.stderr or r.stdout).strip() or r.returncode}")


class PerfPolicyControl(Control):
    """hw.perfpolicy=high, so hw.setperf is 100 (what `apm -H` asks apmd for), as in the paper.

    Set with sysctl(8) itself: apm(8) only asks apmd, which rc starts after
    coldrun (a second apmd), and the apply waits for rc to finish first.
    sysctl(2): hw.setperf is writable only while hw.perfpolicy is "manual",
    so a manual original is restored policy first, then its level.
    """

    name = "apm_performance"

    def wanted(self) -> str:
        return "hw.perfpolicy=high, hw.setperf=100"

    def read(self) -> str | None:
        policy = _sysctl(self.commands, "hw.perfpolicy")
        setperf = _sysctl(self.commands, "hw.setperf")
        if policy is None or setperf is None:
            return None
        return f"hw.perfpolicy={policy}, hw.setperf={setperf}"

    def satisfied(self, found: str | None) -> bool:
        # manual at 100 is the same P-state as high (apm(8) shows both as "manual").
        return found in (self.wanted(), "hw.perfpolicy=manual, hw.setperf=100")

    def unavailable_fix(self) -> str:
        return ("hw.perfpolicy/hw.setperf are missing (no cpu frequency driver attached, see dmesg), "
                "or set apm_performance = \"ignore\" in [platform]")

    def fix(self, found: str | None) -> str:
        return "hw.perfpolicy=high did not give hw.setperf=100; check the BIOS power settings (dmesg: cpu0 speeds)"

    def apply(self, undo: UndoLog) -> None:
        policy = _sysctl(self.commands, "hw.perfpolicy") or "auto"
        if policy == "manual":   # replayed newest first: the policy, then the level it allows to be written
            setperf = _sysctl(self.commands, "hw.setperf")
            undo.record(self.name, "hw.setperf", {"action": "run", "argv": ["sysctl", f"hw.setperf={setperf}"]})
        undo.record(self.name, "hw.perfpolicy", {"action": "run", "argv": ["sysctl", f"hw.perfpolicy={policy}"]})
        _set(self.commands, self.name, "hw.perfpolicy", "high")


class SmtControl(Control):
    """hw.smt (sysctl(2)): 1 schedules processes on SMT sibling threads, 0 (OpenBSD's default) does not."""

    name = "smt"
    unavailable_text = ("hw.smt is missing: this kernel has no SMT switch (not amd64/i386?); "
                        "set smt = \"ignore\" in [platform]")

    def wanted(self) -> str:
        return "hw.smt=0"

    def read(self) -> str | None:
        value = _sysctl(self.commands, "hw.smt")
        return None if value is None else f"hw.smt={value}"

    def apply(self, undo: UndoLog) -> None:
        undo.record(self.name, "hw.smt", {"action": "run", "argv": ["sysctl", f"{self.read()}"]})
        _set(self.commands, self.name, "hw.smt", "0")


class TurboCheck(CheckControl):
    """OpenBSD has no turbo switch: hw.setperf=100 (high, or auto under load) selects the fastest P-state,
    which on Intel SpeedStep is the turbo one where the firmware offers it (dmesg: the first speed, base+1 MHz)."""

    name = "turbo"
    fix_text = ('OpenBSD cannot switch turbo off (hw.setperf=100 selects the turbo P-state): turn it off in '
                'the BIOS, then set turbo = "ignore" in [platform]')

    def read(self) -> str:
        return "on where the firmware offers it (no OS switch)"

    def ok(self, found: str) -> bool:
        return self.wanted() == "on"


class OpenBSDPlatform(UnixPlatform):
    name = "openbsd"
    os_name = "openbsd"

    boot_scripts = "not looked at"   # what apply_and_verify waited for; in every record's platform_before

    def controls(self) -> list[Control]:
        return select(OPENBSD_CONTROLS, ControlSeams(self.root, self.commands, self.policy))

    def apply_and_verify(self) -> list[ControlReport]:
        # First let rc finish: it starts apmd (which may set its own hw.perfpolicy) after
        # coldrun, and its last act, reorder_kernel, would relink during the execution.
        report = self.wait_for_boot_scripts()
        self.log.info("platform control", **report.as_dict())
        return [report, *super().apply_and_verify()]

    def wait_for_boot_scripts(self) -> ControlReport:
        started = self.clock.monotonic()
        waited_for: list[str] = []
        while True:
            running = [name for name, pattern in BOOT_SCRIPTS if self._running(pattern)]
            waited_for += [name for name in running if name not in waited_for]
            if not running:
                break
            waited = self.clock.monotonic() - started
            if waited >= BOOT_SCRIPTS_DEADLINE:
                raise PlatformError(f"boot_scripts: {' and '.join(running)} still running after {waited:.0f} s; "
                                    "see /usr/share/relink/kernel/*/relink.log and the console")
            self.clock.sleep(BOOT_SCRIPTS_POLL)
        waited = self.clock.monotonic() - started
        self.boot_scripts = (f"finished after waiting {waited:.0f} s for {' and '.join(waited_for)}"
                             if waited_for else "finished")
        return ControlReport("boot_scripts", "/etc/rc and reorder_kernel (KARL) finished", self.boot_scripts,
                             True, "waited" if waited_for else "none")

    def _running(self, pattern: str) -> bool:
        r = self.commands.run(["pgrep", "-f", pattern])
        if r.returncode not in (0, 1):     # pgrep(1): 0 matched, 1 none, more: error
            raise PlatformError(f"boot_scripts: pgrep failed ({(r.stderr or '').strip() or r.returncode}); "
                                "cannot tell whether reorder_kernel is still relinking")
        return r.returncode == 0

    def extra_snapshot(self) -> dict[str, Any]:
        return {"boot_scripts": self.boot_scripts}

    def extra_checks(self) -> list[ControlReport]:
        return super().extra_checks() + linux_only_reports(self.policy)

    def is_virtual(self) -> tuple[bool, str]:
        dmesg = self._dmesg() or ""
        m = re.search(r"^virtio\d+ at .*$", dmesg, re.M)
        if m:
            return True, f"dmesg: {m.group(0)}"
        vendor = f"{_sysctl(self.commands, 'hw.vendor') or ''} {_sysctl(self.commands, 'hw.product') or ''}"
        if re.search(r"QEMU|KVM|VMware|VirtualBox|Xen|Bochs|OpenBSD VMM", vendor):
            return True, f"hw.vendor/product: {vendor.strip()}"
        return False, "no virtio devices or hypervisor vendor"

    def read_temperatures(self) -> dict[str, float]:
        r = self.commands.run(["sysctl", "hw.sensors"])
        temps = {}
        if r.ok:
            for line in r.stdout.splitlines():
                m = SENSOR_LINE.match(line)
                if m:
                    temps[m.group(1)] = float(m.group(2))
        return temps

    def _no_sensor_fix(self) -> str:
        return ("no temperature sensors in sysctl hw.sensors; check that the sensor drivers attached (dmesg) "
                "or set temperatures = \"ignore\" in [platform]")

    def _dmesg(self) -> str | None:
        r = self.commands.run(["dmesg"])
        return r.stdout if r.ok else None

    def kernel_log_position(self) -> list[str] | None:
        text = self._dmesg()
        return None if text is None else text.splitlines()[-ANCHOR_LINES:]

    def kernel_log_since(self, position: Any) -> tuple[list[str], bool]:
        return dmesg_new_lines("\n".join(position), self._dmesg() or "")

    def kernel_log_allow(self) -> list[str]:
        return OPENBSD_ALLOW + list(self.policy.kernel_log_allow)

    def launch_prefix(self, job_name: str) -> LaunchPrefix:
        prefix = LaunchPrefix(["nice", "-n", str(self.policy.nice)])
        if self.policy.benchmark_user:
            self.user.create()
            drop = self.user.switch()
            prefix.wrappers += drop.wrappers   # runas: doas/su would close the results channel (fd 3)
            prefix.user = drop.user
        if self.policy.malloc_options != "ignore":
            prefix.env["MALLOC_OPTIONS"] = self.policy.malloc_options
        return prefix

    def audit(self) -> dict[str, Any]:
        uname = self.commands.run(["uname", "-a"])
        pk = self.commands.run(["pkg_info", "-q"])
        dmesg = self._dmesg() or ""
        return {
            "uname": uname.stdout.strip() if uname.ok else "unknown",
            "kernel_version": _sysctl(self.commands, "kern.version") or "unknown",
            "cpu_model": _sysctl(self.commands, "hw.model") or "unknown",
            "cpu_count": _sysctl(self.commands, "hw.ncpuonline") or "unknown",
            "packages_sha256": digest_lines(pk.stdout) if pk.ok else f"unavailable ({pk.returncode})",
            "packages_count": len(pk.stdout.split()) if pk.ok else None,
            "coldrun_version": coldrun_version(),
            "virtual": self.is_virtual()[0],
            VOLATILE: {"dmesg_tail": dmesg.splitlines()[-50:]},
        }

    def reboot(self) -> None:
        self.log.info("rebooting", argv=["reboot"])
        r = self.commands.run(["reboot"])
        if not r.ok:
            raise PlatformError(f"reboot failed: {r.stderr.strip() or r.returncode}")


def _off_or_always_so(name: str, value: Any) -> bool:
    if name == "aslr":      # OpenBSD always randomises: only "off" would be ignored
        return value is True or value == "ignore"
    return value is None or value is False or value in ("ignore", "report")


def linux_only_reports(policy: PlatformPolicy) -> list[ControlReport]:
    """One refusal per Linux-only field the experiment sets (to anything but off), and one line for the rest."""
    reports = []
    for name in LINUX_ONLY:
        value = getattr(policy, name)
        if name in policy.model_fields_set and not _off_or_always_so(name, value):
            reports.append(ControlReport(
                name, "(Linux only)", f"{value} (no meaning on OpenBSD)", False, "fix needed",
                f'{name} has no meaning on OpenBSD; remove it from [platform] or set it to "ignore"', fatal=True))
    unused = [n for n in LINUX_ONLY if n not in policy.model_fields_set]
    if unused:
        reports.append(ControlReport("linux_only", "(report)", "defaults unused on OpenBSD: " + ", ".join(unused),
                                     True, "report"))
    return reports


class MallocConfCheck(CheckControl):
    """Nothing may override the benchmark's MALLOC_OPTIONS: no /etc/malloc.conf, no vm.malloc_conf."""

    name = "malloc_conf"
    fix_text = ("remove /etc/malloc.conf and any vm.malloc_conf line in /etc/sysctl.conf "
                "(then sysctl vm.malloc_conf=), or set malloc_options = \"ignore\" in [platform]")
    policy_field = "malloc_options"

    def wanted(self) -> str:
        return "no override"

    def read(self) -> str:
        found = []
        if os.path.lexists(self.root.path("/etc/malloc.conf")):  # a symlink whose target is the options
            found.append("/etc/malloc.conf exists")
        conf = _sysctl(self.commands, "vm.malloc_conf")
        if conf:
            found.append(f"vm.malloc_conf={conf}")
        return ", ".join(found) or "no override"


class CountersCheck(CheckControl):
    """counters = "require" cannot be met: libkruntime reads per-core counters only on Linux."""

    name = "counters"
    fix_text = 'per-core counters are only implemented on Linux; set counters = "if_available" in [platform]'
    left_out_by = ("if_available", "off")

    def wanted(self) -> str:
        return "cycles, aperf, mperf"

    def read(self) -> str:
        return "none (libkruntime reads per-core counters only on Linux)"

    def ok(self, found: str) -> bool:
        return False


# Every OpenBSD control, in the order apply_and_verify() enforces them (restore: reverse).
OPENBSD_CONTROLS: tuple[type[Control], ...] = (
    # Independent sysctls (no apmd: rc starts it after coldrun, and the apply waits
    # for rc to finish); the turbo check reads nothing the others change.
    SmtControl,
    PerfPolicyControl,
    TurboCheck,
    # Checks only, independent: the order is only the order of the report.
    MallocConfCheck,
    CountersCheck,
)
