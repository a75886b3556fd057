"""CPU topology of a Linux machine: SMT siblings, core kinds, the benchmark CPUs.

Read through SystemRoot only.  Where each fact comes from:

- SMT siblings: cpuN/topology/core_cpus_list (thread_siblings_list before 5.x) and
  cpu/smt/{active,control} (Documentation/ABI/stable/sysfs-devices-system-cpu,
  Documentation/admin-guide/cputopology.rst).  Without either, SMT is unknown.
- Core kinds, first evidence found: Intel hybrid PMUs, /sys/devices/cpu_core/cpus and
  cpu_atom/cpus (tools/perf/Documentation/intel-hybrid.txt); the MIDR implementer and part
  of each processor in /proc/cpuinfo (arm64, arch/arm64/kernel/cpuinfo.c); cpuN/cpu_capacity,
  the scheduler's relative capacity (Documentation/ABI/testing/sysfs-devices-system-cpu).
  A maximum frequency alone never splits kinds: amd-pstate gives preferred cores of one
  kind different cpuinfo_max_freq.
- A kind's nominal frequency (what MPERF counts at): cpufreq base_frequency (intel_pstate),
  else acpi_cppc/nominal_freq (MHz, Documentation/admin-guide/acpi/cppc_sysfs.rst), else,
  on a machine of one kind, the "N GHz" that ends the CPU's model name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from supervisor.cpulist import format_cpulist, parse_cpulist
from supervisor.errors import PlatformError
from supervisor.platforms import linux_facts as facts
from supervisor.system import SystemRoot

CPU = facts.CPU_DIR
# Intel names its performance cores' PMU cpu_core (intel-hybrid.txt); used only when no
# capacity or frequency tells the kinds apart.
PERFORMANCE_PMU = "cpu_core"


def siblings(root: SystemRoot, cpu: int) -> set[int] | None:
    """cpu's hardware threads in its core (itself included), or None when the kernel does not say."""
    for name in ("core_cpus_list", "thread_siblings_list"):
        text = facts.read_or_none(root, f"{CPU}/cpu{cpu}/topology/{name}")
        if text:
            return parse_cpulist(text)
    return None


@dataclass(frozen=True)
class Smt:
    state: str | None      # "on", "off", None: unknown
    evidence: str

    def describe(self) -> str:
        return f"{self.state or 'unknown'} ({self.evidence})"


def smt(root: SystemRoot) -> Smt:
    """Threads per core among online CPUs first: they are what benchmarks share; then cpu/smt."""
    online = facts.online_cpus(root)
    per_core = [s & set(online) for s in (siblings(root, c) for c in online) if s is not None]
    control = facts.read_or_none(root, f"{CPU}/smt/control")
    active = facts.read_or_none(root, f"{CPU}/smt/active")
    ctl = f", smt/control: {control}" if control else ""
    if per_core:
        most = max(len(s) for s in per_core)
        if most > 1:
            return Smt("on", f"{most} threads per core in cpuN/topology{ctl}")
        return Smt("off", f"one thread per core in cpuN/topology{ctl}")
    if active is not None:
        return Smt("on" if active == "1" else "off", f"smt/active: {active}{ctl}")
    return Smt(None, "no cpuN/topology sibling lists and no cpu/smt interface")


@dataclass(frozen=True)
class CoreKind:
    name: str
    cpus: frozenset[int]
    evidence: str
    capacity: int | None
    max_khz: int | None
    nominal_hz: float | None

    def speed(self) -> tuple:
        return (self.capacity or 0, self.max_khz or 0, self.name == PERFORMANCE_PMU, len(self.cpus))

    def as_dict(self) -> dict:
        return {"cpus": format_cpulist(set(self.cpus)), "evidence": self.evidence, "capacity": self.capacity,
                "max_khz": self.max_khz, "nominal_hz": self.nominal_hz}


def _int(root: SystemRoot, path: str) -> int | None:
    text = facts.read_or_none(root, path)
    return int(text) if text and text.isdigit() else None


