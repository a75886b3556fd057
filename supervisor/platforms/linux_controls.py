"""Linux controls: CPU frequency, kernel settings, boot-time checks.

One class per setting, and for turbo one class per switch (TURBO_SWITCHES).
linux.py lists the controls in the order they are applied (LINUX_CONTROLS).
"""

from __future__ import annotations

import gzip
from abc import ABC, abstractmethod
from dataclasses import dataclass

from supervisor.errors import PlatformError
from supervisor.platforms.controls import (CheckControl, Control, ControlReport, ControlSeams, SysfsControl,
                                           bracketed, combine, label, write_setting)
from supervisor.cpulist import format_cpulist, parse_cpulist
from supervisor.platforms import linux_facts as facts
from supervisor.platforms import linux_topology as topology
from supervisor.platforms.kernel_log import read_kmsg
from supervisor.system import Commands, SystemRoot
from supervisor.state.undo import UndoLog

CPU = facts.CPU_DIR
GRUB_FIX = ("add {param} to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run update-grub "
            "and reboot")
IA32_MISC_ENABLE = "0x1a0"
TURBO_DISABLE_BIT = 1 << 38
AMD_HWCR = "0xc0010015"
CPB_DISABLE_BIT = 1 << 25


# --- CPU frequency -----------------------------------------------------------

class GovernorControl(SysfsControl):
    name = "governor"

    def unavailable_fix(self) -> str:
        driver = facts.scaling_driver(self.root)
        missing = facts.cpus_without_cpufreq(self.root)
        if driver.name != "none" and missing:
            return (f"cpus {format_cpulist(missing)} have no cpufreq directory though {driver.describe()} drives the "
                    "others (firmware without P-state tables for them?): take them offline, or name other CPUs in "
                    "benchmark_cpus and set governor = \"ignore\" in [platform]")
        return ("no cpufreq driver is loaded (a virtual machine, or firmware with CPU power management off); "
                "set governor = \"ignore\" in [platform]")

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.cpus = m.cpus
        self.paths = [f"{CPU}/cpu{c}/cpufreq/scaling_governor" for c in m.cpus]

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

    name = "energy_performance_preference"
    required = False

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.paths = [f"{CPU}/cpu{c}/cpufreq/energy_performance_preference" for c in m.cpus]

    def read(self) -> str | None:
        if not self.paths or not self.root.exists(self.paths[0]):
            return None
        return super().read()


HWP_FORCED_LINE = "intel_pstate: HWP enabled by BIOS"
HWP_FORCED = "HWP enabled by BIOS: intel_pstate=disable has no effect"


def hwp_forced(root: SystemRoot) -> bool:
    """Firmware turned HWP on, so the kernel loads intel_pstate whatever the command line says
    (drivers/cpufreq/intel_pstate.c, intel_pstate_init: "HWP enabled by BIOS" and no_load is
    ignored).  Evidence: that kernel log line, or intel_pstate driving though the command line
    says intel_pstate=disable."""
    if any(HWP_FORCED_LINE in r.message for r in (read_kmsg(root) or [])):
        return True
    params = facts.cmdline_params(facts.kernel_cmdline(root))
    return (params.get("intel_pstate") == "disable"
            and facts.scaling_driver(root).name.startswith("intel_"))


class IntelPstateCheck(CheckControl):
    """The paper ran acpi-cpufreq: the active intel_pstate driver is a problem (check only).

    Where firmware forces HWP the driver cannot be switched off: the check then passes,
    saying so, and the machine is held by what intel_pstate allows (governor, EPP, no_turbo,
    min/max_perf_pct: IntelPerfLimits)."""

    name = "intel_pstate"
    fix_text = ("intel_pstate is driving the CPU: boot with intel_pstate=disable (" +
                GRUB_FIX.format(param="intel_pstate=disable") + "), or set intel_pstate = \"allow\"")

    left_out_by = ("allow", "ignore")

    def wanted(self) -> str:
        return "not the active intel_pstate driver"

    def read(self) -> str:
        found = facts.scaling_driver(self.root).describe()
        if found.startswith("intel_pstate") and hwp_forced(self.root):
            return f"{found}, {HWP_FORCED}"
        return found

    def ok(self, found: str) -> bool:
        return not found.startswith("intel_pstate") or HWP_FORCED in found


