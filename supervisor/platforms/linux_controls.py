"""Linux controls: CPU frequency, kernel settings, boot-time checks."""

from __future__ import annotations

import gzip
from dataclasses import dataclass

from supervisor.errors import PlatformError
from supervisor.platforms.controls import (CheckControl, Control, ControlReport, ReportControl,
                                           SysfsControl, bracketed, restorable)
from supervisor.platforms.cpulist import format_cpulist, parse_cpulist
from supervisor.platforms import linux_facts as facts
from supervisor.system import Commands, SystemRoot
from supervisor.state.undo import UndoLog

CPU = facts.CPU_DIR
GRUB_FIX = ("add {param} to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run update-grub "
            "and reboot")
IA32_MISC_ENABLE = "0x1a0"
TURBO_DISABLE_BIT = 1 << 38


# --- CPU frequency -----------------------------------------------------------

class GovernorControl(SysfsControl):
    def __init__(self, root: SystemRoot, cpus: list[int], wanted: str):
        super().__init__("governor", root, [f"{CPU}/cpu{c}/cpufreq/scaling_governor" for c in cpus], wanted,
                         unavailable_text="no cpufreq governor on this machine (virtual, or no cpufreq "
                                          "driver loaded); set governor = \"ignore\" in [platform]")
        self.cpus = cpus

    def _not_offered(self) -> str | None:
        avail = facts.read_or_none(self.root, f"{CPU}/cpu{self.cpus[0]}/cpufreq/scaling_available_governors")
        if avail is not None and self.wanted() not in avail.split():
            return (f"the scaling driver offers no {self.wanted()!r} governor (available: {avail}); "
                    "choose one of those for governor in [platform]")
        return None

    def inspect(self) -> ControlReport:
        report = super().inspect()
        problem = self._not_offered() if report.action == "would change" else None
        if problem:  # the kernel would refuse the write: say so before trying
            report.action, report.fix, report.fatal = "fix needed", problem, True
        return report

    def fix(self, found: str | None) -> str:
        return self._not_offered() or super().fix(found)


class EppControl(SysfsControl):
    """Energy-performance preference, only where the driver has one."""

    def __init__(self, root: SystemRoot, cpus: list[int], wanted: str):
        paths = [f"{CPU}/cpu{c}/cpufreq/energy_performance_preference" for c in cpus]
        super().__init__("energy_performance_preference", root, paths, wanted, required=False)

    def read(self) -> str | None:
        if not self.paths or not self.root.exists(self.paths[0]):
            return None
        return super().read()


