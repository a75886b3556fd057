"""A screening experiment's boots in hardware mode, every seam injected: a control factor applied and read back
through the platform at each boot, a kernel command-line factor switched and read back from /proc/cmdline after
the reboot, an env factor read back from what the runner got; a level that cannot be set fails its execution."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from cycle_helpers import ScriptedPlatform, experiment, root_on_disk
from doubles import FakeMachine, RecordingCommands
from supervisor.boot.lifecycle import start
from supervisor.boot.one_boot import boot
from supervisor.errors import PlatformError
from supervisor.views.export import native_bundle
from supervisor.platforms.controls import ControlReport
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir
from supervisor.system import CommandResult, SystemRoot

ROOTS = Path(__file__).resolve().parents[1] / "fixtures" / "roots"

SCREENING = '''
[platform]
benchmark_user = false
governor = "ignore"
turbo = "ignore"
tickless = "ignore"
temperatures = "ignore"
[screening]
batches_per_level = 1      # one batch per os level, TN 1855's layout: these tests follow its switches
[screening.factors.aslr]
kind = "control"
control = "aslr"
levels = [true, false]
[screening.factors.os]
kind = "kernel_cmdline"
parameter = "os"
levels = ["a", "b"]
switch = ["switch-os", "{level}", "{token}"]
restore = ["switch-os", "a", "os=a"]
[screening.factors.mode]
kind = "env"
variable = "MODE"
levels = ["x", "y"]
'''


class LevelPlatform(ScriptedPlatform):
    """Simulated checks and boot service, but aslr is applied to (and read back from) the shared machine,
    and a reboot makes the last switch command's kernel command line the running one."""

    def __init__(self, machine: "LevelMachine", policy):
        super().__init__()
        self.machine, self.policy = machine, policy

    def apply_and_verify(self):
        self.machine.applied.append(self.policy.aslr)      # one pass of the platform's sysfs writes
        if self.policy.aslr == "ignore":
            return []
        wanted = "2" if self.policy.aslr else "0"
        if wanted in self.machine.stuck:
            raise PlatformError(f"aslr: set to {wanted} but reads back {self.machine.aslr}")
        if wanted in self.machine.ignored:      # the write "works" but the value stays
            return [ControlReport("aslr", wanted, self.machine.aslr, False, "changed")]
        self.machine.aslr = wanted
        return [ControlReport("aslr", wanted, self.machine.aslr, True, "changed")]

    def reboot(self):
        self.machine.reboots += 1
        switches = [c for c in self.machine.commands.calls if c[0] == "switch-os"]
        if switches:
            self.machine.root.write_text("/proc/cmdline", f"ro quiet os={switches[-1][1]}\n")


class ReportingCommands(RecordingCommands):
    """`report-os` prints the os level the (fake) running kernel was booted with."""

    def run(self, argv, *, input=None, timeout=None):
        if tuple(argv) == ("report-os",):
            self.calls.append(tuple(argv))
            cmdline = self.root.read_text("/proc/cmdline").split()
            return CommandResult(tuple(argv), 0, next(t[3:] for t in cmdline if t.startswith("os=")) + "\n", "")
        return super().run(argv, input=input, timeout=timeout)


class LevelMachine(FakeMachine):
    def __init__(self, root: SystemRoot, stuck: set[str] = frozenset(), ignored: set[str] = frozenset()):
        commands = ReportingCommands(replies={("switch-os",): (0, "", ""), ("sync",): (0, "", "")})
        commands.root = root
        super().__init__(ScriptedPlatform(), root=root, commands=commands)
        self.aslr, self.stuck, self.reboots, self.ignored = "2", set(stuck), 0, set(ignored)
        self.applied: list = []        # the aslr policy of every apply_and_verify, start's first

    def platform(self, mode, exp, state_dir, log):
        p = LevelPlatform(self, exp.platform)
        p.state_dir, p.root, p.commands, p.log = Path(state_dir), self.root, self.commands, log
        return p


def machine_root(tmp: Path) -> SystemRoot:
    root = tmp / "root"
    shutil.copytree(ROOTS / "vm-nocpufreq", root, symlinks=True)
    (root / "proc" / "cmdline").write_text("ro quiet os=a\n")
    root_on_disk(root)
    return SystemRoot(root)


def run_all(exp: Path, state: Path, machine: LevelMachine) -> None:
    kw = dict(machine=machine, stderr=io.StringIO())
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    for _ in range(40):
        if Schedule.load(state / "schedule").status != "running":
            return
        boot(state, **kw)
    raise AssertionError("did not finish")


