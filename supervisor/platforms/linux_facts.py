"""Facts about a Linux machine, read through SystemRoot only (no commands)."""

from __future__ import annotations

import re
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


def benchmark_cpus(root: SystemRoot, cpulist: str | None) -> set[int]:
    """The pinning partition's CPUs: the policy's benchmark_cpus, else every online CPU but the first."""
    if cpulist:
        return parse_cpulist(cpulist)
    cpus = online_cpus(root)
    return set(cpus[1:]) if len(cpus) > 1 else set(cpus)


def online_cpus(root: SystemRoot) -> list[int]:
    text = read_or_none(root, f"{CPU_DIR}/online")
    if text:
        return sorted(parse_cpulist(text))
    found = []
    for p in root.glob(f"{CPU_DIR}/cpu[0-9]*"):
        m = re.fullmatch(r".*/cpu(\d+)", p)
        if m:
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


def cpu_model(root: SystemRoot) -> str:
    blocks = cpuinfo_fields(root)
    return blocks[0].get("model name", "unknown") if blocks else "unknown"


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
    virtual: bool
    evidence: str


def detect_virtualisation(root: SystemRoot) -> Virtualisation:
    """Virtual when the CPU says so (hypervisor flag) or firmware names a hypervisor."""
    if "hypervisor" in cpu_flags(root):
        hv = read_or_none(root, "/sys/hypervisor/type")
        return Virtualisation(True, f"cpu flag 'hypervisor'{f' ({hv})' if hv else ''}")
    for p in ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"):
        v = read_or_none(root, p) or ""
        if re.search(r"QEMU|KVM|VMware|VirtualBox|Xen|Bochs|Microsoft Corporation|Firecracker", v):
            return Virtualisation(True, f"{p} = {v}")
    return Virtualisation(False, "no hypervisor flag or hypervisor firmware name")


@dataclass(frozen=True)
class ScalingDriver:
    name: str          # "intel_pstate", "intel_cpufreq", "amd-pstate", "amd-pstate-epp", "acpi-cpufreq", "none"
    mode: str | None   # intel_pstate/amd_pstate status: "active", "passive", "guided", None

    def describe(self) -> str:
        return self.name if not self.mode else f"{self.name} ({self.mode})"


def scaling_driver(root: SystemRoot) -> ScalingDriver:
    cpus = online_cpus(root)
    name = None
    for c in cpus:
        name = read_or_none(root, f"{CPU_DIR}/cpu{c}/cpufreq/scaling_driver")
        if name:
            break
    if not name:
        return ScalingDriver("none", None)
    mode = None
    if name.startswith("intel_"):
        mode = read_or_none(root, f"{CPU_DIR}/intel_pstate/status")
    elif name.startswith("amd-pstate"):
        mode = read_or_none(root, f"{CPU_DIR}/amd_pstate/status")
    return ScalingDriver(name, mode)


def smt_state(root: SystemRoot) -> str | None:
    """"on"/"off" plus the control value, or None when the kernel has no SMT interface."""
    active = read_or_none(root, f"{CPU_DIR}/smt/active")
    control = read_or_none(root, f"{CPU_DIR}/smt/control")
    if active is None and control is None:
        return None
    state = "on" if active == "1" else "off"
    return f"{state} (control: {control})" if control else state


def swap_devices(root: SystemRoot) -> list[str] | None:
    text = read_or_none(root, "/proc/swaps")
    if text is None:
        return None
    return [line.split()[0] for line in text.splitlines()[1:] if line.strip()]


def nominal_hz(root: SystemRoot) -> float | None:
    """The CPU's nominal (base) frequency: what MPERF counts at."""
    for c in online_cpus(root):
        khz = read_or_none(root, f"{CPU_DIR}/cpu{c}/cpufreq/base_frequency")
        if khz and khz.isdigit():
            return int(khz) * 1000.0
        break
    m = re.search(r"@\s*([\d.]+)\s*GHz", cpu_model(root))
    if m:
        return float(m.group(1)) * 1e9
    return None