class TurboControl(Control):
    """Turbo/boost on or off, by whichever switch this machine has.

    Order of preference: intel_pstate/no_turbo; cpufreq/boost (acpi-cpufreq,
    amd-pstate passive/guided); per-policy boost (amd-pstate active, newer
    kernels); IA32_MISC_ENABLE bit 38 through rdmsr/wrmsr on Intel.  Values
    are reported as "on"/"off" per core or policy.
    """

    name = "turbo"

    def __init__(self, root: SystemRoot, commands: Commands, cpus: list[int], wanted: str,
                 allow_msr: bool):
        self.root = root
        self.commands = commands
        self.cpus = cpus
        self._wanted = wanted
        self.allow_msr = allow_msr
        self.vendor = facts.cpu_vendor(root)
        self.flags = facts.cpu_flags(root)
        self.virtual = facts.detect_virtualisation(root).virtual

    def wanted(self) -> str:
        return self._wanted

    def mechanism(self) -> str | None:
        if self.root.exists(f"{CPU}/intel_pstate/no_turbo"):
            return "intel_pstate/no_turbo"
        if self.root.exists(f"{CPU}/cpufreq/boost"):
            return "cpufreq/boost"
        if self.root.glob(f"{CPU}/cpufreq/policy*/boost"):
            return "policy/boost"
        if self.vendor == "GenuineIntel" and self.allow_msr and not self.virtual:
            return "msr"
        return None

    def _cpu_has_turbo(self) -> bool:
        # CPUID leaf 6 EAX bit 1 ("ida") on Intel, core performance boost ("cpb") on AMD.
        return bool({"ida", "cpb"} & self.flags)

    def _msr_values(self) -> dict[int, int] | None:
        values = {}
        for c in self.cpus:
            r = self.commands.run(["rdmsr", "-p", str(c), IA32_MISC_ENABLE])
            if not r.ok:
                return None
            values[c] = int(r.stdout.strip(), 16)
        return values

    def read(self) -> str | None:
        mech = self.mechanism()
        if mech == "intel_pstate/no_turbo":
            v = facts.read_or_none(self.root, f"{CPU}/intel_pstate/no_turbo")
            return None if v is None else ("off" if v == "1" else "on")
        if mech == "cpufreq/boost":
            v = facts.read_or_none(self.root, f"{CPU}/cpufreq/boost")
            return None if v is None else ("off" if v == "0" else "on")
        if mech == "policy/boost":
            vals = {p.split("/")[-2]: ("off" if facts.read_or_none(self.root, p) == "0" else "on")
                    for p in self.root.glob(f"{CPU}/cpufreq/policy*/boost")}
            distinct = set(vals.values())
            return distinct.pop() if len(distinct) == 1 else " ".join(f"{k}={v}" for k, v in vals.items())
        if self.virtual:
            return None  # the host decides; a guest can neither see nor change it
        if not self._cpu_has_turbo():
            return "off (this CPU reports no turbo)"
        if mech == "msr":
            values = self._msr_values()
            if values is None:
                return None
            per_core = {c: ("off" if v & TURBO_DISABLE_BIT else "on") for c, v in values.items()}
            distinct = set(per_core.values())
            return distinct.pop() if len(distinct) == 1 else " ".join(f"cpu{c}={v}" for c, v in per_core.items())
        return None

    def satisfied(self, found: str | None) -> bool:
        if found is None:
            return False
        if found.startswith("off (this CPU"):
            return self._wanted == "off"
        return found == self._wanted

    @property
    def can_apply(self) -> bool:  # type: ignore[override]
        return self.mechanism() is not None

    def unavailable_fix(self) -> str:
        if self.mechanism() == "msr":
            return ("turbo via IA32_MISC_ENABLE needs msr-tools and the msr module: apt-get install msr-tools; "
                    "modprobe msr (or disable Turbo Boost in the BIOS setup)")
        if self.virtual:
            return "turbo cannot be controlled from a virtual machine; set turbo = \"ignore\" in [platform]"
        return ("no turbo switch found (no intel_pstate/no_turbo, cpufreq boost or Intel MSR): disable "
                "Turbo Boost / Core Performance Boost in the BIOS setup, then set turbo = \"ignore\"")

    def fix(self, found: str | None) -> str:
        return self.unavailable_fix()

    def apply(self, undo: UndoLog) -> None:
        mech = self.mechanism()
        off = self._wanted == "off"
        if mech == "intel_pstate/no_turbo":
            self._write(undo, f"{CPU}/intel_pstate/no_turbo", "1" if off else "0")
        elif mech == "cpufreq/boost":
            self._write(undo, f"{CPU}/cpufreq/boost", "0" if off else "1")
        elif mech == "policy/boost":
            for p in self.root.glob(f"{CPU}/cpufreq/policy*/boost"):
                self._write(undo, p, "0" if off else "1")
        elif mech == "msr":
            self.commands.run(["modprobe", "msr"])
            values = self._msr_values()
            if values is None:
                raise PlatformError("turbo: " + self.unavailable_fix())
            for c, v in values.items():
                new = v | TURBO_DISABLE_BIT if off else v & ~TURBO_DISABLE_BIT
                if new == v:
                    continue
                undo.record(self.name, f"msr:{IA32_MISC_ENABLE}:cpu{c}",
                            {"action": "run", "argv": ["wrmsr", "-p", str(c), IA32_MISC_ENABLE, hex(v)]})
                r = self.commands.run(["wrmsr", "-p", str(c), IA32_MISC_ENABLE, hex(new)])
                if not r.ok:
                    raise PlatformError(f"turbo: wrmsr on cpu{c} failed: {r.stderr.strip() or r.returncode}")
        else:
            raise PlatformError("turbo: " + self.unavailable_fix())

    def _write(self, undo: UndoLog, path: str, value: str) -> None:
        raw = self.root.read_text(path)
        if raw.strip() == value:
            return
        undo.record(self.name, path, {"action": "write", "path": path, "value": restorable(raw, raw.strip())})
        self.root.write_text(path, value + "\n")

    def inspect(self) -> ControlReport:
        report = super().inspect()
        mech = self.mechanism()
        if mech and report.action not in ("unavailable",):
            report.found = f"{report.found} [{mech}]"
        return report