NOT_INTEL_PSTATE = "not applicable (intel_pstate is not driving)"


class IntelPerfLimits(SysfsControl):
    """intel_pstate's min_perf_pct raised to max_perf_pct (100), so HWP keeps one P-state: the
    highest non-turbo one with no_turbo set (Documentation/admin-guide/pm/intel_pstate.rst,
    "User Space Interface in sysfs").  Only where intel_pstate drives."""

    name = "intel_perf_pct"
    required = False

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.paths = [f"{CPU}/intel_pstate/max_perf_pct", f"{CPU}/intel_pstate/min_perf_pct"]

    def wanted(self) -> str:
        return "100"

    def read(self) -> str | None:
        if not facts.scaling_driver(self.root).name.startswith("intel_"):
            return NOT_INTEL_PSTATE
        values = self.values()
        if values is None:
            return None
        return combine({p.rsplit("/", 1)[1]: v for p, v in zip(self.paths, values.values())})

    def satisfied(self, found: str | None) -> bool:
        return found == NOT_INTEL_PSTATE or super().satisfied(found)


# --- turbo: one class per switch ---------------------------------------------------

NO_TURBO_IN_CPU = "off (this CPU reports no turbo)"


def cpu_reports_turbo(root: SystemRoot) -> bool | None:
    """CPUID leaf 6 EAX bit 1 ("ida") on Intel, core performance boost ("cpb") on AMD; None
    off x86, whose /proc/cpuinfo has no such flag, so their absence says nothing."""
    if not facts.is_x86(root):
        return None
    return bool({"ida", "cpb"} & facts.cpu_flags(root))


class TurboSwitch(ABC):
    """One way of turning turbo/boost on or off.

    ``available(machine)`` says whether this machine has it; TurboControl
    uses the first available one of TURBO_SWITCHES.  ``read()`` gives
    "on"/"off", or per core or policy ("policy0=on policy1=off") when they
    differ.
    """

    label: str | None = None   # shown after the value in reports: "on [intel_pstate/no_turbo]"
    writable = True

    def __init__(self, m: ControlSeams):
        self.root = m.root
        self.commands = m.commands
        self.cpus = m.cpus
        self.virtual = facts.detect_virtualisation(m.root).virtual

    @classmethod
    @abstractmethod
    def available(cls, m: ControlSeams) -> bool: ...

    @abstractmethod
    def read(self) -> str | None: ...

    def write(self, undo: UndoLog, control: str, off: bool) -> None:
        raise PlatformError(f"{control}: " + self.unavailable_fix())

    def unavailable_fix(self) -> str:
        if self.virtual:
            return "turbo cannot be controlled from a virtual machine; set turbo = \"ignore\" in [platform]"
        if not facts.is_x86(self.root):
            return ("coldrun finds no cpufreq boost switch on this machine and cannot tell whether the cores boost: "
                    "turn boost off in the firmware (or the vendor's tool), then set turbo = \"ignore\"")
        return ("no turbo switch found (no intel_pstate/no_turbo, cpufreq boost or MSR): disable "
                "Turbo Boost / Core Performance Boost in the BIOS setup, then set turbo = \"ignore\"")


class SysfsTurboSwitch(TurboSwitch):
    """A cpufreq driver's own file (or one file per policy); ``off_text`` in it means turbo off."""

    pattern: str      # a path, or a glob for one file per policy
    off_text, on_text = "0", "1"   # a "boost" file; intel_pstate's "no_turbo" is the other way round

    @classmethod
    def available(cls, m: ControlSeams) -> bool:
        return bool(m.root.glob(cls.pattern))

    def read(self) -> str | None:
        states: dict[str, str] = {}
        for path in self.root.glob(self.pattern):
            value = facts.read_or_none(self.root, path)
            if value is None:
                return None
            states[label(path)] = "off" if value == self.off_text else "on"
        return combine(states) if states else None

    def write(self, undo: UndoLog, control: str, off: bool) -> None:
        for path in self.root.glob(self.pattern):
            write_setting(self.root, undo, control, path, self.off_text if off else self.on_text)


