"""Each Linux control on the machine shapes it is meant for."""

import json

import pytest

from supervisor.errors import PlatformError
from supervisor.experiment.platform_policy import PlatformPolicy

from platform_helpers import FakeMachineCommands, make_linux, vm_policy


def report(platform, name):
    return next(r for r in platform.inspect() if r.control == name)


def test_intel_pstate_active_is_a_problem_with_the_grub_fix(machine, tmp_path):
    p = make_linux(machine("intel-desktop"), tmp_path / "s")
    r = report(p, "intel_pstate")
    assert r.found == "intel_pstate (active)" and r.fatal
    assert "intel_pstate=disable" in r.fix and "/etc/default/grub" in r.fix
    with pytest.raises(PlatformError, match="intel_pstate=disable"):
        p.apply_and_verify()


def test_intel_no_turbo_and_epp_applied_and_read_back(machine, tmp_path):
    root = machine("intel-desktop")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(intel_pstate="allow"))
    assert report(p, "turbo").found == "on [intel_pstate/no_turbo]"
    reports = {r.control: r.as_dict() for r in p.apply_and_verify()}
    assert (root / "sys/devices/system/cpu/intel_pstate/no_turbo").read_text().strip() == "1"
    assert reports["turbo"]["action"] == "changed from on [intel_pstate/no_turbo]"
    assert {(root / f"sys/devices/system/cpu/cpu{c}/cpufreq/energy_performance_preference").read_text().strip()
            for c in range(4)} == {"performance"}


def test_nohz_full_must_cover_the_benchmark_cores(machine, tmp_path):
    p = make_linux(machine("amd-server"), tmp_path / "s")  # cmdline nohz_full=2-7, cores 1-7 by default
    r = report(p, "tickless")
    assert r.fatal and "cpus 1" in r.fix and "nohz_full=1-7" in r.fix
    ok = make_linux(machine("amd-server"), tmp_path / "s2", PlatformPolicy(benchmark_cpus="3-5"))
    assert report(ok, "tickless").ok


def test_old_kernel_no_hz_full_all_covers_all_but_cpu0(machine, tmp_path):
    p = make_linux(machine("acpi-old"), tmp_path / "s", PlatformPolicy(turbo="ignore"))
    r = report(p, "tickless")
    assert r.ok and r.found == "CONFIG_NO_HZ_FULL=y, nohz_full=1-3"


def test_smt_and_swap_can_be_required_off(machine, tmp_path):
    p = make_linux(machine("amd-server"), tmp_path / "s", PlatformPolicy(smt="require_off", swap="require_off"))
    smt, swap = report(p, "smt"), report(p, "swap")
    assert smt.fatal and smt.found.startswith("on") and "nosmt" in smt.fix
    assert swap.fatal and swap.found == "/dev/dm-1" and "swapoff -a" in swap.fix
    reported = make_linux(machine("amd-server"), tmp_path / "s2")
    assert report(reported, "smt").ok and report(reported, "smt").action == "report"