@pytest.fixture
def needs_root():
    if os.geteuid() != 0:
        pytest.skip("hardware-mode start requires root (test_hardware_mode.py shows the refusal otherwise)")


BOOT_SETTING = SCREENING.replace('kind = "kernel_cmdline"\nparameter = "os"', 'kind = "boot_setting"\n'
                                                                              'report = ["report-os"]')


@pytest.mark.parametrize("screening", [SCREENING, BOOT_SETTING], ids=["kernel_cmdline", "boot_setting"])
def test_levels_are_set_switched_and_read_back(tmp_path, needs_root, screening):
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 5\n' + screening)
    machine = LevelMachine(machine_root(tmp_path))
    state = tmp_path / "s"
    run_all(exp, state, machine)
    bundle = native_bundle(StateDir(state))
    assert bundle["screening"] == {"factors": {"aslr": ["true", "false"], "os": ["a", "b"], "mode": ["x", "y"]},
                                   "design": "full factorial", "seed": 5, "reboot_factors": ["os"],
                                   "boot_check_batch": None, "aliases": []}
    runs = bundle["executions"]
    assert len(runs) == 8 and all(r["state"] == "completed" for r in runs)
    for r in runs:
        levels = r["screening"]["levels"]
        assert r["environment"]["MODE"] == levels["mode"]
        assert levels["os"] in ("a", "b") and levels["aslr"] in ("true", "false")
    # split plot: the os batch comes whole, then the other; one switch to the first batch that differs
    assert [r["screening"]["batch"] for r in runs] == sorted(r["screening"]["batch"] for r in runs)
    assert len({(r["screening"]["treatment"]) for r in runs}) == 8
    switches = [c for c in machine.commands.calls if c[0] == "switch-os"]
    token = {"a": "os=a", "b": "os=b"} if screening is SCREENING else {"a": "a", "b": "b"}   # {token}
    into_b, back_to_a = ("switch-os", "b", token["b"]), ("switch-os", "a", token["a"])
    assert switches in ([into_b], [into_b, back_to_a])
    # restore's argv went into the undo log before the first switch (the double's restore only counts)
    undo = json.loads((state / "undo.json").read_text())["entries"]
    assert [e["argv"] for e in undo if e["key"] == "screening.os"] == [["switch-os", "a", "os=a"]]
    # boots: 8 executions and the finishing boot; each switch was made before a reboot (at start, or at the
    # end of the last job of a batch), so no boot only switched
    assert Schedule.load(state / "schedule").boots == 8 + 1
    # the platform was applied once per execution (its levels read back from that pass), besides start's;
    # switching and finishing boots apply nothing
    assert len(machine.applied) == 1 + 8
    assert sorted(str(a) for a in machine.applied[1:]) == ["False"] * 4 + ["True"] * 4
    # each record's os level is what /proc/cmdline said at its boot (the batch's), not what was planned
    for r in runs:
        b = r["screening"]["batch"]
        assert {x["screening"]["levels"]["os"] for x in runs if x["screening"]["batch"] == b} == \
            {r["screening"]["levels"]["os"]}


class FirstSwitchFails(ReportingCommands):
    """The first switch-os fails (so the switch made before a reboot does); the later ones work."""

    failed = False

    def run(self, argv, *, input=None, timeout=None):
        if argv and argv[0] == "switch-os" and not self.failed:
            self.failed = True
            return CommandResult(tuple(argv), 1, "", "switch-os: busy\n")
        return super().run(argv, input=input, timeout=timeout)


def test_a_switch_ahead_that_fails_is_made_again_by_the_next_boot(tmp_path, needs_root):
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 5\n' + SCREENING)
    machine = LevelMachine(machine_root(tmp_path))
    commands = FirstSwitchFails(replies=machine.commands.replies)
    commands.root = machine.root
    machine.commands = commands
    state = tmp_path / "s"
    run_all(exp, state, machine)
    runs = native_bundle(StateDir(state))["executions"]
    assert len(runs) == 8 and all(r["state"] == "completed" for r in runs), [r.get("reason") for r in runs]
    log = (state / "log").read_text()
    assert log.count("switching ahead failed; the next boot tries again") == 1 and "switch-os: busy" in log
    # the boot after the failure found the level not in force and no switch noted: it switched and rebooted
    # without a job, the one boot more than the executions and the finishing boot
    assert Schedule.load(state / "schedule").boots == 8 + 1 + 1


