"""show / check / apply / verify / restore on every fake machine leaves the tree byte-for-byte as it was."""

import io
import json

import pytest

from supervisor.platform_cli import show
from supervisor.experiment.platform_policy import PlatformPolicy

from platform_helpers import FakeMachineCommands, make_linux, tree_digest, vm_policy

IA32_MISC_ENABLE_TURBO_ON = 0x850089  # bit 38 clear

POLICIES = {
    "intel-desktop": PlatformPolicy(intel_pstate="allow", perf_cpu_time_max_percent=0, overcommit_memory=2),
    "amd-server": PlatformPolicy(benchmark_cpus="2-7", aslr=False),
    "acpi-old": PlatformPolicy(),
    "vm-nocpufreq": vm_policy(temperatures="check", throttle_counters="check"),
    # issue 23's shapes: their kernels are not tickless, so tickless is left out
    "intel-hybrid": PlatformPolicy(intel_pstate="allow", tickless="ignore"),
    "xeon-hwp": PlatformPolicy(tickless="ignore"),
    "zen4-epp-6.8": PlatformPolicy(tickless="ignore"),
    "zen4-acpi": PlatformPolicy(tickless="ignore", benchmark_cpus="4-7"),
    "arm-biglittle": PlatformPolicy(tickless="ignore", turbo="ignore"),
}
# Files each apply must change (relative to the root) — proves apply really did something.
CHANGED = {
    "intel-desktop": ["sys/devices/system/cpu/cpu3/cpufreq/scaling_governor",
                      "sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference",
                      "sys/devices/system/cpu/intel_pstate/no_turbo",
                      "proc/sys/kernel/perf_event_max_sample_rate",
                      "proc/sys/kernel/perf_cpu_time_max_percent", "proc/sys/vm/overcommit_memory"],
    "amd-server": ["sys/devices/system/cpu/cpu7/cpufreq/scaling_governor",
                   "sys/devices/system/cpu/cpufreq/policy5/boost", "proc/sys/kernel/randomize_va_space"],
    "acpi-old": ["sys/devices/system/cpu/cpu2/cpufreq/scaling_governor",
                 "proc/sys/kernel/perf_event_max_sample_rate"],
    "vm-nocpufreq": ["proc/sys/kernel/perf_event_max_sample_rate"],
    "intel-hybrid": ["sys/devices/system/cpu/cpu19/cpufreq/scaling_governor",
                     "sys/devices/system/cpu/intel_pstate/min_perf_pct", "sys/devices/system/cpu/intel_pstate/no_turbo"],
    "xeon-hwp": ["sys/devices/system/cpu/intel_pstate/min_perf_pct", "sys/devices/system/cpu/intel_pstate/no_turbo"],
    "zen4-epp-6.8": ["sys/devices/system/cpu/cpu7/cpufreq/energy_performance_preference"],
    "zen4-acpi": ["sys/devices/system/cpu/cpufreq/boost", "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"],
    "arm-biglittle": ["sys/devices/system/cpu/cpu5/cpufreq/scaling_governor"],
}
AMD_HWCR_BOOST_ON = 0x1000010   # CpbDis (bit 25) clear


@pytest.mark.parametrize("shape", list(POLICIES))
def test_round_trip_restores_every_byte(shape, machine, tmp_path):
    root = machine(shape)
    state = tmp_path / "state"
    msr = {c: IA32_MISC_ENABLE_TURBO_ON for c in range(4)} if shape == "acpi-old" else {}
    if shape == "zen4-epp-6.8":
        msr = {c: AMD_HWCR_BOOST_ON for c in range(8)}
    commands = FakeMachineCommands(msr=msr)
    original = tree_digest(root)

    show(POLICIES[shape], str(root), "linux", out=io.StringIO())
    platform = make_linux(root, state, POLICIES[shape], commands)
    before = platform.inspect()
    assert tree_digest(root) == original, "show/inspect must change nothing"
    assert not [r for r in before if r.fatal], [r for r in before if r.fatal]

    reports = platform.apply_and_verify()
    after = tree_digest(root)
    for rel in CHANGED[shape]:
        assert after[rel] != original[rel], f"{rel} not changed by apply"
    assert all(r.ok for r in reports)
    undo = json.loads(platform.undo.path.read_text())["entries"]
    assert len(undo) >= len(CHANGED[shape])
    if shape == "acpi-old":
        assert all(v & (1 << 38) for v in commands.msr.values()), "turbo-disable bit not set on every core"
    if shape == "zen4-epp-6.8":
        assert all(v & (1 << 25) for v in commands.msr.values()), "CpbDis not set on every core"

    # A second boot re-applies: nothing changes and the originals stay the first ones.
    again = platform.apply_and_verify()
    assert all(r.action in ("none", "report", "unavailable") for r in again), again
    assert json.loads(platform.undo.path.read_text())["entries"] == undo

    platform.restore()
    assert tree_digest(root) == original
    assert not platform.undo.path.exists()
    assert commands.msr == msr
