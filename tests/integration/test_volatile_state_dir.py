"""A hardware-mode state dir that a reboot would empty (issue 26, item 1): refused before anything changes; and
a state dir lost anyway leaves on the machine what `abort` needs to put it back."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from cycle_helpers import ROOT_ON_DISK, RebootRecorder, experiment, fake_root
from doubles import FakeMachine, RecordingCommands
from supervisor.boot.lifecycle import abort, start
from supervisor.errors import ColdrunError
from supervisor.platforms.kept_state import undo_log
from supervisor.platforms.volatile import lost_at_boot
from supervisor.system import SystemRoot


@pytest.fixture
def as_root():
    if os.geteuid() != 0:
        pytest.skip("hardware-mode start requires root (test_hardware_mode.py shows the refusal)")


def replies():
    return {("systemctl",): (0, "enabled\n", ""), ("sync",): (0, "", "")}


def refused_start(tmp_path, root, state) -> str:
    exp = experiment(tmp_path, {"a": "ok"})
    commands = RecordingCommands(replies=replies())
    plat = RebootRecorder()
    with pytest.raises(ColdrunError) as e:
        start(str(exp), str(state), simulate=False, stderr=io.StringIO(),
              machine=FakeMachine(plat, root=root, commands=commands))
    # Refused before anything was written or changed.
    assert not state.exists() and commands.calls == [] and plat.reboots == 0
    assert not (root.root / "var/lib/coldrun").exists()
    assert "\n" not in str(e.value)
    return str(e.value)


def test_a_state_dir_on_tmpfs_is_refused(tmp_path, as_root):
    root = fake_root(tmp_path)
    ram = tmp_path / "ram"
    (root.root / "proc/self/mountinfo").write_text(
        ROOT_ON_DISK + f"41 22 0:35 / {str(ram).replace(' ', chr(92) + '040')} rw,nosuid - tmpfs tmpfs rw\n")
    msg = refused_start(tmp_path, root, ram / "state")
    assert msg == (f"{ram / 'state'}: state dir is on a tmpfs ({ram}), which a reboot empties; choose a "
                   f"--state-dir on a disk that survives a reboot, e.g. /var/lib/coldrun/<name>")


def test_a_state_dir_that_tmpfiles_empties_at_boot_is_refused(tmp_path, as_root):
    """Debian's /usr/lib/tmpfiles.d/tmp.conf says `D /tmp 1777 root root -`: /tmp is on disk yet emptied."""
    root = fake_root(tmp_path)
    cleared = tmp_path / "tmp"
    (root.root / "usr/lib/tmpfiles.d").mkdir(parents=True)
    (root.root / "usr/lib/tmpfiles.d/tmp.conf").write_text(f"# as Debian's\nD {cleared} 1777 root root -\n")
    msg = refused_start(tmp_path, root, cleared / "state")
    assert msg.startswith(f"{cleared / 'state'}: state dir would be lost: /usr/lib/tmpfiles.d/tmp.conf empties "
                          f"{cleared} at every boot") and "/var/lib/coldrun/<name>" in msg


def test_tmpfiles_rules_age_override_and_exemptions(tmp_path):
    root = tmp_path / "root"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(ROOT_ON_DISK)
    for d in ("usr/lib/tmpfiles.d", "etc/tmpfiles.d"):
        (root / d).mkdir(parents=True)
    (root / "usr/lib/tmpfiles.d/tmp.conf").write_text("D /tmp 1777 root root -\nq /var/tmp 1777 root root 30d\n"
                                                      "d /var/lib 0755 - - -\n")
    sysroot = SystemRoot(root)
    assert lost_at_boot(sysroot, Path("/tmp/exp")).startswith("/tmp/exp: state dir would be lost: "
                                                              "/usr/lib/tmpfiles.d/tmp.conf empties /tmp")
    assert "deletes files under /var/tmp older than 30d" in lost_at_boot(sysroot, Path("/var/tmp/exp"))
    assert lost_at_boot(sysroot, Path("/var/lib/coldrun/exp")) is None
    # /etc overrides /usr/lib by file name: an admin who keeps /tmp.
    (root / "etc/tmpfiles.d/tmp.conf").write_text("d /tmp 1777 root root -\n")
    assert lost_at_boot(sysroot, Path("/tmp/exp")) is None
    # An x line exempts a path from the age clean-up.
    (root / "etc/tmpfiles.d/keep.conf").write_text("x /var/tmp/exp\n")
    assert lost_at_boot(sysroot, Path("/var/tmp/exp")) is None


def test_abort_restores_a_wiped_state_dir_s_settings_from_the_machine_s_copy(tmp_path, as_root):
    root = fake_root(tmp_path)
    setting = root.root / "proc/sys/kernel/perf_event_max_sample_rate"
    setting.parent.mkdir(parents=True)
    setting.write_text("100000\n")
    exp = experiment(tmp_path, {"a": "ok"})
    state = tmp_path / "disk" / "state"
    commands = RecordingCommands(replies=replies())
    kw = dict(machine=FakeMachine(RebootRecorder(), root=root, commands=commands), stderr=io.StringIO())
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    # What a control does: the way back made durable first, then the change.
    undo_log(root, state).record("perf_max_sample_rate", "/proc/sys/kernel/perf_event_max_sample_rate",
                                 {"action": "write", "path": "/proc/sys/kernel/perf_event_max_sample_rate",
                                  "value": "100000\n"})
    setting.write_text("1\n")
    assert not (state / "undo.json").exists()           # kept outside the state dir
    shutil.rmtree(state)                                  # the disk was wiped
    assert abort(str(state), **kw) == 0
    assert setting.read_text() == "100000\n"
    assert not (root.root / "var/lib/coldrun/active").exists()
    assert any(c[:2] == ("systemctl", "disable") for c in commands.calls)
    assert not list((root.root / "etc/systemd/system").glob("*.wants/coldrun@*"))
    assert "state dir is gone with its results" in kw["stderr"].getvalue()
    # Nothing left of it: a second abort says what it always said of a directory that is no state dir.
    with pytest.raises(ColdrunError, match="no such state dir"):
        abort(str(state), **kw)