def intel_pstate_check(root: SystemRoot) -> Control:
    def read() -> str:
        return facts.scaling_driver(root).describe()

    return CheckControl(
        "intel_pstate", "not the active intel_pstate driver", read,
        ok=lambda found: not found.startswith("intel_pstate"),
        fix_text="intel_pstate is driving the CPU: boot with intel_pstate=disable (" +
                 GRUB_FIX.format(param="intel_pstate=disable") + "), or set intel_pstate = \"allow\"")


# --- kernel --------------------------------------------------------------------

def kernel_config(root: SystemRoot) -> tuple[str, dict[str, str]] | None:
    """The running kernel's build config: (where it came from, {CONFIG_X: value})."""
    release = facts.kernel_release(root)
    candidates = [f"/boot/config-{release}", "/proc/config.gz"]
    for path in candidates:
        p = root.path(path)
        try:
            if path.endswith(".gz"):
                with gzip.open(p, "rt") as f:
                    text = f.read()
            else:
                text = p.read_text()
        except (OSError, EOFError):
            continue
        config: dict[str, str] = {}
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("CONFIG_"):
                k, _, v = line.partition("=")
                config[k] = v
            elif line.startswith("# CONFIG_") and line.endswith(" is not set"):
                config[line[2:-len(" is not set")]] = "n"
        return path, config
    return None


class TicklessCheck(Control):
    """CONFIG_NO_HZ_FULL=y and the benchmark cores in nohz_full= (check only)."""

    name = "tickless"
    can_apply = False

    def __init__(self, root: SystemRoot, bench_cpus: set[int], all_cpus: list[int]):
        self.root = root
        self.bench_cpus = bench_cpus
        self.all_cpus = all_cpus
        self._problem: str | None = None

    def wanted(self) -> str:
        return f"CONFIG_NO_HZ_FULL=y, nohz_full covers {format_cpulist(self.bench_cpus)}"

    def read(self) -> str | None:
        self._problem = None
        if len(self.all_cpus) < 2:
            return "single CPU: not applicable"
        found = kernel_config(self.root)
        if found is None:
            return None
        where, config = found
        full = config.get("CONFIG_NO_HZ_FULL", "n")
        full_all = config.get("CONFIG_NO_HZ_FULL_ALL")
        params = facts.cmdline_params(facts.kernel_cmdline(self.root))
        nohz = params.get("nohz_full")
        if full != "y":
            self._problem = (f"the running kernel is not built tickless ({where} has CONFIG_NO_HZ_FULL={full}); "
                             "install or build a kernel with CONFIG_NO_HZ_FULL=y")
            return f"CONFIG_NO_HZ_FULL={full}"
        if full_all == "y" and nohz is None:
            covered = set(self.all_cpus) - {0}
        elif nohz is None:
            covered = set()
        else:
            try:
                covered = parse_cpulist(nohz)
            except ValueError as e:
                self._problem = f"nohz_full= on /proc/cmdline is malformed: {e}"
                return f"CONFIG_NO_HZ_FULL=y, nohz_full={nohz}"
        missing = self.bench_cpus - covered
        if missing:
            want = format_cpulist(self.bench_cpus)
            self._problem = (f"nohz_full does not cover cpus {format_cpulist(missing)}: "
                             + GRUB_FIX.format(param=f"nohz_full={want}"))
        return f"CONFIG_NO_HZ_FULL=y, nohz_full={format_cpulist(covered) or '(absent)'}"

    def satisfied(self, found: str | None) -> bool:
        return found is not None and self._problem is None

    def fix(self, found: str | None) -> str:
        return (self._problem or "") + ' (or set tickless = "ignore" in [platform])'

    def unavailable_fix(self) -> str:
        return (f"cannot find the running kernel's config (/boot/config-{facts.kernel_release(self.root)} "
                "or /proc/config.gz); install it or set tickless = \"ignore\" in [platform]")