class IntelNoTurbo(SysfsTurboSwitch):
    """intel_pstate (active or passive): the driver's no_turbo, one for the whole machine."""

    label = "intel_pstate/no_turbo"
    pattern = f"{CPU}/intel_pstate/no_turbo"
    off_text, on_text = "1", "0"


class CpufreqBoost(SysfsTurboSwitch):
    """acpi-cpufreq, amd-pstate passive/guided: the cpufreq core's global boost."""

    label = "cpufreq/boost"
    pattern = f"{CPU}/cpufreq/boost"


class PolicyBoost(SysfsTurboSwitch):
    """amd-pstate active and newer kernels: a boost file per cpufreq policy."""

    label = "policy/boost"
    pattern = f"{CPU}/cpufreq/policy*/boost"


MSR_MODULE_KEY = "module:msr"    # the undo log's entry that unloads the msr module coldrun loaded
# What an MSR reads as before the module that gives /dev/cpu/N/msr is loaded (apply loads it).
MSR_MODULE_NOT_LOADED = "unknown (the msr module is not loaded)"


def load_msr_module(commands: Commands, undo: UndoLog, control: str, fix: str) -> None:
    """modprobe msr, for /dev/cpu/N/msr, with its unloading in the undo log (recorded first: a crash right
    after modprobe still unloads it at restore)."""
    undo.record(control, MSR_MODULE_KEY, {"action": "run", "argv": ["modprobe", "-r", "msr"]})
    r = commands.run(["modprobe", "msr"])
    if not r.ok:
        raise PlatformError(f"{control}: modprobe msr failed: {r.stderr.strip() or r.returncode}; {fix}")


class MsrTurboDisable(TurboSwitch):
    """A turbo-disable bit of an MSR on every core through rdmsr/wrmsr (msr-tools), each core's
    original value in the undo log.  Intel: IA32_MISC_ENABLE bit 38, Krun's switch."""

    label = "msr"
    vendors: tuple[str, ...] = ("GenuineIntel",)
    register, bit, what = IA32_MISC_ENABLE, TURBO_DISABLE_BIT, "Turbo Boost"

    @classmethod
    def available(cls, m: ControlSeams) -> bool:
        return (m.policy.msr_turbo and facts.cpu_vendor(m.root) in cls.vendors
                and not facts.detect_virtualisation(m.root).virtual)

    module_missing = False    # read() found msr-tools but no /dev/cpu/N/msr: write() loads the module

    def _values(self) -> dict[int, int] | None:
        values = {}
        for c in self.cpus:
            r = self.commands.run(["rdmsr", "-p", str(c), self.register])
            if not r.ok:
                self.module_missing = r.returncode != 127 and not self.root.exists(f"/dev/cpu/{c}/msr")
                return None
            values[c] = int(r.stdout.strip(), 16)
        return values

    def read(self) -> str | None:
        if cpu_reports_turbo(self.root) is False:
            return NO_TURBO_IN_CPU
        values = self._values()
        if values is None:
            return MSR_MODULE_NOT_LOADED if self.module_missing else None
        return combine({f"cpu{c}": ("off" if v & self.bit else "on") for c, v in values.items()})

    def write(self, undo: UndoLog, control: str, off: bool) -> None:
        if self.module_missing:
            load_msr_module(self.commands, undo, control, self.unavailable_fix())
        values = self._values()
        if values is None:
            raise PlatformError(f"{control}: " + self.unavailable_fix())
        for c, v in values.items():
            new = v | self.bit if off else v & ~self.bit
            if new == v:
                continue
            undo.record(control, f"msr:{self.register}:cpu{c}",
                        {"action": "run", "argv": ["wrmsr", "-p", str(c), self.register, hex(v)]})
            r = self.commands.run(["wrmsr", "-p", str(c), self.register, hex(new)])
            if not r.ok:
                raise PlatformError(f"{control}: wrmsr on cpu{c} failed: {r.stderr.strip() or r.returncode}")

    def unavailable_fix(self) -> str:
        return (f"turbo via MSR {self.register} needs msr-tools and the msr module: apt-get install msr-tools; "
                f"modprobe msr (or disable {self.what} in the BIOS setup)")


