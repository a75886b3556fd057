"""Facts about a Linux machine, read through SystemRoot only (no commands)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from supervisor.cpulist import parse_cpulist
from supervisor.system import SystemRoot

CPU_DIR = "/sys/devices/system/cpu"


def read_or_none(root: SystemRoot, path: str) -> str | None:
    try:
        return root.read_text(path).strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return None


def online_cpus(root: SystemRoot) -> list[int]:
    """cpu/online, else each cpuN directory whose cpuN/online is not "0" (the sysfs ABI,
    Documentation/ABI/testing/sysfs-devices-system-cpu: a CPU that cannot be hot-unplugged,
    often cpu0, has no online file and is online)."""
    text = read_or_none(root, f"{CPU_DIR}/online")
    if text:
        return sorted(parse_cpulist(text))
    found = []
    for p in root.glob(f"{CPU_DIR}/cpu[0-9]*"):
        m = re.fullmatch(r".*/cpu(\d+)", p)
        if m and read_or_none(root, f"{p}/online") != "0":
            found.append(int(m.group(1)))
    return sorted(found) or [0]


def cpuinfo_fields(root: SystemRoot) -> list[dict[str, str]]:
    """/proc/cpuinfo as one dict per processor block."""
    text = read_or_none(root, "/proc/cpuinfo") or ""
    blocks: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = {}
            continue
        key, _, value = line.partition(":")
        cur[key.strip()] = value.strip()
    if cur:
        blocks.append(cur)
    return blocks


def cpu_vendor(root: SystemRoot) -> str:
    blocks = cpuinfo_fields(root)
    return blocks[0].get("vendor_id", "unknown") if blocks else "unknown"


# x86 vendor_id values (arch/x86/kernel/cpu/*.c c_ident); cpuinfo_fields strips the padding.
X86_VENDORS = ("GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls", "Shanghai")


def is_x86(root: SystemRoot) -> bool:
    """x86 /proc/cpuinfo has vendor_id and a flags line (arm64: Features, POWER: cpu, s390: features)."""
    blocks = cpuinfo_fields(root)
    return bool(blocks) and "flags" in blocks[0] and blocks[0].get("vendor_id", "") in X86_VENDORS


def cpu_model(root: SystemRoot) -> str:
    """The CPU's name from the field each architecture's /proc/cpuinfo uses, else "unknown".

    x86: "model name"; POWER: "cpu" (arch/powerpc/kernel/setup-common.c); s390: the
    "machine = NNNN" type of "processor 0:" (arch/s390/kernel/processor.c); arm64: no name,
    so "CPU implementer/part" (the MIDR fields, arch/arm64/kernel/cpuinfo.c), counted per kind."""
    blocks = cpuinfo_fields(root)
    if not blocks:
        return "unknown"
    first = blocks[0]
    if first.get("model name"):
        return first["model name"]
    if first.get("cpu"):
        return first["cpu"]
    for b in blocks:
        for k, v in b.items():
            machine = re.search(r"machine\s*=\s*(\w+)", v) if re.fullmatch(r"processor \d+", k) else None
            if machine:
                return f"IBM Z machine type {machine.group(1)}"
    parts = Counter(f"implementer {b.get('CPU implementer', '?')} part {b['CPU part']}"
                    for b in blocks if "CPU part" in b)
    if parts:
        return "; ".join(f"{n} x {k}" if len(parts) > 1 else k for k, n in parts.items())
    return "unknown"


def microcode(root: SystemRoot) -> str:
    values = sorted({b.get("microcode", "") for b in cpuinfo_fields(root)} - {""})
    return ",".join(values) or "unknown"


def cpu_flags(root: SystemRoot) -> set[str]:
    blocks = cpuinfo_fields(root)
    return set(blocks[0].get("flags", "").split()) if blocks else set()


def kernel_release(root: SystemRoot) -> str:
    return read_or_none(root, "/proc/sys/kernel/osrelease") or "unknown"


def kernel_cmdline(root: SystemRoot) -> str:
    return read_or_none(root, "/proc/cmdline") or ""


def cmdline_params(cmdline: str) -> dict[str, str]:
    """Boot parameters before "--" (init's arguments follow it); flags map to ""."""
    params: dict[str, str] = {}
    for word in cmdline.split():
        if word == "--":
            break
        k, _, v = word.partition("=")
        params[k] = v
    return params


@dataclass(frozen=True)
class Virtualisation:
    virtual: bool | None   # None: nothing on this machine tells (no CPU flag, DMI or device tree)
    evidence: str


DMI_HYPERVISORS = r"QEMU|KVM|VMware|VirtualBox|Xen|Bochs|Microsoft Corporation|Firecracker|Parallels|BHYVE"


def detect_virtualisation(root: SystemRoot) -> Virtualisation:
    """Virtual when the CPU, the firmware or the platform says so, on every architecture.

    The evidence systemd's detect-virt reads (src/basic/virt.c): x86's hypervisor flag, DMI
    vendor names (also on arm64 UEFI machines), /sys/hypervisor/type, the device tree's
    hypervisor node (arm64, POWER guests) and a QEMU fw-cfg node; s390's /proc/sysinfo.  Also
    POWER's "platform : pSeries" (a PAPR partition under PowerVM or KVM; bare metal says
    PowerNV) and every s390 system, which runs in an LPAR at least."""
    if "hypervisor" in cpu_flags(root):
        hv = read_or_none(root, "/sys/hypervisor/type")
        return Virtualisation(True, f"cpu flag 'hypervisor'{f' ({hv})' if hv else ''}")
    for p in ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"):
        v = read_or_none(root, p) or ""
        if re.search(DMI_HYPERVISORS, v):
            return Virtualisation(True, f"{p} = {v}")
    hv = read_or_none(root, "/sys/hypervisor/type")
    if hv:
        return Virtualisation(True, f"/sys/hypervisor/type = {hv}")
    compat = read_or_none(root, "/proc/device-tree/hypervisor/compatible")
    if compat is not None:
        return Virtualisation(True, f"/proc/device-tree/hypervisor/compatible = {compat.strip(chr(0))}")
    if root.glob("/proc/device-tree/fw-cfg*"):
        return Virtualisation(True, "/proc/device-tree has a QEMU fw-cfg node")
    blocks = cpuinfo_fields(root)
    platform = next((b["platform"] for b in blocks if "platform" in b), None)
    if platform == "pSeries":
        return Virtualisation(True, "/proc/cpuinfo platform : pSeries (a PowerVM or KVM partition)")
    sysinfo = read_or_none(root, "/proc/sysinfo")
    if sysinfo is not None:
        vm = re.search(r"VM00 Control Program:\s*(.+)", sysinfo)
        if vm:
            return Virtualisation(True, f"/proc/sysinfo: {vm.group(1).strip()} guest")
        return Virtualisation(True, "/proc/sysinfo: s390 LPAR (PR/SM hypervisor)")
    if platform:
        return Virtualisation(False, f"/proc/cpuinfo platform : {platform}, no hypervisor node")
    if is_x86(root):
        return Virtualisation(False, "no hypervisor flag or hypervisor firmware name")
    if root.exists("/proc/device-tree") or root.exists("/sys/class/dmi/id/sys_vendor"):
        return Virtualisation(False, "no hypervisor node in the device tree or hypervisor firmware name")
    return Virtualisation(None, "no CPU hypervisor flag, DMI or device tree to tell; systemd-detect-virt may know")


@dataclass(frozen=True)
class ScalingDriver:
    name: str          # "intel_pstate", "intel_cpufreq", "amd-pstate", "amd-pstate-epp", "acpi-cpufreq", "none"
    mode: str | None   # intel_pstate/amd_pstate status: "active", "passive", "guided", None

    def describe(self) -> str:
        return self.name if not self.mode else f"{self.name} ({self.mode})"


def scaling_driver(root: SystemRoot) -> ScalingDriver:
    """The first online CPU's scaling_driver; else the driver's own status file
    (intel_pstate/status, amd_pstate/status: "off" when not driving, per
    Documentation/admin-guide/pm/intel_pstate.rst and amd-pstate.rst)."""
    name = None
    for c in online_cpus(root):
        name = read_or_none(root, f"{CPU_DIR}/cpu{c}/cpufreq/scaling_driver")
        if name:
            break
    intel = read_or_none(root, f"{CPU_DIR}/intel_pstate/status")
    amd = read_or_none(root, f"{CPU_DIR}/amd_pstate/status")
    if not name:
        if intel in ("active", "passive"):
            return ScalingDriver("intel_pstate" if intel == "active" else "intel_cpufreq", intel)
        if amd in ("active", "passive", "guided"):
            return ScalingDriver("amd-pstate-epp" if amd == "active" else "amd-pstate", amd)
        return ScalingDriver("none", None)
    mode = None
    if name.startswith("intel_"):
        mode = intel
    elif name.startswith("amd-pstate"):
        mode = amd
    return ScalingDriver(name, mode)


def cpus_without_cpufreq(root: SystemRoot) -> list[int]:
    return [c for c in online_cpus(root) if not root.exists(f"{CPU_DIR}/cpu{c}/cpufreq/scaling_driver")]


def swap_devices(root: SystemRoot) -> list[str] | None:
    text = read_or_none(root, "/proc/swaps")
    if text is None:
        return None
    return [line.split()[0] for line in text.splitlines()[1:] if line.strip()]


CLOCKSOURCE_DIR = "/sys/devices/system/clocksource/clocksource0"


@dataclass(frozen=True)
class Clocksource:
    current: str | None          # None: no clocksource sysfs (unknown)
    available: tuple[str, ...]

    def describe(self) -> str:
        if self.current is None:
            return "unknown"
        return f"{self.current} (available: {' '.join(self.available) or 'none'})"


def clocksource(root: SystemRoot) -> Clocksource:
    """current_clocksource / available_clocksource (Documentation/ABI/testing/sysfs-devices-system-clocksource)."""
    current = read_or_none(root, f"{CLOCKSOURCE_DIR}/current_clocksource")
    available = tuple((read_or_none(root, f"{CLOCKSOURCE_DIR}/available_clocksource") or "").split())
    return Clocksource(current, available)


def tsc_invariant(root: SystemRoot) -> bool:
    """The TSC ticks at one rate in every P- and C-state: the CPU's constant_tsc and nonstop_tsc flags."""
    return is_x86(root) and {"constant_tsc", "nonstop_tsc"} <= cpu_flags(root)


DEFAULT_CGROUP2 = "/sys/fs/cgroup"


def parse_cgroup2_mount(mountinfo: str) -> str | None:
    """The first cgroup2 mount point in /proc/self/mountinfo text (proc(5): the filesystem type
    follows the " - " separator; the mount point is field 5, spaces escaped as \\040)."""
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        if sep and tail.split()[:1] == ["cgroup2"]:
            return head.split()[4].replace("\\040", " ")
    return None


def cgroup2_mount(root: SystemRoot) -> str | None:
    """Where cgroup v2 is mounted: /sys/fs/cgroup, /sys/fs/cgroup/unified on hybrid hosts, or
    wherever an administrator put it; without mountinfo, /sys/fs/cgroup when it is cgroup v2."""
    text = read_or_none(root, "/proc/self/mountinfo")
    if text is not None:
        return parse_cgroup2_mount(text)
    return DEFAULT_CGROUP2 if root.exists(f"{DEFAULT_CGROUP2}/cgroup.controllers") else None
