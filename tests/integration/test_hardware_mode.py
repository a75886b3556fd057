"""Hardware mode with every seam injected: boot service in a fake root, recorded commands, a recording rebooter."""

from __future__ import annotations

import io
import os

import pytest

from cycle_helpers import RebootRecorder, experiment, fake_root
from supervisor.boot.one_boot import boot
from supervisor.errors import ColdrunError
from supervisor.boot.lifecycle import start
from supervisor.state.schedule import Schedule
from doubles import FakeMachine, RecordingCommands


def test_non_root_start_is_refused(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("running as root: the non-root refusal cannot be observed here (the interpreter under "
                    "/root is not reachable by an unprivileged user to run it as one)")
    exp = experiment(tmp_path, {"a": "ok"})
    with pytest.raises(ColdrunError, match="must run as root"):
        start(str(exp), str(tmp_path / "s"), simulate=False)
    assert not (tmp_path / "s").exists()


def test_hardware_cycle_installs_reboots_and_cleans_up(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("hardware-mode start requires root (it refuses otherwise; see the test above)")
    # benchmark_user = false: the fake runner's interpreter lives under /root, which a fresh
    # benchmark user could not reach (test_runner_access.py covers that refusal).
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"},
                     extra='[platform]\nbenchmark_user = false\n[mail]\nto = ["bench@example.org"]\nquota = 2')
    state = tmp_path / "s"
    root = fake_root(tmp_path)
    commands = RecordingCommands(replies={("systemctl",): (0, "enabled\n", ""), ("sync",): (0, "", ""),
                                          ("/usr/sbin/sendmail",): (0, "", "")})
    plat = RebootRecorder()
    kw = dict(machine=FakeMachine(plat, root=root, commands=commands), stderr=io.StringIO())
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    assert plat.reboots == 1
    assert Schedule.load(state / "schedule").mode == "hardware"
    assert (root.root / "etc/systemd/system/coldrun@.service").is_file()
    marker = root.root / "var/lib/coldrun/active"
    assert marker.read_text().strip() == str(state.absolute())
    assert any(c[:2] == ("systemctl", "enable") for c in commands.calls)
    for expected_reboots in (2, 3):
        assert boot(state, **kw) == 0
        assert plat.reboots == expected_reboots
    assert boot(state, **kw) == 0          # finishing boot: no reboot
    assert plat.reboots == 3 and plat.restored == 1
    sched = Schedule.load(state / "schedule")
    assert sched.status == "finished" and [j.state for j in sched.jobs] == ["C", "C"]
    assert not (root.root / "etc/systemd/system/coldrun@.service").exists()
    assert not marker.exists()       # finished with nothing left to restore
    assert any(c[:2] == ("systemctl", "disable") for c in commands.calls)
    mails = [c for c in commands.calls if c[0] == "/usr/sbin/sendmail"]
    assert len(mails) == 2        # "started" and "finished", both bypass the quota


def test_resume_reenables_a_boot_service_lost_to_a_power_cut_during_start(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("hardware-mode start requires root (it refuses otherwise; see the first test)")
    from supervisor.platforms.boot_service import instance_unit

    exp = experiment(tmp_path, {"a": "ok", "b": "ok", "c": "ok"}, extra="[platform]\nbenchmark_user = false")
    state = tmp_path / "s"
    root = fake_root(tmp_path)
    commands = RecordingCommands(replies={("systemctl",): (0, "enabled\n", ""), ("sync",): (0, "", "")})
    plat = RebootRecorder()
    kw = dict(machine=FakeMachine(plat, root=root, commands=commands), stderr=io.StringIO())
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    wants = root.root / "etc/systemd/system/multi-user.target.wants" / instance_unit(state.absolute())
    wants.parent.mkdir(parents=True)
    wants.touch()                                  # what `systemctl enable` leaves on a real machine

    def enables():
        return sum(c[:2] == ("systemctl", "enable") for c in commands.calls)

    before = enables()
    assert boot(state, **kw) == 0
    assert enables() == before                     # enabled: nothing to do before the reboot
    wants.unlink()                                 # the cut fell before the enable reached the disk
    assert boot(state, **kw) == 0
    assert enables() == before + 1 and plat.reboots == 3
    assert "boot service was not enabled" in kw["stderr"].getvalue()