def sysctl_control(name: str, root: SystemRoot, proc_path: str, wanted: str) -> SysfsControl:
    key = proc_path.removeprefix("/proc/sys/").replace("/", ".")
    return SysfsControl(name, root, [proc_path], wanted,
                        unavailable_text=f"{proc_path} does not exist on this kernel; "
                                         f"set {name} = \"ignore\" in [platform]",
                        fix_text=f"could not set {key}; check that nothing else (sysctl.d, tuned) resets it")


def smt_control(root: SystemRoot, mode: str) -> Control:
    def read() -> str | None:
        return facts.smt_state(root)

    if mode == "report":
        return ReportControl("smt", read)
    return CheckControl(
        "smt", "off", lambda: read() or "off (no SMT interface)",
        ok=lambda found: found.startswith("off") or "notsupported" in found or "notimplemented" in found,
        fix_text="SMT is on: boot with nosmt (" + GRUB_FIX.format(param="nosmt") +
                 ") or turn off Hyper-Threading/SMT in the BIOS setup")


def swap_control(root: SystemRoot, mode: str) -> Control:
    def read() -> str | None:
        devs = facts.swap_devices(root)
        return None if devs is None else (" ".join(devs) or "none")

    if mode == "report":
        return ReportControl("swap", read)
    return CheckControl("swap", "none", read, ok=lambda found: found == "none",
                        fix_text="swap is active: run swapoff -a and comment out the swap lines in /etc/fstab")


def thp_control(root: SystemRoot, mode: str) -> Control:
    path = "/sys/kernel/mm/transparent_hugepage/enabled"
    if mode == "report":
        return ReportControl("transparent_hugepages",
                             lambda: None if not root.exists(path) else bracketed(root.read_text(path)))
    return SysfsControl("transparent_hugepages", root, [path], mode, parse=bracketed)


def overcommit_control(root: SystemRoot, mode: int | str) -> Control:
    path = "/proc/sys/vm/overcommit_memory"
    if mode == "report":
        return ReportControl("overcommit_memory", lambda: facts.read_or_none(root, path))
    return sysctl_control("overcommit_memory", root, path, str(mode))


# --- CPU isolation (cgroup v2 cpuset partition) --------------------------------

CGROUP = "/sys/fs/cgroup"
BENCH_CGROUP = f"{CGROUP}/coldrun.bench"