class AmdCpbDisable(MsrTurboDisable):
    """AMD: HWCR (MSR 0xc0010015) bit 25, CpbDis (arch/x86/include/asm/msr-index.h,
    MSR_K7_HWCR_CPB_DIS_BIT).  amd-pstate in active mode has no boost file before 6.11
    (its set_boost came with "cpufreq: amd-pstate: initialize core precision boost state")."""

    vendors = ("AuthenticAMD", "HygonGenuine")
    register, bit, what = AMD_HWCR, CPB_DISABLE_BIT, "Core Performance Boost"


class NoTurboSwitch(TurboSwitch):
    """None of the above: a virtual machine (the host decides) or no switch coldrun knows."""

    writable = False

    @classmethod
    def available(cls, m: ControlSeams) -> bool:
        return True

    def read(self) -> str | None:
        if self.virtual:
            return None  # a guest can neither see nor change it
        return NO_TURBO_IN_CPU if cpu_reports_turbo(self.root) is False else None


# The first available switch is used.  Rules:
TURBO_SWITCHES: tuple[type[TurboSwitch], ...] = (
    # The driver's own switch first: the kernel then keeps its frequency limits in step.
    # intel_pstate has no cpufreq/boost, so no_turbo is its only switch.
    IntelNoTurbo,
    # The global boost before the per-policy files: where both exist (acpi-cpufreq on
    # recent kernels) the global one switches every policy at once.
    CpufreqBoost,
    PolicyBoost,
    # The MSR only when the kernel offers no switch: it goes behind the driver's back,
    # needs msr-tools, exists only on bare metal, and msr_turbo = false forbids it.
    MsrTurboDisable,
    AmdCpbDisable,
    # Always available, last: reports "unavailable" (VM) or a CPU without turbo.
    NoTurboSwitch,
)


class TurboControl(Control):
    """Turbo/boost on or off, through the first switch of TURBO_SWITCHES this machine has."""

    name = "turbo"

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.switch = next(switch for switch in TURBO_SWITCHES if switch.available(m))(m)
        self.can_apply = self.switch.writable

    def read(self) -> str | None:
        return self.switch.read()

    def satisfied(self, found: str | None) -> bool:
        if found is None:
            return False
        if found == NO_TURBO_IN_CPU:
            return self.wanted() == "off"
        return found == self.wanted()

    def unavailable_fix(self) -> str:
        return self.switch.unavailable_fix()

    def fix(self, found: str | None) -> str:
        return self.unavailable_fix()

    def apply(self, undo: UndoLog) -> None:
        self.switch.write(undo, self.name, off=self.wanted() == "off")

    def inspect(self) -> ControlReport:
        report = super().inspect()
        if self.switch.label and report.action != "unavailable" and report.found != NO_TURBO_IN_CPU:
            report.found = f"{report.found} [{self.switch.label}]"
        return report


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

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.bench_cpus = m.benchmark_cpus
        self.all_cpus = m.cpus
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
        release = facts.kernel_release(self.root)
        where = (f"/boot/config-{release} or /proc/config.gz" if release != "unknown" else
                 "/proc/sys/kernel/osrelease is unreadable, so only /proc/config.gz (modprobe configs)")
        return (f"cannot find the running kernel's config ({where}); install it or set tickless = \"ignore\" "
                "in [platform]")


