"""Issue 23: what coldrun says about the machines labs own is true or "unknown".

Each shape in tests/fixtures/roots/build_roots.py follows a documented layout (the builder's
comment names it).  Per shape: `platform show --json` facts, `platform check` verdicts and the
default benchmark CPUs; then one test per point of the issue.
"""

from __future__ import annotations

import io
import json
import shutil

import pytest

from supervisor.errors import PlatformError
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platform_cli import problems, show
from supervisor.platforms import linux_facts as facts
from supervisor.platforms import linux_topology as topology
from supervisor.platforms.temperatures import wait_for_baselines
from supervisor.system import SystemRoot
from doubles import FakeClock

from platform_helpers import ROOTS, FakeMachineCommands, MemoryLog, make_linux

# shape -> virtual, model, SMT, kinds (name: cpus), default benchmark CPUs
SHAPES = {
    "intel-hybrid": (False, "12th Gen Intel(R) Core(TM) i7-12700H", "on",
                     {"cpu_core": "0-11", "cpu_atom": "12-19"}, "2-11"),
    "xeon-hwp": (False, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "on", {"all": "0-7"}, "1-3,5-7"),
    "zen4-epp-6.8": (False, "AMD Ryzen 9 7950X 16-Core Processor", "on", {"all": "0-7"}, "2-7"),
    "zen4-acpi": (False, "AMD Ryzen 9 7950X 16-Core Processor", "on", {"all": "0-7"}, "2-7"),
    "arm64-server": (False, "implementer 0x41 part 0xd0c", "off", {"all": "0-7"}, "1-7"),
    "arm-biglittle": (False, "4 x implementer 0x41 part 0xd03; 2 x implementer 0x41 part 0xd08", "off",
                      {"arm-0x41-0xd08": "4-5", "arm-0x41-0xd03": "0-3"}, "4-5"),
    "power9-lpar": (True, "POWER9 (architected), altivec supported", "on", {"all": "0-15"}, "8-15"),
    "s390x-guest": (True, "IBM Z machine type 3906", "off", {"all": "0-1"}, "1"),
    "netburst-offline": (False, "Intel(R) Xeon(TM) CPU 3.00GHz", "on", {"all": "0-1"}, "1"),
    "cgroup-elsewhere": (False, "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "off", {"all": "0-3"}, "1-3"),
}


def show_json(shape: str, policy: PlatformPolicy | None = None) -> dict:
    out = io.StringIO()
    show(policy or PlatformPolicy(), str(ROOTS / shape), "linux", out=out, as_json=True)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_show_json_states_each_shapes_facts(shape):
    virtual, model, smt, kinds, bench = SHAPES[shape]
    m = show_json(shape)["machine"]
    assert m["virtual"] is virtual and m["model"] == model
    assert m["smt"].startswith(smt + " (")
    assert {k: v["cpus"] for k, v in m["core_kinds"].items()} == kinds
    assert list(m["core_kinds"]) == list(kinds)          # fastest first
    assert m["benchmark_cpus"] == bench


def reports(shape: str, **policy) -> dict:
    return {r["control"]: r for r in show_json(shape, PlatformPolicy(**policy))["controls"]}


# shape -> controls `platform check` must find fatal with the default policy
FATAL = {
    "intel-hybrid": {"intel_pstate", "tickless"},
    "xeon-hwp": {"tickless"},                       # intel_pstate: HWP forced, so not a problem
    "zen4-epp-6.8": {"turbo", "tickless"},          # turbo: rdmsr not run against a copy
    "zen4-acpi": {"tickless"},
    "arm64-server": {"turbo", "tickless", "temperatures"},
    "arm-biglittle": {"turbo", "tickless"},
    "power9-lpar": {"governor", "turbo", "tickless"},
    "s390x-guest": {"governor", "turbo", "tickless"},
    "netburst-offline": set(),
    "cgroup-elsewhere": {"intel_pstate"},
}


@pytest.mark.parametrize("shape", sorted(FATAL))
def test_check_verdicts_per_shape(shape):
    found = {name for name, r in reports(shape).items() if r["fatal"]}
    assert found == FATAL[shape]
    probs, _ = problems(PlatformPolicy(), str(ROOTS / shape), "linux")
    assert sorted(p.split(":")[0] for p in probs) == sorted(FATAL[shape])


# --- 1. core kinds -----------------------------------------------------------------

def test_hybrid_kinds_each_have_their_own_nominal_rate():
    root = SystemRoot(ROOTS / "intel-hybrid")
    kinds = {k.name: k for k in topology.core_kinds(root)}
    assert kinds["cpu_core"].nominal_hz == 2.3e9 and kinds["cpu_atom"].nominal_hz == 1.7e9
    assert topology.kind_nominal_hz(root, {2, 3}) == 2.3e9
    assert topology.kind_nominal_hz(root, {2, 12}) is None   # spans kinds: no one rate


def test_platform_nominal_rate_is_the_benchmark_kinds(machine, tmp_path):
    p = make_linux(machine("intel-hybrid"), tmp_path / "s", PlatformPolicy(benchmark_cpus="cpu_atom"))
    assert p.benchmark_cpus() == set(range(12, 20)) and p.nominal_hz() == 1.7e9
    assert make_linux(machine("intel-hybrid"), tmp_path / "t").nominal_hz() == 2.3e9


def test_an_unknown_kind_is_refused_naming_the_kinds():
    with pytest.raises(PlatformError, match=r"no core kind of that name \(kinds: cpu_core, cpu_atom\)"):
        topology.benchmark_cpus(SystemRoot(ROOTS / "intel-hybrid"), "big")


def test_a_cpu_list_is_taken_as_given():
    assert topology.benchmark_cpus(SystemRoot(ROOTS / "intel-hybrid"), "3,12") == {3, 12}


def test_a_pair_is_placed_on_one_kind():
    root = SystemRoot(ROOTS / "intel-hybrid")
    assert topology.one_kind(root, [0, 12, 13]) == [12, 13]     # one P-core only: the E-cores
    assert topology.one_kind(root, [0, 2, 12]) == [0, 2]
    assert topology.one_kind(SystemRoot(ROOTS / "zen4-acpi"), [0, 1]) == [0, 1]


def test_every_snapshot_records_each_cpus_kind(machine, tmp_path):
    snap = make_linux(machine("arm-biglittle"), tmp_path / "s", PlatformPolicy(temperatures="ignore")).snapshot()
    assert snap["core_kinds"]["cpu0"] == "arm-0x41-0xd03" and snap["core_kinds"]["cpu5"] == "arm-0x41-0xd08"
    assert snap["benchmark_cpus"] == [4, 5] and snap["clocksource"] == "arch_sys_counter"


def test_a_homogeneous_amd_is_one_kind_though_preferred_cores_boost_higher():
    # zen4's cpu0-1 have a higher cpuinfo_max_freq (amd-pstate's preferred cores): still one kind
    assert [k.name for k in topology.core_kinds(SystemRoot(ROOTS / "zen4-epp-6.8"))] == ["all"]


# --- 2. SMT ----------------------------------------------------------------------------

def test_smt_without_the_smt_interface_is_read_from_the_sibling_lists():
    r = reports("power9-lpar", smt="require_off")["smt"]
    assert r["fatal"] and r["found"].startswith("on (8 threads per core") and "ppc64_cpu --smt=off" in r["fix"]


def test_smt_unknown_is_not_passed(machine, tmp_path):
    root = machine("power9-lpar")
    for c in range(16):
        shutil.rmtree(root / f"sys/devices/system/cpu/cpu{c}/topology")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(smt="require_off"))
    r = next(r for r in p.inspect() if r.control == "smt")
    assert r.fatal and r.found == "unavailable" and "cannot tell whether SMT is on" in r.fix