class CpusetControl(Control):
    """An exclusive cpuset partition for the benchmark cores (no cset needed).

    The partition ("root") takes its CPUs away from every other cgroup, so
    only processes placed in it (by supervisor.platforms.cgexec) run there.
    """

    name = "pinning"

    def __init__(self, root: SystemRoot, cpus: set[int]):
        self.root = root
        self.cpus = format_cpulist(cpus)

    def wanted(self) -> str:
        return f"{BENCH_CGROUP} cpus={self.cpus} partition=root"

    def _v2_with_cpuset(self) -> bool:
        ctl = facts.read_or_none(self.root, f"{CGROUP}/cgroup.controllers")
        return ctl is not None and "cpuset" in ctl.split()

    def read(self) -> str | None:
        if not self._v2_with_cpuset():
            return None
        if not self.root.exists(BENCH_CGROUP):
            return "absent"
        cpus = facts.read_or_none(self.root, f"{BENCH_CGROUP}/cpuset.cpus") or ""
        part = facts.read_or_none(self.root, f"{BENCH_CGROUP}/cpuset.cpus.partition") or ""
        return f"{BENCH_CGROUP} cpus={cpus} partition={part}"

    def unavailable_fix(self) -> str:
        return (f"pinning needs cgroup v2 with the cpuset controller ({CGROUP}/cgroup.controllers): boot with "
                "systemd.unified_cgroup_hierarchy=1, or set pinning = false in [platform]")

    def apply(self, undo: UndoLog) -> None:
        subtree = f"{CGROUP}/cgroup.subtree_control"
        if "cpuset" not in (facts.read_or_none(self.root, subtree) or "").split():
            undo.record(self.name, subtree, {"action": "write", "path": subtree, "value": "-cpuset"})
            self.root.write_text(subtree, "+cpuset")
        if not self.root.exists(BENCH_CGROUP):
            undo.record(self.name, BENCH_CGROUP, {"action": "rmdir", "path": BENCH_CGROUP,
                                                  "files": ["cpuset.cpus", "cpuset.cpus.partition"]})
            self.root.path(BENCH_CGROUP).mkdir()
        self.root.write_text(f"{BENCH_CGROUP}/cpuset.cpus", self.cpus)
        self.root.write_text(f"{BENCH_CGROUP}/cpuset.cpus.partition", "root")

    def satisfied(self, found: str | None) -> bool:
        return found == self.wanted()


# --- hardware counters (libkruntime's cycles, APERF, MPERF) ----------------------

EVENT_SOURCES = "/sys/bus/event_source/devices"
PARANOID = "/proc/sys/kernel/perf_event_paranoid"
MSR_MODULE_KEY = "module:msr"


@dataclass(frozen=True)
class CounterFacts:
    """What this machine offers for per-core counters (read through SystemRoot only)."""

    cycles_pmus: tuple[str, ...]   # hardware PMUs with a cpu-cycles event: "cpu", or "cpu_core"/"cpu_atom"
    msr_pmu: bool                  # the msr perf PMU (built into x86 kernels since 4.x)
    msr_events: tuple[str, ...]    # what it offers: aperf, mperf, tsc, ... (only tsc in most VMs)
    msr_device: bool               # /dev/cpu/<first cpu>/msr: the msr module is loaded
    aperfmperf: bool               # cpuinfo flag: the CPU has APERF/MPERF at all
    paranoid: int | None           # kernel.perf_event_paranoid; None: a kernel without perf events

    def describe(self) -> str:
        cycles = "+".join(self.cycles_pmus) + " PMU" if self.cycles_pmus else "no hardware PMU"
        msr = (f"msr PMU ({' '.join(self.msr_events) or 'no events'})" if self.msr_pmu else "no msr PMU")
        return (f"cycles: {cycles}; {msr}; /dev/cpu/N/msr {'present' if self.msr_device else 'absent'}; "
                f"aperfmperf flag: {'yes' if self.aperfmperf else 'no'}; "
                f"perf_event_paranoid={'absent' if self.paranoid is None else self.paranoid}")


