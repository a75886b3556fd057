"""The system-wide active-experiment marker and the replay of a dead experiment's undo log at start."""

from __future__ import annotations

import fcntl
import io
import json
import os

import pytest

from cycle_helpers import RebootRecorder, ScriptedPlatform, experiment, fake_root
from supervisor.boot.one_boot import boot
from supervisor.errors import ColdrunError
from supervisor.boot.lifecycle import abort, start
from supervisor.state.schedule import Schedule
from doubles import FakeMachine, RecordingCommands
from supervisor.platforms.factory import Machine

ASLR = "/proc/sys/kernel/randomize_va_space"
MARKER = "var/lib/coldrun/active"

# Hardware-mode starts refuse non-root users (see test_hardware_mode.py).
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="hardware-mode start requires root (it refuses "
                                                         "otherwise; see test_hardware_mode.py)")


def hw_experiment(tmp):
    return experiment(tmp, {"a": "ok"}, extra="[platform]\nbenchmark_user = false")


def commands():
    return RecordingCommands(replies={("systemctl",): (0, "enabled\n", ""), ("sync",): (0, "", "")})


def dead_experiment(tmp, root, entries):
    """A state dir whose experiment died with settings changed: undo log entries, marker naming it."""
    old = tmp / "old-state"
    old.mkdir()
    (old / "undo.json").write_text(json.dumps({"version": 1, "entries": entries}))
    marker = root.root / MARKER
    marker.parent.mkdir(parents=True)
    marker.write_text(f"{old}\n")
    return old


def aslr_root(tmp):
    root = fake_root(tmp)
    (root.root / "proc/sys/kernel").mkdir(parents=True)
    (root.root / ASLR.lstrip("/")).write_text("0\n")     # the dead experiment turned ASLR off
    return root


@needs_root
def test_start_replays_a_dead_experiments_undo_log_first(tmp_path):
    root = aslr_root(tmp_path)
    old = dead_experiment(tmp_path, root, [{"control": "aslr", "key": ASLR, "action": "write", "path": ASLR,
                                            "value": "2\n"}])
    state, err = tmp_path / "s", io.StringIO()
    rc = start(str(hw_experiment(tmp_path)), str(state), simulate=False, stderr=err,
               machine=FakeMachine(RebootRecorder(), root=root, commands=commands()))
    assert rc == 0
    assert (root.root / ASLR.lstrip("/")).read_text() == "2\n"
    assert not (old / "undo.json").exists()          # replayed entries are dropped
    assert "died without restoring" in err.getvalue()
    assert (root.root / MARKER).read_text().strip() == str(state.absolute())


@needs_root
def test_start_refuses_when_the_replay_fails_and_changes_nothing(tmp_path):
    root = fake_root(tmp_path)
    argv = ["wrmsr", "-p", "0", "0x1a0", "0x850089"]
    old = dead_experiment(tmp_path, root, [{"control": "turbo", "key": "msr:0x1a0:cpu0", "action": "run",
                                            "argv": argv}])
    cmds = commands()
    cmds.replies[("wrmsr",)] = (1, "", "wrmsr: open: No such file or directory")
    plat = RebootRecorder()
    with pytest.raises(ColdrunError) as e:
        start(str(hw_experiment(tmp_path)), str(tmp_path / "s"), simulate=False, stderr=io.StringIO(),
              machine=FakeMachine(plat, root=root, commands=cmds))
    line = str(e.value)
    assert "\n" not in line and "could not restore" in line and "nothing was started" in line
    assert "wrmsr -p 0 0x1a0 0x850089 failed" in line
    assert tuple(argv) in cmds.calls
    # Nothing of the new experiment happened: no schedule, no boot service, no reboot; the marker and the
    # entry stay so the next start tries again.
    assert not (tmp_path / "s" / "schedule").exists()
    assert not any(c[:2] == ("systemctl", "enable") for c in cmds.calls)
    assert plat.reboots == 0
    assert (root.root / MARKER).read_text().strip() == str(old)
    assert json.loads((old / "undo.json").read_text())["entries"][0]["argv"] == argv


