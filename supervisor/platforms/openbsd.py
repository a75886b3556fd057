"""The OpenBSD platform: apm/hw.setperf, sysctl hw.sensors, malloc options, dmesg."""

from __future__ import annotations

import os
import re
from typing import Any

from supervisor.errors import PlatformError
from supervisor.platforms.audit import VOLATILE, coldrun_version, digest_lines
from supervisor.platforms.controls import CheckControl, Control, Machine, select
from supervisor.platforms.kernel_log import OPENBSD_ALLOW, dmesg_new_lines
from supervisor.platforms.base import LaunchPrefix
from supervisor.platforms.unix import UnixPlatform
from supervisor.system import Commands
from supervisor.state.undo import UndoLog

SENSOR_LINE = re.compile(r"^hw\.sensors\.(\S*\.temp\d+)=(-?[\d.]+) degC")
ANCHOR_LINES = 3


def _sysctl(commands: Commands, name: str) -> str | None:
    r = commands.run(["sysctl", "-n", name])
    return r.stdout.strip() if r.ok else None


class ApmdControl(Control):
    """apmd must run for apm -H to work (Krun raced it at boot)."""

    name = "apmd"
    policy_field = "apm_performance"

    def wanted(self) -> str:
        return "running"

    def read(self) -> str | None:
        r = self.commands.run(["rcctl", "check", "apmd"])
        if r.returncode == 127:
            return None
        return "running" if r.ok else "stopped"

    def apply(self, undo: UndoLog) -> None:
        undo.record(self.name, "rcctl:apmd", {"action": "run", "argv": ["rcctl", "stop", "apmd"]})
        r = self.commands.run(["rcctl", "-f", "start", "apmd"])
        if not r.ok:
            raise PlatformError(f"apmd: rcctl start apmd failed: {r.stderr.strip() or r.returncode}; "
                                "enable it with rcctl enable apmd")


class ApmControl(Control):
    """Performance mode "manual" at hw.setperf=100 (apm -H), as in the paper."""

    name = "apm_performance"

    def wanted(self) -> str:
        return "manual, hw.setperf=100"

    def _mode(self) -> str | None:
        r = self.commands.run(["apm"])
        if not r.ok:
            return None
        for line in r.stdout.splitlines():
            if line.startswith("Performance adjustment mode:"):
                return line.split(":", 1)[1].split()[0]
        return None

    def read(self) -> str | None:
        mode = self._mode()
        setperf = _sysctl(self.commands, "hw.setperf")
        if mode is None or setperf is None:
            return None
        return f"{mode}, hw.setperf={setperf}"

    def unavailable_fix(self) -> str:
        return ("cannot read apm or hw.setperf (is apmd running? rcctl enable apmd; rcctl start apmd), "
                "or set apm_performance = \"ignore\" in [platform]")

    def fix(self, found: str | None) -> str:
        return "apm -H did not give hw.setperf=100; check the BIOS power settings and apmd flags in rc.conf.local"

    def apply(self, undo: UndoLog) -> None:
        policy = _sysctl(self.commands, "hw.perfpolicy") or "auto"
        setperf = _sysctl(self.commands, "hw.setperf") or "100"
        back = {"auto": ["apm", "-A"], "high": ["apm", "-H"]}.get(policy, ["sysctl", f"hw.setperf={setperf}"])
        undo.record(self.name, "hw.perfpolicy", {"action": "run", "argv": back})
        r = self.commands.run(["apm", "-H"])
        if not r.ok:
            raise PlatformError(f"apm_performance: apm -H failed: {r.stderr.strip() or r.returncode}")


class OpenBSDPlatform(UnixPlatform):
    name = "openbsd"
    os_name = "openbsd"

    def controls(self) -> list[Control]:
        return select(OPENBSD_CONTROLS, Machine(self.root, self.commands, self.policy))

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
    # apmd before apm: apm -H only asks apmd, so apmd must run first (Krun started it
    # first and raced it at boot); restore (newest first) then runs apm -A while apmd
    # still runs, and stops apmd last.
    ApmdControl,
    ApmControl,
    # Checks only, independent: the order is only the order of the report.
    MallocConfCheck,
    CountersCheck,
)