def test_amd_per_policy_boost_turned_off_on_every_policy(machine, tmp_path):
    root = machine("amd-server")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(benchmark_cpus="2-7"))
    p.apply_and_verify()
    assert {(root / f"sys/devices/system/cpu/cpufreq/policy{c}/boost").read_text() for c in range(8)} == {"0\n"}
    p.restore_control("turbo")
    assert {(root / f"sys/devices/system/cpu/cpufreq/policy{c}/boost").read_text() for c in range(8)} == {"1\n"}
    # only turbo was restored: the governor is still performance
    assert (root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip() == "performance"


def test_msr_turbo_needs_msr_tools(machine, tmp_path):
    p = make_linux(machine("acpi-old"), tmp_path / "s", commands=FakeMachineCommands())  # rdmsr: not found
    r = report(p, "turbo")
    assert r.fatal and "msr-tools" in r.fix


def test_msr_turbo_loads_the_msr_module_and_unloads_it_at_restore(machine, tmp_path):
    cmds = FakeMachineCommands(msr={c: 0x850089 for c in range(4)}, msr_module=False)
    p = make_linux(machine("acpi-old"), tmp_path / "s", commands=cmds)   # the tree has no /dev/cpu/N/msr
    r = report(p, "turbo")
    assert r.action == "would change" and not r.fatal and r.found.startswith("unknown (the msr module"), r
    reports = {r.control: r for r in p.apply_and_verify()}
    assert reports["turbo"].found == "off" and reports["turbo"].action.startswith("changed from unknown") and cmds.msr_module
    assert all(v & (1 << 38) for v in cmds.msr.values())
    undo = json.loads(p.undo.path.read_text())["entries"]
    assert [e["argv"] for e in undo if e["control"] == "turbo"][0] == ["modprobe", "-r", "msr"]
    p.restore_control("turbo")
    assert cmds.msr == {c: 0x850089 for c in range(4)} and not cmds.msr_module
    assert cmds.calls.index(("modprobe", "-r", "msr")) > max(i for i, c in enumerate(cmds.calls) if c[0] == "wrmsr")


def test_msr_that_does_not_stick_fails_verification(machine, tmp_path):
    class StuckMsr(FakeMachineCommands):
        def run(self, argv, **kw):
            if argv[0] == "wrmsr":
                self.calls.append(tuple(argv))
                return super().run(["sync"])  # accepted, but the value does not change
            return super().run(argv, **kw)

    cmds = StuckMsr(msr={c: 0x850089 for c in range(4)})
    p = make_linux(machine("acpi-old"), tmp_path / "s", commands=cmds)
    with pytest.raises(PlatformError, match="turbo: set to off but reads back on"):
        p.apply_and_verify()
    undo = json.loads(p.undo.path.read_text())["entries"]
    assert [e["argv"] for e in undo if e["control"] == "turbo"][0] == ["wrmsr", "-p", "0", "0x1a0", "0x850089"]


def test_governor_the_driver_lacks_names_the_available_ones(machine, tmp_path):
    p = make_linux(machine("intel-desktop"), tmp_path / "s", PlatformPolicy(governor="schedutil",
                                                                              intel_pstate="allow"))
    with pytest.raises(PlatformError, match="available: performance powersave"):
        p.apply_and_verify()


def test_virtual_machine_defaults_explain_what_to_ignore(machine, tmp_path):
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s")
    assert p.is_virtual()[0]
    fatal = {r.control: r.fix for r in p.inspect() if r.fatal}
    assert set(fatal) == {"governor", "turbo", "tickless"}
    assert 'governor = "ignore"' in fatal["governor"] and 'turbo = "ignore"' in fatal["turbo"]
    temps = report(p, "temperatures")
    assert temps.ok and temps.found == "no sensors"  # virtual: no sensors is expected


def test_bare_metal_without_sensors_is_fatal(machine, tmp_path):
    import shutil
    root = machine("acpi-old")
    shutil.rmtree(root / "sys/class/hwmon")
    shutil.rmtree(root / "sys/class/thermal")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(turbo="ignore"))
    r = report(p, "temperatures")
    assert r.fatal and "lm-sensors" in r.fix
    with pytest.raises(PlatformError, match="no CPU temperature sensor"):
        p.take_baselines()


def test_transparent_hugepages_mode_set_and_restored(machine, tmp_path):
    root = machine("vm-nocpufreq")
    thp = root / "sys/kernel/mm/transparent_hugepage/enabled"
    p = make_linux(root, tmp_path / "s", vm_policy(transparent_hugepages="never"))
    assert report(p, "transparent_hugepages").found == "madvise"
    p.apply_and_verify()
    assert thp.read_text() == "never\n"
    p.restore()
    assert thp.read_text() == "madvise\n"  # what the kernel takes back (it shows the choice list)


def test_pinning_makes_a_cpuset_partition_and_removes_it(machine, tmp_path):
    root = machine("amd-server")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(benchmark_cpus="2-7", pinning=True))
    assert report(p, "pinning").found == "absent"
    p.apply_and_verify()
    cg = root / "sys/fs/cgroup/coldrun.bench"
    assert (cg / "cpuset.cpus").read_text() == "2-7" and (cg / "cpuset.cpus.partition").read_text() == "root"
    assert (root / "sys/fs/cgroup/cgroup.subtree_control").read_text() == "+cpuset"
    launch = p.launch_prefix("b:vm:v")
    prefix = launch.argv()
    i = prefix.index("supervisor.platforms.cgexec")
    assert prefix[i + 1] == str(cg) and prefix.index("setpriv") > i
    assert launch.cgroup == str(cg)       # each execution's cgroup goes inside the pinning partition
    p.end_launch("b:vm:v")
    p.restore()
    assert not cg.exists()


def test_the_pinning_partition_hands_on_the_memory_controller(machine, tmp_path):
    """Issue 26 item 9: executions' cgroups go inside the partition, so it hands on memory for their
    memory.max (the real kernel's side of this: tests/vm/test_real_reboots.py). The fake tree cannot make a
    cgroup's files on mkdir, so the partition's controllers file is there already, as the kernel makes it."""
    root = machine("amd-server")
    cg = root / "sys/fs/cgroup/coldrun.bench"
    cg.mkdir()
    (cg / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(benchmark_cpus="2-7", pinning=True))
    p.apply_and_verify()
    assert (cg / "cgroup.subtree_control").read_text() == "+memory"


def test_pinning_without_cgroup_v2_says_how_to_get_it(machine, tmp_path):
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(pinning=True))
    r = report(p, "pinning")
    assert r.fatal and "unified_cgroup_hierarchy" in r.fix


def test_reboot_uses_systemd_when_present(machine, tmp_path):
    root = machine("vm-nocpufreq")
    cmds = FakeMachineCommands()
    make_linux(root, tmp_path / "s", vm_policy(), cmds).reboot()
    (root / "run/systemd/system/.keep").unlink()
    (root / "run/systemd/system").rmdir()
    make_linux(root, tmp_path / "s", vm_policy(), cmds).reboot()
    assert cmds.calls[-2:] == [("systemctl", "reboot"), ("shutdown", "-r", "now")]