def _groups(root: SystemRoot, online: list[int]) -> tuple[dict[str, set[int]], str]:
    """Kind name -> online CPUs, and where the split comes from."""
    pmus: dict[str, set[int]] = {}
    for path in root.glob("/sys/devices/cpu_*/cpus"):
        name = path.split("/")[-2]
        cpus = parse_cpulist(facts.read_or_none(root, path) or "") & set(online)
        if cpus:
            pmus[name] = cpus
    if len(pmus) > 1:
        return pmus, "hybrid PMUs /sys/devices/cpu_*/cpus"
    midr: dict[str, set[int]] = {}
    for block in facts.cpuinfo_fields(root):
        if "CPU part" in block and block.get("processor", "").isdigit():
            name = f"arm-{block.get('CPU implementer', '0x00')}-{block['CPU part']}"
            midr.setdefault(name, set()).add(int(block["processor"]))
    midr = {k: v & set(online) for k, v in midr.items() if v & set(online)}
    if len(midr) > 1:
        return midr, "MIDR implementer/part in /proc/cpuinfo"
    capacity: dict[str, set[int]] = {}
    for c in online:
        cap = _int(root, f"{CPU}/cpu{c}/cpu_capacity")
        if cap is not None:
            capacity.setdefault(f"capacity-{cap}", set()).add(c)
    if len(capacity) > 1:
        return capacity, "cpuN/cpu_capacity"
    return {"all": set(online)}, "one kind: no hybrid PMUs, one MIDR part, one cpu_capacity"


def _nominal_hz(root: SystemRoot, cpus: set[int], only_kind: bool) -> float | None:
    values = set()
    for c in cpus:
        khz = _int(root, f"{CPU}/cpu{c}/cpufreq/base_frequency")
        mhz = _int(root, f"{CPU}/cpu{c}/acpi_cppc/nominal_freq")
        if khz:
            values.add(khz * 1000.0)
        elif mhz:
            values.add(mhz * 1e6)
    if len(values) == 1:
        return values.pop()
    if values:
        return None  # CPUs of one kind disagree: no single nominal rate
    m = re.search(r"([\d.]+)\s*GHz\s*$", facts.cpu_model(root))   # "... @ 3.20GHz", NetBurst's "CPU 3.00GHz"
    return float(m.group(1)) * 1e9 if m and only_kind else None


def core_kinds(root: SystemRoot) -> list[CoreKind]:
    """Every kind of core among the online CPUs, fastest first."""
    online = facts.online_cpus(root)
    groups, evidence = _groups(root, online)
    kinds = []
    for name, cpus in groups.items():
        caps = [v for v in (_int(root, f"{CPU}/cpu{c}/cpu_capacity") for c in cpus) if v is not None]
        maxes = [v for v in (_int(root, f"{CPU}/cpu{c}/cpufreq/cpuinfo_max_freq") for c in cpus) if v is not None]
        kinds.append(CoreKind(name, frozenset(cpus), evidence, max(caps) if caps else None,
                              max(maxes) if maxes else None, _nominal_hz(root, cpus, len(groups) == 1)))
    return sorted(kinds, key=CoreKind.speed, reverse=True)


def kind_of(kinds: list[CoreKind]) -> dict[int, str]:
    return {c: k.name for k in kinds for c in k.cpus}


def housekeeping(root: SystemRoot) -> set[int]:
    """The first online CPU (the supervisor's and the system's) with its SMT siblings."""
    first = facts.online_cpus(root)[0]
    return {first} | (siblings(root, first) or set())


def is_cpulist(choice: str) -> bool:
    try:
        parse_cpulist(choice)
    except ValueError:
        return False
    return True


def benchmark_cpus(root: SystemRoot, choice: str | None) -> set[int]:
    """The CPUs benchmarks run on: the policy's list or kind, else the fastest kind, in both
    cases without the housekeeping CPU and its SMT siblings (all online CPUs on a machine
    that has nothing else)."""
    if choice and is_cpulist(choice):
        return parse_cpulist(choice)
    kinds = core_kinds(root)
    if choice:
        chosen = [k for k in kinds if k.name == choice]
        if not chosen:
            raise PlatformError(f"benchmark_cpus = {choice!r} in [platform]: this machine has no core kind of that "
                                f"name (kinds: {', '.join(k.name for k in kinds)}); name one, or give a cpu list")
        kinds = chosen
    spare = housekeeping(root)
    for kind in kinds:
        if kind.cpus - spare:
            return set(kind.cpus - spare)
    online = facts.online_cpus(root)
    if choice:
        return set(kinds[0].cpus)
    return set(online) - spare or set(online[1:]) or set(online)


def one_kind(root: SystemRoot, cpus: list[int]) -> list[int]:
    """cpus narrowed to the fastest kind among them, so a pair's sides run on equal cores."""
    for kind in core_kinds(root):
        same = [c for c in cpus if c in kind.cpus]
        if len(same) >= 2:
            return same
    return cpus


def kind_nominal_hz(root: SystemRoot, cpus: set[int]) -> float | None:
    """The nominal rate of the kind all of cpus belong to; None when they span kinds or it is unknown."""
    for kind in core_kinds(root):
        if cpus and cpus <= kind.cpus:
            return kind.nominal_hz
    return None
