"""Counter access for the benchmark user: perf_event_paranoid and the msr module.

Every test runs against a private copy of a fake machine tree; the real
machine's settings are never read for writing.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from supervisor.errors import PlatformError
from supervisor.platforms.undo_replay import restore_undo_log
from supervisor.cli import add_platform_commands
from supervisor.platform_cli import show
from supervisor.platforms.linux_controls import PARANOID, read_counter_facts
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import SystemRoot

from platform_helpers import (EXPERIMENT, LINUX_SHAPES, ROOTS, FakeMachineCommands, MemoryLog, make_linux, tree_digest,
                              undo_path)

PARANOID_FILE = PARANOID.lstrip("/")
ORIGINAL_PARANOID = {"intel-desktop": "3\n", "amd-server": "4\n", "acpi-old": "3\n", "vm-nocpufreq": "3\n"}


def counters_only(**kw) -> PlatformPolicy:
    """Every other control off, so the undo log holds only what the counters control did."""
    base = dict(governor="ignore", turbo="ignore", energy_performance_preference="ignore",
                intel_pstate="ignore", tickless="ignore", perf_max_sample_rate="ignore", aslr="ignore",
                smt="ignore", overcommit_memory="ignore", swap="ignore", transparent_hugepages="ignore",
                temperatures="ignore", throttle_counters="ignore", kernel_log="ignore")
    base.update(kw)
    return PlatformPolicy(**base)


def counters_report(platform):
    found = [r for r in platform.inspect() if r.control == "counters"]
    assert len(found) == 1
    return found[0]


def undo_entries(root: Path, state: Path) -> list[dict]:
    path = undo_path(root, state)
    return json.loads(path.read_text())["entries"] if path.exists() else []


class MsrModuleCommands(FakeMachineCommands):
    """modprobe msr creates /dev/cpu/N/msr in the fake tree; modprobe -r msr removes it again."""

    def __init__(self, root: Path, cpus: int, state: Path, **kw):
        super().__init__(**kw)
        self.root = root
        self.cpus = cpus
        self.state = state

    def run(self, argv, **kw):
        a = tuple(str(x) for x in argv)
        if a == ("modprobe", "msr"):
            assert [e["key"] for e in undo_entries(self.root, self.state)] == ["module:msr"], "loaded before the undo entry"
            for c in range(self.cpus):
                (self.root / f"dev/cpu/{c}").mkdir(parents=True, exist_ok=True)
                (self.root / f"dev/cpu/{c}/msr").write_bytes(b"")
        elif a == ("modprobe", "-r", "msr"):
            shutil.rmtree(self.root / "dev/cpu", ignore_errors=True)
        return super().run(argv, **kw)


# --- facts -----------------------------------------------------------------------

@pytest.mark.parametrize("shape, cycles, aperf_mperf, paranoid", [
    ("intel-desktop", ("cpu",), True, 3),
    ("amd-server", ("cpu",), True, 4),
    ("acpi-old", ("cpu",), False, 3),
    ("vm-nocpufreq", (), False, 3),
])
def test_facts_read_from_each_machine_tree(shape, cycles, aperf_mperf, paranoid):
    f = read_counter_facts(SystemRoot(ROOTS / shape), [0, 1])
    assert f.cycles_pmus == cycles
    assert ({"aperf", "mperf"} <= set(f.msr_events)) is aperf_mperf
    assert f.paranoid == paranoid
    assert f.msr_device is False
    if shape == "acpi-old":
        assert not f.msr_pmu and f.aperfmperf
    if shape == "vm-nocpufreq":
        assert f.msr_pmu and f.msr_events == ("tsc",) and not f.aperfmperf


def test_hybrid_intel_pmus_count_as_the_cycles_source(machine):
    root = machine("intel-desktop")
    dev = root / "sys/bus/event_source/devices"
    (dev / "cpu").rename(dev / "cpu_core")
    shutil.copytree(dev / "cpu_core", dev / "cpu_atom")
    assert read_counter_facts(SystemRoot(root), [0]).cycles_pmus == ("cpu_atom", "cpu_core")


@pytest.mark.parametrize("shape", LINUX_SHAPES)
def test_show_reports_the_counter_facts_and_changes_nothing(shape):
    before = tree_digest(ROOTS / shape)
    out = io.StringIO()
    show(PlatformPolicy(), str(ROOTS / shape), "linux", out=out)
    lines = [ln for ln in out.getvalue().splitlines() if ln.startswith("hardware counters: ")]
    assert len(lines) == 1
    assert f"perf_event_paranoid={ORIGINAL_PARANOID[shape].strip()}" in lines[0]
    assert ("no hardware PMU" in lines[0]) is (shape == "vm-nocpufreq")
    assert ("no msr PMU" in lines[0]) is (shape == "acpi-old")
    assert tree_digest(ROOTS / shape) == before


# --- apply / verify / restore -------------------------------------------------------

@pytest.mark.parametrize("shape", LINUX_SHAPES)
def test_round_trip_leaves_every_tree_byte_for_byte(shape, machine, tmp_path):
    root, state = machine(shape), tmp_path / "state"
    original = tree_digest(root)
    p = make_linux(root, state, counters_only())
    has_counters = shape in ("intel-desktop", "amd-server")

    reports = {r.control: r.as_dict() for r in p.apply_and_verify()}
    paranoid_now = (root / PARANOID_FILE).read_text()
    if has_counters:
        assert paranoid_now == "0\n"
        assert reports["counters"]["action"] == f"changed from perf_event_paranoid={ORIGINAL_PARANOID[shape].strip()}" \
            "; cycles: cpu PMU; aperf/mperf: msr PMU"
        assert undo_entries(root, state) == [{"control": "counters", "key": PARANOID, "action": "write",
                                        "path": PARANOID, "value": ORIGINAL_PARANOID[shape]}]
    else:
        # No PMU to open: nothing is changed on the machine's behalf, and nothing fails.
        assert paranoid_now == ORIGINAL_PARANOID[shape]
        assert reports["counters"]["action"] == "unavailable" and not reports["counters"]["fatal"]
        assert reports["counters"]["found"].startswith("wall-clock only: ")
        assert undo_entries(root, state) == []

    again = {r.control: r.as_dict() for r in p.apply_and_verify()}
    assert again["counters"]["action"] in ("none", "unavailable")

    p.restore()
    assert tree_digest(root) == original
    assert not undo_path(root, state).exists()


class UndoFirstRoot(SystemRoot):
    """Fails the test if perf_event_paranoid is written before its original is in the undo log."""

    def __init__(self, root: Path, state: Path):
        super().__init__(root)
        self.state = state
        self.checked = 0

    def write_text(self, system_path: str, text: str) -> None:
        if system_path == PARANOID and text != self.read_text(PARANOID) and text == "0\n":
            recorded = [e for e in undo_entries(self.root, self.state) if e["key"] == PARANOID]
            assert recorded and recorded[0]["value"] == self.read_text(PARANOID), "change made before undo entry"
            self.checked += 1
        super().write_text(system_path, text)


def test_original_is_in_the_undo_log_before_the_write(machine, tmp_path):
    root, state = machine("intel-desktop"), tmp_path / "state"
    from supervisor.platforms.factory import make_platform
    from doubles import FakeClock
    sysroot = UndoFirstRoot(root, state)
    p = make_platform("linux", counters_only(), state, root=sysroot, commands=FakeMachineCommands(),
                      clock=FakeClock(), log=MemoryLog())
    p.apply_and_verify()
    p.restore()
    assert sysroot.checked == 1
    assert (root / PARANOID_FILE).read_text() == "3\n"


def test_crash_after_apply_is_restored_from_the_undo_log_alone(machine, tmp_path):
    root, state = machine("amd-server"), tmp_path / "state"
    make_linux(root, state, counters_only()).apply_and_verify()
    assert (root / PARANOID_FILE).read_text() == "0\n"
    # The next coldrun start knows nothing of the old policy, only the log.
    failures = restore_undo_log(state, root=SystemRoot(root), commands=FakeMachineCommands(), log=MemoryLog())
    assert failures == []
    assert (root / PARANOID_FILE).read_text() == "4\n"


def test_reapplying_after_a_reboot_keeps_the_first_original(machine, tmp_path):
    root, state = machine("intel-desktop"), tmp_path / "state"
    p = make_linux(root, state, counters_only())
    p.apply_and_verify()
    (root / PARANOID_FILE).write_text("3\n")  # a reboot: the sysctl is back at the boot value
    p.apply_and_verify()
    assert (root / PARANOID_FILE).read_text() == "0\n"
    assert [e["value"] for e in undo_entries(root, state)] == ["3\n"]
    p.restore()
    assert (root / PARANOID_FILE).read_text() == "3\n"


def test_already_permissive_paranoid_is_left_alone(machine, tmp_path):
    root, state = machine("intel-desktop"), tmp_path / "state"
    (root / PARANOID_FILE).write_text("-1\n")
    p = make_linux(root, state, counters_only())
    assert counters_report(p).action == "none"
    p.apply_and_verify()
    assert (root / PARANOID_FILE).read_text() == "-1\n"
    assert undo_entries(root, state) == []


def test_minus_one_is_written_when_asked_for(machine, tmp_path):
    root, state = machine("amd-server"), tmp_path / "state"
    (root / PARANOID_FILE).write_text("0\n")
    p = make_linux(root, state, counters_only(perf_event_paranoid=-1))
    assert counters_report(p).action == "would change"
    p.apply_and_verify()
    assert (root / PARANOID_FILE).read_text() == "-1\n"
    p.restore()
    assert (root / PARANOID_FILE).read_text() == "0\n"


def test_a_setting_that_does_not_stick_fails_verification(machine, tmp_path):
    class Deaf(SystemRoot):
        def write_text(self, system_path, text):
            if system_path != PARANOID:  # the kernel (or tuned) keeps its own value
                super().write_text(system_path, text)

    root, state = machine("intel-desktop"), tmp_path / "state"
    from supervisor.platforms.factory import make_platform
    from doubles import FakeClock
    p = make_platform("linux", counters_only(), state, root=Deaf(root), commands=FakeMachineCommands(),
                      clock=FakeClock(), log=MemoryLog())
    with pytest.raises(PlatformError, match=r"counters: set to perf_event_paranoid<=0 but reads back "
                                            r"perf_event_paranoid=3"):
        p.apply_and_verify()
    # Even so, the original was recorded and restore puts it back.
    assert [e["value"] for e in undo_entries(root, state)] == ["3\n"]


# --- policy modes ---------------------------------------------------------------------

def test_require_on_a_vm_without_pmu_fails_with_one_line_fix(machine, tmp_path):
    root, state = machine("vm-nocpufreq"), tmp_path / "state"
    original = tree_digest(root)
    p = make_linux(root, state, counters_only(counters="require"))
    r = counters_report(p)
    assert r.fatal and r.action == "fix needed"
    assert "\n" not in r.fix
    assert "enable the guest PMU" in r.fix and 'counters = "if_available"' in r.fix
    with pytest.raises(PlatformError) as e:
        p.apply_and_verify()
    msg = str(e.value)
    assert "\n" not in msg and "counters: no per-core counters (core cycles: no hardware PMU" in msg
    assert tree_digest(root) == original and undo_entries(root, state) == []


def test_require_on_a_vm_fails_platform_check_with_a_problem_line(tmp_path, capsys):
    exp = tmp_path / "exp.toml"
    ignore = "\n".join(f'{k} = "ignore"' for k in ("governor", "turbo", "tickless", "intel_pstate",
                                                   "energy_performance_preference"))
    p = argparse.ArgumentParser()
    add_platform_commands(p.add_subparsers(dest="command"))
    outputs = {}
    for mode in ("require", "if_available"):
        exp.write_text(EXPERIMENT.format(platform=f'{ignore}\ncounters = "{mode}"'))
        args = p.parse_args(["platform", "check", str(exp), "--root", str(ROOTS / "vm-nocpufreq"), "--os", "linux"])
        outputs[mode] = (args.func(args), capsys.readouterr().out)
    code, out = outputs["require"]
    problems = [ln for ln in out.splitlines() if ln.startswith("problem: counters: ")]
    assert code == 1 and len(problems) == 1 and "enable the guest PMU" in problems[0]
    code, out = outputs["if_available"]
    assert "problem: counters" not in out


def test_require_on_old_kernel_says_msr_device_is_root_only(machine, tmp_path):
    p = make_linux(machine("acpi-old"), tmp_path / "state", counters_only(counters="require"))
    r = counters_report(p)
    assert r.fatal
    assert "no msr perf PMU" in r.fix and "CAP_SYS_RAWIO" in r.fix and "benchmark_user = false" in r.fix


def test_root_run_benchmarks_load_the_msr_module_and_unload_it_at_restore(machine, tmp_path):
    root, state = machine("acpi-old"), tmp_path / "state"
    original = tree_digest(root)
    commands = MsrModuleCommands(root, cpus=4, state=state)
    p = make_linux(root, state, counters_only(counters="require", benchmark_user=False), commands)
    assert counters_report(p).action == "would change"

    p.apply_and_verify()
    assert ("modprobe", "msr") in commands.calls
    assert (root / "dev/cpu/3/msr").exists()
    # Root needs no sysctl: perf_event_paranoid untouched; only the module is in the log.
    assert (root / PARANOID_FILE).read_text() == "3\n"
    assert undo_entries(root, state) == [{"control": "counters", "key": "module:msr", "action": "run",
                                    "argv": ["modprobe", "-r", "msr"]}]
    assert counters_report(p).action == "none"

    p.restore()
    assert ("modprobe", "-r", "msr") in commands.calls
    assert tree_digest(root) == original


def test_failed_modprobe_names_the_fix(machine, tmp_path):
    class NoModule(FakeMachineCommands):
        def run(self, argv, **kw):
            if list(argv) == ["modprobe", "msr"]:
                from supervisor.system import CommandResult
                return CommandResult(tuple(argv), 1, "", "modprobe: FATAL: Module msr not found")
            return super().run(argv, **kw)

    p = make_linux(machine("acpi-old"), tmp_path / "state",
                   counters_only(counters="require", benchmark_user=False), NoModule())
    with pytest.raises(PlatformError, match="modprobe msr failed: modprobe: FATAL: Module msr not found"):
        p.apply_and_verify()


def test_paranoid_ignore_leaves_the_sysctl_and_says_what_blocks_the_user(machine, tmp_path):
    root = machine("intel-desktop")
    soft = counters_report(make_linux(root, tmp_path / "a", counters_only(perf_event_paranoid="ignore")))
    assert not soft.fatal and soft.action == "unavailable"
    assert "perf_event_paranoid is 3" in soft.fix and "perf_event_paranoid = 0" in soft.fix
    hard = make_linux(root, tmp_path / "b", counters_only(perf_event_paranoid="ignore", counters="require"))
    assert counters_report(hard).fatal
    with pytest.raises(PlatformError, match="perf_event_paranoid is 3"):
        hard.apply_and_verify()
    assert (root / PARANOID_FILE).read_text() == "3\n"


def test_counters_off_touches_nothing_and_tells_the_runner(machine, tmp_path):
    root, state = machine("intel-desktop"), tmp_path / "state"
    p = make_linux(root, state, counters_only(counters="off"))
    assert "counters" not in {r.control for r in p.inspect()}
    p.apply_and_verify()
    assert (root / PARANOID_FILE).read_text() == "3\n"
    launch = p.launch_prefix("b:vm:v")
    prefix = launch.argv()
    # one `env` sets the benchmark user's variables and this one, last
    assert prefix[-1] == "COLDRUN_COUNTERS=off" and "env" in prefix and launch.env["COLDRUN_COUNTERS"] == "off"
    p.end_launch("b:vm:v")
    on = make_linux(root, tmp_path / "s2", counters_only())
    assert "COLDRUN_COUNTERS=off" not in on.launch_prefix("b:vm:v").argv()
    on.end_launch("b:vm:v")


def test_policy_rejects_a_paranoid_level_that_keeps_the_user_out():
    with pytest.raises(ValidationError, match="use -1 or 0"):
        PlatformPolicy(perf_event_paranoid=2)
    assert PlatformPolicy().counters == "if_available" and PlatformPolicy().perf_event_paranoid == 0