def test_default_benchmark_cpus_leave_out_the_housekeeping_cpus_sibling():
    assert topology.benchmark_cpus(SystemRoot(ROOTS / "xeon-hwp"), None) == {1, 2, 3, 5, 6, 7}   # 4 shares cpu0's core


# --- 3. turbo ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", ["arm64-server", "arm-biglittle"])
def test_turbo_is_not_claimed_off_without_x86_evidence(shape):
    r = reports(shape)["turbo"]
    assert r["found"] == "unavailable" and not r["ok"] and "cannot tell whether the cores boost" in r["fix"]


def test_turbo_off_is_evidence_on_x86_without_a_turbo_flag():
    r = reports("netburst-offline")["turbo"]
    assert r["found"] == "off (this CPU reports no turbo)" and r["ok"]
    assert show_json("netburst-offline")["machine"]["core_kinds"]["all"]["nominal_hz"] == 3e9   # "CPU 3.00GHz"


# --- 4. virtual machines ------------------------------------------------------------------

def test_partitions_and_guests_are_virtual():
    assert facts.detect_virtualisation(SystemRoot(ROOTS / "power9-lpar")).evidence.startswith(
        "/proc/cpuinfo platform : pSeries")
    assert facts.detect_virtualisation(SystemRoot(ROOTS / "s390x-guest")).evidence == "/proc/sysinfo: KVM/Linux guest"