def read_counter_facts(root: SystemRoot, cpus: list[int]) -> CounterFacts:
    cycles = []
    for pmu in root.glob(f"{EVENT_SOURCES}/cpu*"):
        # "cpu" on most machines, "cpu_core" + "cpu_atom" on hybrid Intel; a KVM guest without vPMU has none.
        if root.exists(f"{pmu}/type") and root.exists(f"{pmu}/events/cpu-cycles"):
            cycles.append(pmu.rsplit("/", 1)[-1])
    msr_dir = f"{EVENT_SOURCES}/msr"
    msr_pmu = root.exists(f"{msr_dir}/type")
    events = tuple(p.rsplit("/", 1)[-1] for p in root.glob(f"{msr_dir}/events/*")) if msr_pmu else ()
    first = cpus[0] if cpus else 0
    raw = facts.read_or_none(root, PARANOID)
    try:
        paranoid = int(raw) if raw is not None else None
    except ValueError:
        paranoid = None
    return CounterFacts(tuple(cycles), msr_pmu, events, root.exists(f"/dev/cpu/{first}/msr"),
                        "aperfmperf" in facts.cpu_flags(root), paranoid)


@dataclass
class CounterAccess:
    """Where each counter would come from for the benchmark process, and what stands in the way."""

    facts: CounterFacts
    sources: dict[str, str]
    missing: list[str]        # hardware or kernel lacks: coldrun cannot help
    load_msr_module: bool     # root-run benchmarks read APERF/MPERF through /dev/cpu/N/msr
    paranoid_to: int | None   # the value to write, when the current one keeps the user out
    blocked: str | None       # access the policy told coldrun not to give