def run_without_os(tmp_path: Path, machine: LevelMachine) -> list[dict]:
    """The aslr x mode design (no reboot factor) run to its end on ``machine``; its records."""
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 5\n' + SCREENING.replace(
        '[screening.factors.os]\nkind = "kernel_cmdline"\nparameter = "os"\nlevels = ["a", "b"]\n'
        'switch = ["switch-os", "{level}", "{token}"]\nrestore = ["switch-os", "a", "os=a"]\n', ''))
    run_all(exp, tmp_path / "s", machine)
    return native_bundle(StateDir(tmp_path / "s"))["executions"]


def test_a_level_that_cannot_be_set_fails_its_executions_with_the_reason(tmp_path, needs_root):
    machine = LevelMachine(machine_root(tmp_path), stuck={"0"})
    runs = run_without_os(tmp_path, machine)
    assert len(runs) == 4
    for r in runs:
        if r["screening"]["levels"]["mode"] and r["reason"] is None:
            assert r["state"] == "completed" and r["screening"]["levels"]["aslr"] == "true"
        else:
            assert r["state"] == "errored" and r["wallclock_times"] == [] and "argv" not in r
            assert "screening: the platform could not be applied with this treatment's control levels: aslr: set to 0 but reads back" in r["reason"]
            assert r["screening"]["levels"]["aslr"].startswith("not in force")
    assert sorted(r["state"] for r in runs) == ["completed", "completed", "errored", "errored"]
    # a level that cannot be set stops its pass: the rest of [platform] is applied without it, once more
    assert [str(a) for a in machine.applied[1:]].count("True") == 2
    assert sorted(str(a) for a in machine.applied[1:] if str(a) != "True") == ["False", "False", "ignore", "ignore"]


def test_a_level_that_reads_back_otherwise_fails_its_executions_without_a_second_pass(tmp_path, needs_root):
    machine = LevelMachine(machine_root(tmp_path), ignored={"0"})
    runs = run_without_os(tmp_path, machine)
    wrong = [r for r in runs if r["state"] == "errored"]
    assert len(runs) == 4 and len(wrong) == 2
    assert all(r["reason"] == "screening: aslr (aslr) wanted false, not in force: reads back 2" for r in wrong)
    assert all(r["screening"]["levels"]["aslr"] == "not in force: reads back 2" for r in wrong)
    assert len(machine.applied) == 1 + 4          # the pass that read the level back was the boot's only one


def test_a_switch_that_does_not_take_fails_the_execution_instead_of_rebooting_again(tmp_path, needs_root):
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 5\n' + SCREENING.replace(
        '[screening.factors.aslr]\nkind = "control"\ncontrol = "aslr"\nlevels = [true, false]\n', ''))
    machine = LevelMachine(machine_root(tmp_path))
    state = tmp_path / "s"
    # the switch command succeeds, but the machine keeps booting os=a
    original = LevelPlatform.reboot
    LevelPlatform.reboot = lambda self: setattr(self.machine, "reboots", self.machine.reboots + 1)
    try:
        run_all(exp, state, machine)
    finally:
        LevelPlatform.reboot = original
    runs = native_bundle(StateDir(state))["executions"]
    b_runs = [r for r in runs if r["state"] == "errored"]
    assert len(b_runs) == 2 and all("os wanted b" in r["reason"] and "/proc/cmdline shows a" in r["reason"]
                                    for r in b_runs)
    assert all(r["screening"]["levels"]["os"] == "a" for r in runs)
    # one switch per attempt, never a loop
    assert len([c for c in machine.commands.calls if c[0] == "switch-os"]) == 2
    assert json.loads((state / "screening_switch.json").read_text())["attempt"] == 0


def test_slots_not_run_yet_carry_their_planned_levels_in_the_export(tmp_path):
    from cycle_helpers import start_quiet
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 9\n[screening]\n[screening.factors.mode]\nkind = "env"\n'
                                                  'variable = "MODE"\nlevels = ["x", "y"]\n')
    state = tmp_path / "s"
    assert start_quiet(exp, state) == 0
    bundle = native_bundle(StateDir(state))
    assert bundle["screening"] == {"factors": {"mode": ["x", "y"]}, "design": "full factorial", "seed": 9,
                                   "reboot_factors": [], "boot_check_batch": None, "aliases": []}
    slots = bundle["executions"]
    assert [s["state"] for s in slots] == ["outstanding", "outstanding"]
    assert sorted(s["screening"]["levels"]["mode"] for s in slots) == ["x", "y"]
    assert {s["screening"]["treatment"] for s in slots} == {0, 1}