def test_an_arm64_guest_is_virtual(machine):
    # QEMU's arm "virt" board puts a fw-cfg node in the device tree (systemd's detect_vm_device_tree).
    root = machine("arm64-server")
    (root / "proc/device-tree/fw-cfg@9020000").mkdir(parents=True)
    assert facts.detect_virtualisation(SystemRoot(root)).virtual
    root = machine("arm64-server")
    (root / "proc/device-tree/hypervisor").mkdir(parents=True)
    (root / "proc/device-tree/hypervisor/compatible").write_text("xen,xen-4.17\0xen,xen\0")
    assert facts.detect_virtualisation(SystemRoot(root)).evidence.startswith("/proc/device-tree/hypervisor")


def test_an_s390_lpar_is_virtual(machine):
    root = machine("s390x-guest")
    (root / "proc/sysinfo").write_text("Manufacturer:         IBM\nType:                 3906\nLPAR Name:            LP01\n")
    assert facts.detect_virtualisation(SystemRoot(root)).evidence == "/proc/sysinfo: s390 LPAR (PR/SM hypervisor)"


# --- 5. offline CPUs --------------------------------------------------------------------------

def test_offline_cpus_are_not_counted_without_cpu_online():
    root = SystemRoot(ROOTS / "netburst-offline")
    assert not root.exists("/sys/devices/system/cpu/online")
    assert facts.online_cpus(root) == [0, 1]


# --- 6. intel_pstate with HWP forced by firmware ------------------------------------------------

def test_hwp_forced_passes_the_intel_pstate_check_and_pins_the_perf_limits(machine, tmp_path):
    root = machine("xeon-hwp")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(tickless="ignore", temperatures="ignore",
                                                        kernel_log="ignore"))
    r = next(r for r in p.inspect() if r.control == "intel_pstate")
    assert r.ok and "HWP enabled by BIOS: intel_pstate=disable has no effect" in r.found
    p.apply_and_verify()
    pstate = root / "sys/devices/system/cpu/intel_pstate"
    assert (pstate / "min_perf_pct").read_text() == "100\n" and (pstate / "no_turbo").read_text() == "1\n"
    p.restore()
    assert (pstate / "min_perf_pct").read_text() == "9\n" and (pstate / "no_turbo").read_text() == "0\n"