class ClocksourceControl(Control):
    """The kernel's clock source.  With an invariant TSC it must be tsc: anything else makes
    every clock_gettime a system call (hpet, acpi_pm).  Elsewhere (arm64's arch_sys_counter,
    POWER's timebase, a guest's kvm-clock) the kernel's choice is recorded, not judged."""

    name = "clocksource"

    def _wants_tsc(self) -> bool:
        return facts.tsc_invariant(self.root) and not facts.detect_virtualisation(self.root).virtual

    def wanted(self) -> str:
        return "tsc" if self._wants_tsc() else "any (recorded)"

    def read(self) -> str | None:
        return facts.clocksource(self.root).current

    def satisfied(self, found: str | None) -> bool:
        return found is not None and (found == "tsc" or not self._wants_tsc())

    def inspect(self) -> ControlReport:
        report = super().inspect()
        source = facts.clocksource(self.root)
        if report.found != "unavailable":
            report.found = source.describe()
        if report.action == "would change" and "tsc" not in source.available:
            report.action, report.fix, report.fatal = "fix needed", self.fix(report.found), True
        return report

    def fix(self, found: str | None) -> str:
        return ("the kernel no longer offers the TSC (it marked it unstable: look for \"Marking clocksource 'tsc' "
                "as unstable\" in the kernel log), so every timestamp is a slow system call; check the firmware's "
                "power settings and reboot, or set clocksource = \"ignore\" in [platform] to accept it")

    def unavailable_fix(self) -> str:
        return (f"{facts.CLOCKSOURCE_DIR}/current_clocksource is missing, so the clock source is unknown; "
                "set clocksource = \"ignore\" in [platform] to run without knowing it")

    def apply(self, undo: UndoLog) -> None:
        write_setting(self.root, undo, self.name, f"{facts.CLOCKSOURCE_DIR}/current_clocksource", "tsc")


# --- kernel settings (/proc/sys) and memory -------------------------------------------

class SysctlControl(SysfsControl):
    """One /proc/sys file; the [platform] field of the control's name gives the value."""

    path: str

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.paths = [self.path]

    def fix(self, found: str | None) -> str:
        key = self.path.removeprefix("/proc/sys/").replace("/", ".")
        return f"could not set {key}; check that nothing else (sysctl.d, tuned) resets it"

    def unavailable_fix(self) -> str:
        return f"{self.path} does not exist on this kernel; set {self.name} = \"ignore\" in [platform]"


class PerfSampleRate(SysctlControl):
    name = "perf_max_sample_rate"
    path = "/proc/sys/kernel/perf_event_max_sample_rate"


class PerfCpuTimeMax(SysctlControl):
    name = "perf_cpu_time_max_percent"
    path = "/proc/sys/kernel/perf_cpu_time_max_percent"


class Aslr(SysctlControl):
    name = "aslr"
    path = "/proc/sys/kernel/randomize_va_space"

    def wanted(self) -> str:
        return "2" if self.policy.aslr else "0"


class Overcommit(SysctlControl):
    """A mode 0/1/2 to set, or "report"."""

    name = "overcommit_memory"
    path = "/proc/sys/vm/overcommit_memory"


class SmtCheck(CheckControl):
    """"require_off": SMT must be off (boot parameter or BIOS), or "report"."""

    name = "smt"

    def fix(self, found: str | None) -> str:
        if any("platform" in b for b in facts.cpuinfo_fields(self.root)):   # POWER: SMT is set at run time
            return ("SMT is on: run ppc64_cpu --smt=off (powerpc-utils) at every boot, e.g. from a systemd unit "
                    "ordered before coldrun's, or boot with nosmt (" + GRUB_FIX.format(param="nosmt") + ")")
        return ("SMT is on: boot with nosmt (" + GRUB_FIX.format(param="nosmt") +
                ") or turn off Hyper-Threading/SMT in the BIOS setup")

    def wanted(self) -> str:
        return "off"

    unavailable_text = ("cannot tell whether SMT is on: the kernel shows no cpuN/topology sibling lists and no "
                        "cpu/smt; check the firmware's SMT setting, then set smt = \"report\" in [platform]")

    def read(self) -> str | None:
        found = topology.smt(self.root)
        return None if found.state is None else found.describe()

    def ok(self, found: str) -> bool:
        return found.startswith("off")


class SwapCheck(CheckControl):
    """"require_off": no active swap device, or "report"."""

    name = "swap"
    fix_text = "swap is active: run swapoff -a and comment out the swap lines in /etc/fstab"

    def wanted(self) -> str:
        return "none"

    def read(self) -> str | None:
        devs = facts.swap_devices(self.root)
        return None if devs is None else (" ".join(devs) or "none")


class TransparentHugepages(SysfsControl):
    """A THP mode to set, or "report"."""

    name = "transparent_hugepages"

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.paths = ["/sys/kernel/mm/transparent_hugepage/enabled"]

    def parse(self, text: str) -> str:
        return bracketed(text)


# --- CPU isolation (cgroup v2 cpuset partition) --------------------------------

