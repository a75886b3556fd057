"""Small experiments run in-process on platform doubles that record reboots instead of re-executing."""

from __future__ import annotations

import io
import sys
import textwrap
from pathlib import Path

from doubles import FakeMachine
from supervisor.boot.one_boot import boot
from supervisor.boot.lifecycle import start
from supervisor.platforms.base import Platform, PostCheckResult
from supervisor.platforms.simulated import SimulatedPlatform
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import SystemRoot
from root_runs import runs_as_invoker  # tests/root_runs.py: as root, benchmarks run as you

FAKE_RUNNER = Path(__file__).resolve().parent / "integration" / "runners" / "fake_runner.py"


def experiment(tmp: Path, behaviours: dict[str, str], *, executions: int | None = 1, extra: str = "",
               rerun: str = "", iterations: int = 3) -> Path:
    """``executions=None`` leaves the count out (a [stop] table in ``extra`` decides it)."""
    for bench, behaviour in behaviours.items():
        d = tmp / "benchmarks" / bench
        d.mkdir(parents=True, exist_ok=True)
        (d / "b.txt").write_text(behaviour)
    benches = "\n".join(f"{b} = {i + 1}" for i, b in enumerate(behaviours))
    text = textwrap.dedent(f"""\
        name = "unit"
        {'' if executions is None else f'executions = {executions}'}
        execution_timeout = "5s"
        {extra}
        [waits]
        boot_settle = 0
        sync = 0
        [rerun]
        {rerun}
        [benchmarks]
        {{benches}}
        [variants.v]
        target = "b.txt"
        [vms.fake]
        runner = "external"
        executable = "{sys.executable}"
        args = ["{FAKE_RUNNER}"]
        iterations = {iterations}
        variants = ["v"]
        """).replace("{benches}", benches)
    p = tmp / "exp.toml"
    p.write_text(runs_as_invoker(text))
    return p


class ScriptedPlatform(SimulatedPlatform):
    """Simulated, except post_checks answers from a script (a list of PostCheckResult, last repeats)
    and a reboot is counted instead of re-executing."""

    def __init__(self, script: list[PostCheckResult] | None = None):
        super().__init__(PlatformPolicy(), log=_Quiet())
        self.script = list(script or [PostCheckResult()])
        self.calls = 0
        self.reboots = 0

    def post_checks(self, before, measurements):
        self.calls += 1
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def reboot(self):
        self.reboots += 1


class _Quiet:
    def __getattr__(self, name):
        return lambda *a, **k: None


def start_quiet(exp: Path, state: Path, platform: Platform | None = None, run_length=None) -> int:
    return start(str(exp), str(state), simulate=True, stderr=io.StringIO(),
                 machine=FakeMachine(platform or ScriptedPlatform(), run_length=run_length))


def boot_quiet(state: Path, platform: Platform | None = None, run_length=None) -> int:
    return boot(state, stderr=io.StringIO(), machine=FakeMachine(platform or ScriptedPlatform(),
                                                                 run_length=run_length))


def run_to_end(state: Path, platform=None, limit: int = 100, run_length=None) -> int:
    from supervisor.state.schedule import Schedule
    for _ in range(limit):
        rc = boot_quiet(state, platform, run_length)
        sched = Schedule.load(state / "schedule")
        if rc != 0 or sched.status != "running":
            return rc
    raise AssertionError("did not finish")


class RebootRecorder(ScriptedPlatform):
    """Hardware mode's platform: the real boot service, active marker and mail (through the FakeMachine's
    root and commands), simulated controls and checks, and reboots and restores counted instead of done."""

    claim_machine = Platform.claim_machine
    reclaim_machine = Platform.reclaim_machine
    release_machine = Platform.release_machine
    install_boot_service = Platform.install_boot_service
    ensure_boot_service = Platform.ensure_boot_service
    remove_boot_service = Platform.remove_boot_service
    mail = Platform.mail

    def __init__(self):
        super().__init__([PostCheckResult()])
        self.restored = 0

    def restore(self):
        self.restored += 1


# A machine whose / (and so the tests' tmp dirs) is one ext4 disk, as proc(5)'s mountinfo lines read (the
# cgroup-elsewhere fixture's first line): hardware mode refuses a state dir that a reboot would empty.
ROOT_ON_DISK = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"


def root_on_disk(root: Path) -> None:
    (root / "proc" / "self").mkdir(parents=True, exist_ok=True)
    (root / "proc" / "self" / "mountinfo").write_text(ROOT_ON_DISK)


def fake_root(tmp):
    """A SystemRoot under tmp with the directories the boot service writes to, / on a disk."""
    root = tmp / "root"
    (root / "run" / "systemd" / "system").mkdir(parents=True)
    (root / "etc" / "systemd" / "system").mkdir(parents=True)
    root_on_disk(root)
    return SystemRoot(root)
