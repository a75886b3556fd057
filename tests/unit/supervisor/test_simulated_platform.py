import pytest

from supervisor.platforms import make_platform
from supervisor.platforms.simulated import SimulatedPlatform
from supervisor.platforms.policy import PlatformPolicy
from supervisor.system import FakeClock, RecordingCommands, SystemRoot


class Log:
    def __init__(self):
        self.events = []

    def info(self, event, **kw):
        self.events.append(event)

    warning = error = info


def test_every_step_logs_and_changes_nothing(tmp_path):
    log, commands, clock = Log(), RecordingCommands(), FakeClock()
    # Not root: as root, benchmarks run as a fresh user (tests/unit/state/test_simulated_root.py).
    p = SimulatedPlatform(PlatformPolicy(), tmp_path, root=SystemRoot(tmp_path), commands=commands,
                          clock=clock, log=log, euid=1000)
    assert isinstance(make_platform("simulated", PlatformPolicy(), tmp_path, root=SystemRoot(tmp_path),
                                    commands=commands, clock=clock, log=log), SimulatedPlatform)
    reports = p.apply_and_verify()
    assert reports and all(r["ok"] and r["action"].startswith("simulated") for r in reports)
    assert p.take_baselines() == {}
    p.wait_until_ready({})
    before = p.snapshot()
    assert p.launch_prefix("a:b:c") == []
    p.end_launch("a:b:c")
    result = p.post_checks(before, {})
    assert result.flags == [] and not result.rerun
    assert p.audit()["uname"].split()[0] in ("Linux", "OpenBSD")
    p.restore()
    assert len(log.events) == 8 and all(e.startswith("simulated: would") for e in log.events)
    assert commands.calls == [] and clock.slept == [] and list(tmp_path.iterdir()) == []
    with pytest.raises(AssertionError, match="re-executes"):
        p.reboot()
