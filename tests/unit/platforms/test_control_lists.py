"""The declarative control lists: which control the policy chooses, which turbo
switch each machine gets, and the ordering rules the lists' comments state."""

from __future__ import annotations

import errno

import pytest

from supervisor.errors import PlatformError
from supervisor.platforms import linux
from supervisor.platforms.factory import make_platform
from supervisor.platforms.controls import ReportControl
from supervisor.platforms.linux import LINUX_CONTROLS
from supervisor.platforms.linux_controls import (AmdCpbDisable, Aslr, CounterAccessControl, CpufreqBoost,
                                                 CpusetControl, EppControl, GovernorControl, IntelNoTurbo,
                                                 IntelPerfLimits, IntelPstateCheck, MsrTurboDisable, NoTurboSwitch,
                                                 PerfCpuTimeMax, PerfSampleRate, PolicyBoost, TURBO_SWITCHES,
                                                 TurboControl)
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import SystemRoot
from doubles import FakeClock

from platform_helpers import FakeMachineCommands, MemoryLog, make_linux, tree_digest, vm_policy

EVERYTHING_ON = dict(intel_pstate="disable", tickless="require", pinning=True, counters="require",
                     smt="require_off", overcommit_memory=2, swap="require_off", transparent_hugepages="never",
                     perf_cpu_time_max_percent=0)
# The value of each control's [platform] field that leaves the control out.
LEFT_OUT = {"governor": "ignore", "energy_performance_preference": "ignore", "intel_pstate": "allow",
            "turbo": "ignore", "perf_max_sample_rate": "ignore", "perf_cpu_time_max_percent": "ignore",
            "counters": "off", "aslr": "ignore", "tickless": "ignore", "smt": "ignore",
            "overcommit_memory": "ignore", "swap": "ignore", "transparent_hugepages": "ignore", "pinning": False,
            "intel_perf_pct": "ignore", "clocksource": "ignore", "timers": "ignore"}


def names(platform) -> list[str]:
    return [c.name for c in platform.controls()]


def test_every_control_chosen_once_in_list_order(machine, tmp_path):
    p = make_linux(machine("amd-server"), tmp_path / "s", PlatformPolicy(**EVERYTHING_ON))
    assert names(p) == [cls.name for cls in LINUX_CONTROLS]
    assert {cls.policy_field or cls.name for cls in LINUX_CONTROLS} == set(LEFT_OUT)


@pytest.mark.parametrize("field", sorted(LEFT_OUT))
def test_each_control_can_be_left_out_alone(field, machine, tmp_path):
    policy = PlatformPolicy(**{**EVERYTHING_ON, field: LEFT_OUT[field]})
    got = names(make_linux(machine("amd-server"), tmp_path / "s", policy))
    assert got == [cls.name for cls in LINUX_CONTROLS if (cls.policy_field or cls.name) != field]


@pytest.mark.parametrize("field", ["smt", "swap", "transparent_hugepages", "overcommit_memory"])
def test_report_only_records_what_the_setting_reads(field, machine, tmp_path):
    root = machine("amd-server")
    enforced = next(c for c in make_linux(root, tmp_path / "a", PlatformPolicy(**EVERYTHING_ON)).controls()
                    if c.name == field)
    reported = next(c for c in make_linux(root, tmp_path / "b", PlatformPolicy(**{field: "report"})).controls()
                    if c.name == field)
    assert isinstance(reported, ReportControl) and not isinstance(enforced, ReportControl)
    r = reported.inspect()
    assert r.action == "report" and r.ok and r.found == enforced.observe() and r.found is not None


@pytest.mark.parametrize("shape, policy, switch", [
    ("intel-desktop", {}, IntelNoTurbo),
    ("amd-server", {}, PolicyBoost),
    ("acpi-old", {}, MsrTurboDisable),
    ("acpi-old", {"msr_turbo": False}, NoTurboSwitch),
    ("vm-nocpufreq", {}, NoTurboSwitch),
])
def test_each_machine_gets_its_turbo_switch(shape, policy, switch, machine, tmp_path):
    p = make_linux(machine(shape), tmp_path / "s", PlatformPolicy(**policy))
    turbo = next(c for c in p.controls() if isinstance(c, TurboControl))
    assert type(turbo.switch) is switch
    assert turbo.can_apply is (switch is not NoTurboSwitch)


def test_no_switch_on_bare_metal_names_the_bios(machine, tmp_path):
    p = make_linux(machine("acpi-old"), tmp_path / "s", PlatformPolicy(msr_turbo=False))
    r = next(r for r in p.inspect() if r.control == "turbo")
    assert r.fatal and r.action == "unavailable" and "BIOS setup" in r.fix and "msr-tools" not in r.fix