def test_start_builds_the_design_once(tmp_path, monkeypatch):
    """prepare's plan is the one source: the state dir's free-space check counts its jobs, not a second design."""
    from cycle_helpers import start_quiet
    from supervisor.kinds.screening import plan as screening_plan
    built = []
    real = screening_plan.build_design
    monkeypatch.setattr(screening_plan, "build_design", lambda sc: built.append(sc) or real(sc))
    exp = experiment(tmp_path, {"b": "ok"}, executions=2, extra='seed = 9\n[screening]\n[screening.factors.mode]\n'
                                                                 'kind = "env"\nvariable = "MODE"\nlevels = ["x", "y"]\n')
    assert start_quiet(exp, tmp_path / "s") == 0
    assert len(built) == 1
    assert len(Schedule.load(tmp_path / "s" / "schedule").jobs) == 4


def test_status_counts_treatments_per_batch_and_the_switches_left(tmp_path, needs_root):
    from supervisor.views.status import status_report
    from supervisor.views.status_text import status_json, status_text
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 5\n' + SCREENING)
    machine = LevelMachine(machine_root(tmp_path))
    state = tmp_path / "s"
    kw = dict(machine=machine, stderr=io.StringIO())
    assert start(str(exp), str(state), simulate=False, **kw) == 0

    def boot_until(executions: int) -> None:
        for _ in range(executions + 2):     # a switch boot at most on the way, or the experiment is stuck
            if len(list((state / "executions").iterdir())) >= executions:
                return
            assert boot(state, **kw) == 0
        raise AssertionError(f"no {executions} executions after {executions + 2} boots")

    boot_until(2)     # two executions of the first batch
    report = status_report(str(state))
    sc = report.screening
    assert sc is not None and sc.design == "full factorial"
    first, second = sc.batches
    assert (first.treatments, first.treatments_done, first.runs, first.runs_done) == (4, 2, 4, 2)
    assert (second.treatments, second.treatments_done, second.runs, second.runs_done) == (4, 0, 4, 0)
    assert {first.levels["os"], second.levels["os"]} == {"a", "b"} and not first.boot_check
    assert sc.switches_left == 1          # into the second batch's os level
    text = status_text(report)
    assert (f"screening (full factorial): batch {first.batch} (os={first.levels['os']}): 2/4 treatments done "
            f"(2/4 runs); batch {second.batch} (os={second.levels['os']}): 0/4 treatments done (0/4 runs)") in text
    assert "for the 6 jobs now known (about " in text
    assert "reboots not included" in text and "switch screening levels" not in text
    assert json.loads(status_json(report))["screening"]["batches"][1]["runs"] == 4

    # The boot of the first batch's last job switches into the second's os level before it reboots: the next
    # boot runs the second batch's first job (no boot of its own for the switch).
    boot_until(3)
    switched = len([c for c in machine.commands.calls if c[0] == "switch-os"])
    assert boot(state, **kw) == 0
    assert len([c for c in machine.commands.calls if c[0] == "switch-os"]) == switched + 1
    assert len(list((state / "executions").iterdir())) == 4
    report = status_report(str(state))
    assert report.screening.switches_left == 0
    assert [b.runs_done for b in report.screening.batches] == [4, 0]
    text = status_text(report)
    assert "for the 4 jobs now known (about " in text and "only switch screening levels" not in text


def test_default_whole_plots_switch_between_batches_and_the_analysis_tests_os_against_them(tmp_path, needs_root):
    # batches_per_level's default (2): each os level in two batches, a switch between every two, and the analysis
    # of the export tests os on 4 batch means (2 degrees of freedom), aslr and mode within batches.
    exp = experiment(tmp_path, {"b": "ok"}, extra='seed = 5\n' + SCREENING.replace("batches_per_level = 1", ""))
    machine = LevelMachine(machine_root(tmp_path))
    state = tmp_path / "s"
    run_all(exp, state, machine)
    bundle = native_bundle(StateDir(state))
    runs = bundle["executions"]
    assert len(runs) == 16 and all(r["state"] == "completed" for r in runs)
    os_by_batch = [next(r["screening"]["levels"]["os"] for r in runs if r["screening"]["batch"] == b) for b in range(4)]
    assert sorted(os_by_batch) == ["a", "a", "b", "b"] and all(x != y for x, y in zip(os_by_batch, os_by_batch[1:]))
    assert len([c for c in machine.commands.calls if c[0] == "switch-os"]) in (3, 4)
    from analysis.screen.native import screen_results
    from analysis.screen.report import ScreenOptions

    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    doc = screen_results(str(path), ScreenOptions(), steady_state=False)
    b = doc["responses"]["b"]
    assert b["whole_plot"] == {"factors": ["os"], "batches": 4, "combinations": 2, "dof": 2, "why": None}
    assert b["main_effects"]["os"]["1"]["stratum"] == "between batches"
    assert b["main_effects"]["mode"]["1"]["stratum"] == "within batches"