def test_hwp_forced_is_seen_from_the_command_line_when_the_log_has_rotated(machine, tmp_path):
    root = machine("xeon-hwp")
    (root / "dev/kmsg").write_text("")
    r = next(r for r in make_linux(root, tmp_path / "s").inspect() if r.control == "intel_pstate")
    assert r.ok and "HWP enabled by BIOS" in r.found


# --- 7. AMD boost before 6.11 -------------------------------------------------------------------

def test_amd_pstate_epp_before_6_11_turns_boost_off_by_hwcr_and_back(machine, tmp_path):
    root = machine("zen4-epp-6.8")
    hwcr = 0x0000_0000_0100_0010        # CpbDis (bit 25) clear: boost on
    cmds = FakeMachineCommands(msr={c: hwcr for c in range(8)})
    policy = PlatformPolicy(tickless="ignore", temperatures="ignore", kernel_log="ignore", benchmark_user=False)
    p = make_linux(root, tmp_path / "s", policy, commands=cmds)
    assert next(r for r in p.inspect() if r.control == "turbo").found == "on [msr]"
    p.apply_and_verify()
    assert all(v == hwcr | 1 << 25 for v in cmds.msr.values())
    assert ("rdmsr", "-p", "0", "0xc0010015") in cmds.calls
    p.restore()
    assert all(v == hwcr for v in cmds.msr.values())


def test_amd_on_acpi_cpufreq_uses_the_global_boost_file(machine, tmp_path):
    root = machine("zen4-acpi")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(tickless="ignore", temperatures="ignore",
                                                        kernel_log="ignore", benchmark_user=False))
    p.apply_and_verify()
    assert (root / "sys/devices/system/cpu/cpufreq/boost").read_text() == "0\n"


def test_amd_fixtures_have_no_intel_only_thermal_throttle():
    for shape in ("amd-server", "zen4-epp-6.8", "zen4-acpi"):
        assert not list((ROOTS / shape).glob("sys/devices/system/cpu/cpu*/thermal_throttle"))


# --- 8. clock source -----------------------------------------------------------------------------

def test_an_invariant_tsc_machine_is_put_back_on_the_tsc(machine, tmp_path):
    root = machine("intel-hybrid")
    cur = root / "sys/devices/system/clocksource/clocksource0/current_clocksource"
    cur.write_text("hpet\n")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(intel_pstate="allow", tickless="ignore",
                                                        temperatures="ignore", kernel_log="ignore"))
    assert next(r for r in p.inspect() if r.control == "clocksource").action == "would change"
    p.apply_and_verify()
    assert cur.read_text() == "tsc\n"
    p.restore()
    assert cur.read_text() == "hpet\n"


def test_a_tsc_marked_unstable_is_fatal_with_what_to_do(machine, tmp_path):
    root = machine("intel-hybrid")
    cs = root / "sys/devices/system/clocksource/clocksource0"
    (cs / "current_clocksource").write_text("hpet\n")
    (cs / "available_clocksource").write_text("hpet acpi_pm \n")
    r = next(r for r in make_linux(root, tmp_path / "s").inspect() if r.control == "clocksource")
    assert r.fatal and "marked it unstable" in r.fix and 'clocksource = "ignore"' in r.fix


def test_a_clocksource_change_during_or_since_start_flags_the_execution(machine, tmp_path):
    root = machine("arm64-server")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(temperatures="ignore", kernel_log="ignore",
                                                        throttle_counters="ignore", amperf="ignore"))
    before = p.snapshot()
    assert not p.post_checks(before, {}).flags
    (root / "sys/devices/system/clocksource/clocksource0/current_clocksource").write_text("jiffies\n")
    res = p.post_checks(before, {})
    assert res.flags == ["clocksource"] and res.rerun
    assert res.details["clocksource"] == {"start": None, "before": "arch_sys_counter", "after": "jiffies"}
    (tmp_path / "s").mkdir(exist_ok=True)
    (tmp_path / "s" / "audit.json").write_text(json.dumps({"volatile": {"clocksource": "arch_sys_counter"}}))
    res = p.post_checks(p.snapshot(), {})   # same before and after, but not the clock source at start
    assert res.flags == ["clocksource"]