class CounterAccessControl(Control):
    """Lets the benchmark process open libkruntime's counters for the experiment's duration.

    An unprivileged benchmark user can open per-CPU perf events only when
    kernel.perf_event_paranoid <= 0, and can never read /dev/cpu/N/msr
    (the kernel demands CAP_SYS_RAWIO, whatever the file mode): for it,
    APERF/MPERF must come from the msr perf PMU.  Benchmarks run as root
    (benchmark_user = false) need no sysctl but may need the msr module.
    Where the hardware lacks the counters (a VM without a vPMU) coldrun
    changes nothing: "if_available" reports wall-clock only, "require" fails.
    """

    name = "counters"

    def __init__(self, root: SystemRoot, commands: Commands, cpus: list[int], mode: str,
                 paranoid: int | str, unprivileged: bool):
        self.root = root
        self.commands = commands
        self.cpus = cpus
        self.mode = mode
        self.paranoid = paranoid
        self.unprivileged = unprivileged
        self.required = mode == "require"
        self.virtual = facts.detect_virtualisation(root).virtual

    def wanted(self) -> str:
        if not self.unprivileged:
            return "cycles+aperf+mperf as root"
        if self.paranoid == "ignore":
            return "user may open per-CPU events"
        return f"perf_event_paranoid<={self.paranoid}"

    def assess(self) -> CounterAccess:
        f = read_counter_facts(self.root, self.cpus)
        sources: dict[str, str] = {}
        missing: list[str] = []
        load_msr = False
        if f.paranoid is None:
            missing.append(f"the kernel has no perf events ({PARANOID} absent)")
        if f.cycles_pmus:
            sources["cycles"] = "+".join(f.cycles_pmus) + " PMU"
        else:
            missing.append(f"core cycles: no hardware PMU ({EVENT_SOURCES}/cpu has no cpu-cycles event)")
        if {"aperf", "mperf"} <= set(f.msr_events):
            sources["aperf/mperf"] = "msr PMU"
        elif not f.aperfmperf:
            missing.append("aperf/mperf: the CPU has no APERF/MPERF (no aperfmperf flag in /proc/cpuinfo)")
        elif self.unprivileged:
            pmu = "the msr perf PMU has no aperf/mperf events" if f.msr_pmu else "no msr perf PMU"
            missing.append(f"aperf/mperf: {pmu}, and /dev/cpu/N/msr needs CAP_SYS_RAWIO, which the "
                           "benchmark user lacks")
        else:
            sources["aperf/mperf"] = "/dev/cpu/N/msr"
            load_msr = not f.msr_device
        paranoid_to = None
        blocked = None
        if self.unprivileged and not missing and f.paranoid is not None:
            if self.paranoid != "ignore":
                if f.paranoid > int(self.paranoid):
                    paranoid_to = int(self.paranoid)
            elif f.paranoid > 0:
                blocked = (f"kernel.perf_event_paranoid is {f.paranoid}, so the benchmark user cannot open "
                           "per-CPU events: set perf_event_paranoid = 0 in [platform] (coldrun restores it "
                           "afterwards)")
        return CounterAccess(f, sources, missing, load_msr, paranoid_to, blocked)

    def _describe(self, a: CounterAccess) -> str:
        if a.missing:
            return "wall-clock only: " + "; ".join(a.missing)
        srcs = "; ".join(f"{k}: {v}" for k, v in a.sources.items())
        return f"perf_event_paranoid={a.facts.paranoid}; {srcs}"

    def read(self) -> str | None:
        return self._describe(self.assess())

    def satisfied(self, found: str | None) -> bool:
        a = self.assess()
        return not (a.missing or a.blocked or a.load_msr_module or a.paranoid_to is not None)

    def _missing_fix(self, a: CounterAccess) -> str:
        if self.virtual and not a.facts.cycles_pmus:
            hint = "this virtual machine has no PMU: enable the guest PMU (e.g. qemu -cpu host,pmu=on) or run on bare metal"
        elif any("CAP_SYS_RAWIO" in m for m in a.missing):
            hint = ("boot a kernel whose msr perf PMU has aperf and mperf events "
                    f"({EVENT_SOURCES}/msr/events), or set benchmark_user = false so benchmarks run as root "
                    "and read /dev/cpu/N/msr")
        else:
            hint = "run on a machine whose CPU and kernel provide them"
        fix = f"no per-core counters ({'; '.join(a.missing)}): {hint}"
        return fix + ('; or set counters = "if_available" in [platform]' if self.required else "")

    def inspect(self) -> ControlReport:
        a = self.assess()
        found = self._describe(a)
        if a.missing:
            fix = self._missing_fix(a)
            if self.required:
                return ControlReport(self.name, self.wanted(), found, False, "fix needed", fix, fatal=True)
            return ControlReport(self.name, self.wanted(), found, True, "unavailable", fix)
        if a.blocked:
            return ControlReport(self.name, self.wanted(), found, not self.required,
                                 "fix needed" if self.required else "unavailable", a.blocked, fatal=self.required)
        if a.load_msr_module or a.paranoid_to is not None:
            return ControlReport(self.name, self.wanted(), found, False, "would change")
        return ControlReport(self.name, self.wanted(), found, True, "none")

    def fix(self, found: str | None) -> str:
        a = self.assess()
        if a.load_msr_module:
            return "the msr module did not create /dev/cpu/N/msr: check modprobe msr (CONFIG_X86_MSR)"
        return f"{PARANOID} does not keep the value written; check that nothing else (sysctl.d, tuned) resets it"

    def apply(self, undo: UndoLog) -> None:
        a = self.assess()
        if a.load_msr_module:
            # Recorded first: a crash right after modprobe still unloads it at restore.
            undo.record(self.name, MSR_MODULE_KEY, {"action": "run", "argv": ["modprobe", "-r", "msr"]})
            r = self.commands.run(["modprobe", "msr"])
            if not r.ok:
                raise PlatformError(f"counters: modprobe msr failed: {r.stderr.strip() or r.returncode}; "
                                    "install the msr module or set counters = \"if_available\"")
        if a.paranoid_to is not None:
            raw = self.root.read_text(PARANOID)
            undo.record(self.name, PARANOID, {"action": "write", "path": PARANOID,
                                              "value": restorable(raw, raw.strip())})
            self.root.write_text(PARANOID, f"{a.paranoid_to}\n")
