import os
import sys
from pathlib import Path

import supervisor
from supervisor.experiment.model import Mail
from supervisor.platforms.factory import make_platform
from supervisor.platforms.mail import MemoryCounter
from supervisor.platforms.simulated import SimulatedPlatform, resume_command
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import SystemRoot
from doubles import FakeClock, RecordingCommands


class Log:
    def __init__(self):
        self.events = []

    def info(self, event, **kw):
        self.events.append(event)

    warning = error = info


def test_every_step_logs_and_changes_nothing(tmp_path):
    log, commands, clock = Log(), RecordingCommands(), FakeClock()
    # Not root: as root, benchmarks run as a fresh user (tests/integration/test_simulated_root.py).
    p = SimulatedPlatform(PlatformPolicy(), tmp_path, root=SystemRoot(tmp_path), commands=commands,
                          clock=clock, log=log, euid=1000)
    assert isinstance(make_platform("simulated", PlatformPolicy(), tmp_path, root=SystemRoot(tmp_path),
                                    commands=commands, clock=clock, log=log), SimulatedPlatform)
    reports = p.apply_and_verify()
    assert reports and all(r.ok and r.action.startswith("simulated") for r in reports)
    assert p.take_baselines() == {}
    p.wait_until_ready({})
    before = p.snapshot()
    assert p.launch_prefix("a:b:c").argv() == []
    p.end_launch("a:b:c")
    result = p.post_checks(before, {})
    assert result.flags == [] and not result.rerun
    assert p.audit()["uname"].split()[0] in ("Linux", "OpenBSD")
    p.restore()
    assert len(log.events) == 8 and all(e.startswith("simulated: would") for e in log.events)
    assert commands.calls == [] and clock.slept == [] and list(tmp_path.iterdir()) == []


def test_machine_steps_between_executions_only_log(tmp_path):
    log, commands = Log(), RecordingCommands()
    p = make_platform("simulated", PlatformPolicy(), tmp_path / "s", root=SystemRoot(tmp_path), commands=commands,
                      clock=FakeClock(), log=log)
    p.claim_machine()
    p.install_boot_service()
    p.ensure_boot_service()
    p.mail(Mail(to=["a@example.org"]), MemoryCounter(), "started", "body")
    p.remove_boot_service()
    p.reclaim_machine()
    p.release_machine()
    assert len(log.events) == 7 and all(e.startswith("simulated: would") for e in log.events)
    assert commands.calls == [] and list(tmp_path.iterdir()) == []


def test_reboot_reexecutes_the_same_coldrun_whatever_the_cwd(tmp_path):
    argv, env = resume_command(tmp_path / "s")
    # -P: the cwd is not put on sys.path, so no `supervisor/` there can shadow the running coldrun
    # (tests/integration/test_demo_run.py runs it with a decoy package in the cwd).
    assert argv == [sys.executable, "-P", "-m", "supervisor", "resume", str(tmp_path / "s")]

    package_root = str(Path(supervisor.__file__).resolve().parents[1])
    found = [str(Path(p).resolve()) for p in sys.path if p not in ("", ".", os.getcwd())]
    found += env.get("PYTHONPATH", "").split(os.pathsep)
    assert package_root in found