# --- 9. temperatures ---------------------------------------------------------------------------------

def test_only_cpu_sensors_are_waited_on_by_default(tmp_path):
    temps = make_linux(ROOTS / "intel-hybrid", tmp_path / "s").read_temperatures()
    assert sorted(temps) == ["hwmon/coretemp/temp1_input", "hwmon/coretemp/temp2_input",
                             "hwmon/coretemp/temp3_input", "thermal/x86_pkg_temp"]
    assert list(make_linux(ROOTS / "arm-biglittle", tmp_path / "t").read_temperatures()) == ["thermal/cpu-thermal"]


def test_the_sensor_list_is_configurable(tmp_path):
    p = make_linux(ROOTS / "zen4-acpi", tmp_path / "s", PlatformPolicy(temperature_sensors=["k10temp", "nvme"]))
    assert sorted(p.read_temperatures()) == ["hwmon/k10temp/temp1_input", "hwmon/nvme/temp1_input",
                                             "hwmon/nvme/temp2_input"]


def test_a_sensor_that_fails_is_reported_and_left_out():
    clock, log = FakeClock(), MemoryLog()
    base = {"hwmon/k10temp/temp1_input": 50.0, "hwmon/k10temp/temp2_input": 48.0}
    waited = wait_for_baselines(lambda: {"hwmon/k10temp/temp1_input": 50.5}, base, tolerance=1.0,
                                deadline_seconds=3600, clock=clock, log=log, heat=None)
    assert waited == 0
    assert [e for lvl, e, kw in log.events if lvl == "warning"] == ["temperature sensor gives no reading; left out"]


# --- 11. cgroup v2 mounted elsewhere --------------------------------------------------------------------

def test_cgroup2_at_a_non_default_path_is_found_and_used(machine, tmp_path):
    root = machine("cgroup-elsewhere")
    policy = PlatformPolicy(pinning=True, intel_pstate="allow", temperatures="ignore", kernel_log="ignore")
    p = make_linux(root, tmp_path / "s", policy)
    r = next(r for r in p.inspect() if r.control == "pinning")
    assert r.action == "would change" and r.wanted == "/run/cgroup2/coldrun.bench cpus=1-3 partition=root"
    p.apply_and_verify()
    assert (root / "run/cgroup2/coldrun.bench/cpuset.cpus").read_text() == "1-3"
    p.restore()
    assert not (root / "run/cgroup2/coldrun.bench").exists()


def test_no_cgroup2_mount_says_so(machine, tmp_path):
    root = machine("cgroup-elsewhere")
    (root / "proc/self/mountinfo").write_text("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n")
    r = next(r for r in make_linux(root, tmp_path / "s", PlatformPolicy(pinning=True)).inspect()
             if r.control == "pinning")
    assert r.fatal and "none is mounted (/proc/self/mountinfo)" in r.fix


def test_a_dissolved_partition_flags_the_execution(machine, tmp_path):
    root = machine("cgroup-elsewhere")
    policy = PlatformPolicy(pinning=True, intel_pstate="allow", temperatures="ignore", kernel_log="ignore",
                            throttle_counters="ignore", amperf="ignore", clocksource="ignore")
    p = make_linux(root, tmp_path / "s", policy)
    p.apply_and_verify()
    before = p.snapshot()
    (root / "run/cgroup2/coldrun.bench/cpuset.cpus.partition").write_text("member")   # systemd took cpuset away
    res = p.post_checks(before, {})
    assert res.flags == ["pinning"] and res.rerun