def test_global_boost_wins_over_per_policy_boost(machine, tmp_path):
    root = machine("amd-server")
    (root / "sys/devices/system/cpu/cpufreq/boost").write_text("1\n")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(benchmark_cpus="2-7"))
    turbo = next(c for c in p.controls() if isinstance(c, TurboControl))
    assert type(turbo.switch) is CpufreqBoost
    original = tree_digest(root)
    p.apply_and_verify()
    assert (root / "sys/devices/system/cpu/cpufreq/boost").read_text() == "0\n"
    assert (root / "sys/devices/system/cpu/cpufreq/policy3/boost").read_text() == "1\n"  # left to the global one
    p.restore()
    assert tree_digest(root) == original


def test_per_policy_boost_that_differs_is_shown_per_policy(machine, tmp_path):
    root = machine("amd-server")
    (root / "sys/devices/system/cpu/cpufreq/policy3/boost").write_text("0\n")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(benchmark_cpus="2-7"))
    found = next(r for r in p.inspect() if r.control == "turbo").found
    assert found.startswith("policy0=on policy1=on policy2=on policy3=off ") and found.endswith("[policy/boost]")


# --- ordering rules (the comments of LINUX_CONTROLS, TURBO_SWITCHES, OPENBSD_CONTROLS) ---

def before(entries, first, then) -> bool:
    return entries.index(first) < entries.index(then)


def test_the_stated_ordering_rules_hold():
    assert before(LINUX_CONTROLS, GovernorControl, EppControl)
    assert before(LINUX_CONTROLS, EppControl, TurboControl) and before(LINUX_CONTROLS, IntelPstateCheck, TurboControl)
    assert before(LINUX_CONTROLS, TurboControl, CounterAccessControl)
    assert before(LINUX_CONTROLS, PerfSampleRate, PerfCpuTimeMax)
    assert before(LINUX_CONTROLS, PerfCpuTimeMax, CounterAccessControl)
    assert LINUX_CONTROLS[-1] is CpusetControl and before(LINUX_CONTROLS, Aslr, CpusetControl)
    assert TURBO_SWITCHES == (IntelNoTurbo, CpufreqBoost, PolicyBoost, MsrTurboDisable,
                              AmdCpbDisable, NoTurboSwitch)
    assert before(LINUX_CONTROLS, GovernorControl, IntelPerfLimits) and before(LINUX_CONTROLS, IntelPerfLimits, TurboControl)


class PerfSysctlRoot(SystemRoot):
    """The kernel's rule: perf_event_max_sample_rate cannot be written while
    perf_cpu_time_max_percent is 0 or 100 (kernel/events/core.c answers EINVAL)."""

    def write_text(self, system_path, text):
        if system_path.endswith("/perf_event_max_sample_rate"):
            if self.read_text("/proc/sys/kernel/perf_cpu_time_max_percent").strip() in ("0", "100"):
                raise OSError(errno.EINVAL, "Invalid argument", system_path)
        super().write_text(system_path, text)


def perf_platform(root, state):
    return make_platform("linux", vm_policy(perf_cpu_time_max_percent=0), state, root=PerfSysctlRoot(root),
                         commands=FakeMachineCommands(), clock=FakeClock(), log=MemoryLog())


def test_sample_rate_set_before_cpu_time_percent_is_zeroed_and_restored_after(machine, tmp_path):
    root = machine("vm-nocpufreq")
    original = tree_digest(root)
    p = perf_platform(root, tmp_path / "s")
    p.apply_and_verify()
    assert (root / "proc/sys/kernel/perf_event_max_sample_rate").read_text() == "1\n"
    assert (root / "proc/sys/kernel/perf_cpu_time_max_percent").read_text() == "0\n"
    p.restore()
    assert p.restore_failures == [] and tree_digest(root) == original


def test_the_other_order_fails_on_such_a_kernel(machine, tmp_path, monkeypatch):
    """Proves the fake kernel enforces the rule the list relies on."""
    swapped = list(LINUX_CONTROLS)
    i, j = swapped.index(PerfSampleRate), swapped.index(PerfCpuTimeMax)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    monkeypatch.setattr(linux, "LINUX_CONTROLS", tuple(swapped))
    p = perf_platform(machine("vm-nocpufreq"), tmp_path / "s")
    with pytest.raises(PlatformError, match="^perf_max_sample_rate: could not apply 1: .*Invalid argument"):
        p.apply_and_verify()