@needs_root
def test_start_refuses_while_the_marked_experiment_holds_its_lock(tmp_path):
    root = aslr_root(tmp_path)
    old = dead_experiment(tmp_path, root, [{"control": "aslr", "key": ASLR, "action": "write", "path": ASLR,
                                            "value": "2\n"}])
    fd = os.open(old / "lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(ColdrunError, match="another experiment is running"):
            start(str(hw_experiment(tmp_path)), str(tmp_path / "s"), simulate=False, stderr=io.StringIO(),
                  machine=FakeMachine(RebootRecorder(), root=root, commands=commands()))
    finally:
        os.close(fd)
    assert (root.root / ASLR.lstrip("/")).read_text() == "0\n"      # not touched behind its back


@needs_root
def test_marker_naming_a_vanished_or_clean_dir_is_no_obstacle(tmp_path):
    root = fake_root(tmp_path)
    marker = root.root / MARKER
    marker.parent.mkdir(parents=True)
    marker.write_text(f"{tmp_path / 'gone'}\n")
    state = tmp_path / "s"
    err = io.StringIO()
    assert start(str(hw_experiment(tmp_path)), str(state), simulate=False, stderr=err,
                 machine=FakeMachine(RebootRecorder(), root=root, commands=commands())) == 0
    assert "no longer exists" in err.getvalue()
    assert marker.read_text().strip() == str(state.absolute())


@needs_root
def test_abort_removes_the_marker_but_a_pending_undo_log_keeps_it(tmp_path):
    root = fake_root(tmp_path)
    cmds = commands()
    kw = dict(machine=Machine(root=root, commands=cmds), stderr=io.StringIO())   # abort on the real platform
    marker = root.root / MARKER
    exp = hw_experiment(tmp_path)
    assert start(str(exp), str(tmp_path / "s1"), simulate=False, stderr=io.StringIO(),
                 machine=FakeMachine(RebootRecorder(), root=root, commands=cmds)) == 0
    assert marker.exists()
    assert abort(str(tmp_path / "s1"), **kw) == 0 and not marker.exists()

    state = tmp_path / "s2"
    assert start(str(exp), str(state), simulate=False, stderr=io.StringIO(),
                 machine=FakeMachine(RebootRecorder(), root=root, commands=cmds)) == 0
    # An entry abort's restore cannot undo (the fake root has no /proc): the marker stays for the next start.
    (state / "undo.json").write_text(json.dumps({"version": 1, "entries": [
        {"control": "aslr", "key": ASLR, "action": "write", "path": ASLR, "value": "2\n"}]}))
    assert abort(str(state), **kw) == 0 and marker.exists()
    assert Schedule.load(state / "schedule").status == "aborted"


@needs_root
def test_finishing_removes_the_marker(tmp_path):
    root = fake_root(tmp_path)
    state = tmp_path / "s"
    plat = RebootRecorder()
    kw = dict(machine=FakeMachine(plat, root=root, commands=commands()), stderr=io.StringIO())
    assert start(str(hw_experiment(tmp_path)), str(state), simulate=False, **kw) == 0
    marker = root.root / MARKER
    assert marker.exists()
    assert boot(state, **kw) == 0        # runs the one job
    assert marker.exists()
    assert boot(state, **kw) == 0        # finishes
    assert Schedule.load(state / "schedule").status == "finished" and not marker.exists()


def test_simulated_start_leaves_the_marker_alone(tmp_path):
    root = fake_root(tmp_path)
    # The real simulated platform (re-execution replaced by a count), with the seams of the machine.
    assert start(str(hw_experiment(tmp_path)), str(tmp_path / "s"), simulate=True, stderr=io.StringIO(),
                 machine=FakeMachine(ScriptedPlatform(), root=root, commands=commands())) == 0
    assert not (root.root / MARKER).exists()


@needs_root
def test_continue_marks_the_experiment_again_unless_another_is_active(tmp_path):
    from supervisor.boot.lifecycle import continue_stopped
    root = fake_root(tmp_path)
    cmds = commands()
    kw = dict(machine=FakeMachine(RebootRecorder(), root=root, commands=cmds), stderr=io.StringIO())
    marker = root.root / MARKER
    exp = hw_experiment(tmp_path)
    s1, s2 = tmp_path / "s1", tmp_path / "s2"
    assert start(str(exp), str(s1), simulate=False, **kw) == 0
    Schedule.load(s1 / "schedule").set_status("stopped")
    assert start(str(exp), str(s2), simulate=False, **kw) == 0
    (s2 / "undo.json").write_text(json.dumps({"version": 1, "entries": [
        {"control": "aslr", "key": ASLR, "action": "write", "path": ASLR, "value": "2\n"}]}))
    with pytest.raises(ColdrunError, match="another experiment is active on this machine"):
        continue_stopped(str(s1), machine=Machine(root=root, commands=cmds), stderr=io.StringIO())
    assert Schedule.load(s1 / "schedule").status == "stopped"
    assert marker.read_text().strip() == str(s2.absolute())
    (s2 / "undo.json").unlink()          # s2 restored everything
    continue_stopped(str(s1), machine=Machine(root=root, commands=cmds), stderr=io.StringIO())
    assert Schedule.load(s1 / "schedule").status == "running"
    assert marker.read_text().strip() == str(s1.absolute())