def test_the_partition_is_re_made_right_before_a_launch(machine, tmp_path):
    root = machine("cgroup-elsewhere")
    policy = PlatformPolicy(pinning=True, intel_pstate="allow", temperatures="ignore", kernel_log="ignore",
                            benchmark_user=False)
    p = make_linux(root, tmp_path / "s", policy)
    p.apply_and_verify()
    (root / "run/cgroup2/coldrun.bench/cpuset.cpus.partition").write_text("member")
    prefix = p.launch_prefix("job")
    assert (root / "run/cgroup2/coldrun.bench/cpuset.cpus.partition").read_text() == "root"
    assert prefix.cgroup.endswith("/run/cgroup2/coldrun.bench")


def test_execution_cgroups_take_the_highest_cpu_weight(tmp_path):
    from supervisor.launch.containment import outrank
    (tmp_path / "cpu.weight").write_text("100\n")
    outrank(str(tmp_path))
    assert (tmp_path / "cpu.weight").read_text() == "10000"
    (tmp_path / "no-cpu-controller").mkdir()
    outrank(str(tmp_path / "no-cpu-controller"))          # no cpu.weight: nothing to do, no error
    assert not (tmp_path / "no-cpu-controller" / "cpu.weight").exists()


# --- 12. messages ----------------------------------------------------------------------------------------

def test_partial_cpufreq_is_not_called_no_driver(machine, tmp_path):
    root = machine("zen4-acpi")
    shutil.rmtree(root / "sys/devices/system/cpu/cpu3/cpufreq")
    r = next(r for r in make_linux(root, tmp_path / "s").inspect() if r.control == "governor")
    assert r.fatal and r.fix.startswith("cpus 3 have no cpufreq directory though acpi-cpufreq drives the others")


def test_the_driver_is_read_from_its_status_file_too(machine):
    root = machine("xeon-hwp")
    for c in range(8):
        (root / f"sys/devices/system/cpu/cpu{c}/cpufreq/scaling_driver").unlink()
    assert facts.scaling_driver(SystemRoot(root)).describe() == "intel_pstate (active)"


def test_an_unknown_release_is_not_named_as_a_config_file(machine, tmp_path):
    root = machine("s390x-guest")
    (root / "proc/sys/kernel/osrelease").unlink()
    r = next(r for r in make_linux(root, tmp_path / "s").inspect() if r.control == "tickless")
    assert "config-unknown" not in r.fix and "osrelease is unreadable" in r.fix


def test_every_fixture_shape_is_listed_here():
    built = {p.name for p in ROOTS.iterdir() if p.is_dir()} - {"openbsd-7.5", "intel-desktop", "amd-server",
                                                                 "acpi-old", "vm-nocpufreq"}
    assert built == set(SHAPES) == set(FATAL)


def test_the_machine_offers_a_pair_cpus_of_one_kind():
    from supervisor.platforms.factory import HARDWARE, Machine
    machine = Machine(root=SystemRoot(ROOTS / "intel-hybrid"), affinity=lambda: [0, 1, 12, 13])
    assert machine.cpus(HARDWARE, PlatformPolicy()) == [0, 1]                    # without pinning: the P-cores
    mixed = PlatformPolicy(pinning=True, benchmark_cpus="11,12,13")
    assert machine.cpus(HARDWARE, mixed) == [12, 13]                             # a list mixing kinds: one kind


def test_without_evidence_virtual_or_not_is_unknown(machine):
    root = machine("s390x-guest")
    (root / "proc/sysinfo").unlink()
    (root / "proc/cpuinfo").write_text("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n\n")
    # RISC-V /proc/cpuinfo as arch/riscv/kernel/cpu.c (c_show) writes it; no DMI, no device tree copied
    v = facts.detect_virtualisation(SystemRoot(root))
    assert v.virtual is None and "systemd-detect-virt" in v.evidence
    out = io.StringIO()
    show(PlatformPolicy(), str(root), "linux", out=out)
    assert out.getvalue().startswith("machine: unknown whether virtual (")