BENCH_NAME = "coldrun.bench"


class CpusetControl(Control):
    """An exclusive cpuset partition for the benchmark cores (no cset needed).

    The partition ("root") takes its CPUs away from every other cgroup, so
    only processes placed in it (by supervisor.platforms.cgexec) run there.
    """

    name = "pinning"

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.cpus = format_cpulist(m.benchmark_cpus)
        self.mount = facts.cgroup2_mount(m.root)
        # Under wherever cgroup v2 is mounted (not mounted: read() says unavailable).
        self.bench = f"{self.mount or facts.DEFAULT_CGROUP2}/{BENCH_NAME}"

    left_out_by = (False,)

    def wanted(self) -> str:
        return f"{self.bench} cpus={self.cpus} partition=root"

    def _controllers(self) -> list[str] | None:
        ctl = facts.read_or_none(self.root, f"{self.mount}/cgroup.controllers") if self.mount else None
        return None if ctl is None else ctl.split()

    def read(self) -> str | None:
        if "cpuset" not in (self._controllers() or []):
            return None
        if not self.root.exists(self.bench):
            return "absent"
        cpus = facts.read_or_none(self.root, f"{self.bench}/cpuset.cpus") or ""
        part = facts.read_or_none(self.root, f"{self.bench}/cpuset.cpus.partition") or ""
        return f"{self.bench} cpus={cpus} partition={part}"

    def unavailable_fix(self) -> str:
        if self.mount is None:
            return ("pinning needs cgroup v2, and none is mounted (/proc/self/mountinfo): boot with "
                    "systemd.unified_cgroup_hierarchy=1, or set pinning = false in [platform]")
        return (f"pinning needs the cpuset controller in {self.mount}/cgroup.controllers, which lacks it (bound to "
                "a cgroup v1 hierarchy?): boot with systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all, or set "
                "pinning = false in [platform]")

    def apply(self, undo: UndoLog) -> None:
        subtree = f"{self.mount}/cgroup.subtree_control"
        if "cpuset" not in (facts.read_or_none(self.root, subtree) or "").split():
            undo.record(self.name, subtree, {"action": "write", "path": subtree, "value": "-cpuset"})
            self.root.write_text(subtree, "+cpuset")
        if not self.root.exists(self.bench):
            undo.record(self.name, self.bench, {"action": "rmdir", "path": self.bench,
                                                "files": ["cpuset.cpus", "cpuset.cpus.partition"]})
            self.root.path(self.bench).mkdir()
        self.root.write_text(f"{self.bench}/cpuset.cpus", self.cpus)
        self.root.write_text(f"{self.bench}/cpuset.cpus.partition", "root")
        # Each execution's cgroup goes inside the partition: hand on the memory controller too, where the
        # hierarchy has it, so the run's memory can be bounded there (launch/memory_limit.py). It goes with
        # the partition.
        if "memory" in (facts.read_or_none(self.root, f"{self.bench}/cgroup.controllers") or "").split():
            try:
                self.root.write_text(f"{self.bench}/cgroup.subtree_control", "+memory")
            except OSError:   # each execution's record then says its memory was bounded by rlimits alone, and why
                pass

    def satisfied(self, found: str | None) -> bool:
        return found == self.wanted()


# --- hardware counters (libkruntime's cycles, APERF, MPERF) ----------------------

EVENT_SOURCES = "/sys/bus/event_source/devices"
PARANOID = "/proc/sys/kernel/perf_event_paranoid"


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

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.cpus = m.cpus
        self.paranoid = m.policy.perf_event_paranoid
        self.unprivileged = m.policy.benchmark_user
        self.required = m.policy.counters == "require"
        self.virtual = facts.detect_virtualisation(m.root).virtual

    left_out_by = ("off",)

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
            hint = ("this virtual machine has no PMU: enable the guest PMU (e.g. qemu -cpu host,pmu=on) "
                    "or run on bare metal")
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
            load_msr_module(self.commands, undo, self.name,
                            "install the msr module or set counters = \"if_available\"")
        if a.paranoid_to is not None:
            write_setting(self.root, undo, self.name, PARANOID, str(a.paranoid_to))
