"""Boot service install/remove against a fake system root and recorded commands."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import structlog

from supervisor.platforms import boot_service as bs
from supervisor.errors import ColdrunError
from supervisor.system import SystemRoot
from doubles import RecordingCommands

REPO = Path(__file__).resolve().parents[3]
STATE = Path("/var/lib/coldrun/exp-1")
UNIT = "coldrun@var-lib-coldrun-exp\\x2d1.service"
EXE = "/opt/venv/bin/coldrun"
LOG = structlog.get_logger("test")


def systemd_root(tmp_path: Path) -> SystemRoot:
    (tmp_path / "run/systemd/system").mkdir(parents=True)
    (tmp_path / "etc/systemd/system").mkdir(parents=True)
    return SystemRoot(tmp_path)


def openbsd_root(tmp_path: Path) -> SystemRoot:
    (tmp_path / "etc/rc.d").mkdir(parents=True)
    (tmp_path / "etc/rc.d/rc.subr").write_text("# rc.subr\n")
    return SystemRoot(tmp_path)


def systemd_commands(is_enabled: str = "enabled") -> RecordingCommands:
    return RecordingCommands(replies={
        ("systemctl", "daemon-reload"): (0, "", ""),
        ("systemctl", "enable"): (0, "", ""),
        ("systemctl", "disable"): (0, "", ""),
        ("systemctl", "is-enabled"): (0 if is_enabled == "enabled" else 1, is_enabled + "\n", ""),
        ("sync",): (0, "", ""),
    })


# --- instance names ---------------------------------------------------------

@pytest.mark.parametrize("path, expected", [
    ("/var/lib/coldrun/exp-1", "var-lib-coldrun-exp\\x2d1"),
    ("/srv/bench//run_2/", "srv-bench-run_2"),
    ("/home/me/.coldrun/a b", "home-me-.coldrun-a\\x20b"),
    ("/.hidden/x", "\\x2ehidden-x"),
    ("/", "-"),
    ("/tmp/caf\u00e9", "tmp-caf\\xc3\\xa9"),
])
def test_escape_path_matches_systemd_rules(path, expected):
    assert bs.escape_path(path) == expected


@pytest.mark.parametrize("path", ["/var/lib/coldrun/exp-1", "/srv/bench//run_2/",
                                  "/home/me/.coldrun/a b", "/a/b.c/d:e/f\\g", "/tmp/x~y+z"])
def test_escape_path_agrees_with_systemd_escape(path):
    if shutil.which("systemd-escape") is None:
        pytest.skip("systemd-escape is not installed on this machine")
    real = subprocess.run(["systemd-escape", "--path", path], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert bs.escape_path(path) == real


# --- systemd ----------------------------------------------------------------

def test_install_writes_template_enables_instance_and_syncs(tmp_path):
    root, cmds = systemd_root(tmp_path), systemd_commands()
    info = bs.install_and_enable(STATE, root=root, commands=cmds, log=LOG, executable=EXE)
    unit_file = tmp_path / "etc/systemd/system/coldrun@.service"
    text = unit_file.read_text()
    assert f"ExecStart={EXE} resume %f" in text
    assert oct(unit_file.stat().st_mode & 0o777) == "0o644"
    assert cmds.calls == [("systemctl", "daemon-reload"), ("systemctl", "enable", UNIT),
                          ("systemctl", "is-enabled", UNIT), ("sync",)]
    assert info["unit"] == UNIT and info["unit_file_written"] is True


def test_install_is_idempotent(tmp_path):
    root = systemd_root(tmp_path)
    bs.install_and_enable(STATE, root=root, commands=systemd_commands(), log=LOG, executable=EXE)
    cmds = systemd_commands()
    info = bs.install_and_enable(STATE, root=root, commands=cmds, log=LOG, executable=EXE)
    assert info["unit_file_written"] is False
    assert ("systemctl", "enable", UNIT) in cmds.calls and cmds.calls[-1] == ("sync",)
    assert not list((tmp_path / "etc/systemd/system").glob(".*.tmp"))


def test_install_replaces_a_unit_from_another_coldrun_install(tmp_path):
    root = systemd_root(tmp_path)
    bs.install_and_enable(STATE, root=root, commands=systemd_commands(), log=LOG,
                          executable="/old/venv/bin/coldrun")
    info = bs.install_and_enable(STATE, root=root, commands=systemd_commands(), log=LOG,
                                 executable=EXE)
    assert info["unit_file_written"] is True
    assert "/old/venv" not in (tmp_path / "etc/systemd/system/coldrun@.service").read_text()


def test_install_refuses_when_the_instance_does_not_end_up_enabled(tmp_path):
    root = systemd_root(tmp_path)
    with pytest.raises(ColdrunError, match="not enabled"):
        bs.install_and_enable(STATE, root=root, commands=systemd_commands("disabled"),
                              log=LOG, executable=EXE)


def test_install_reports_a_failing_systemctl_in_one_line(tmp_path):
    root = systemd_root(tmp_path)
    cmds = systemd_commands()
    cmds.replies[("systemctl", "enable")] = (1, "", "Failed to enable unit: Access denied\n")
    with pytest.raises(ColdrunError) as e:
        bs.install_and_enable(STATE, root=root, commands=cmds, log=LOG, executable=EXE)
    assert "Access denied" in str(e.value) and "\n" not in str(e.value)


def test_no_init_system_is_a_clear_error(tmp_path):
    with pytest.raises(ColdrunError, match="simulate-reboots"):
        bs.install_and_enable(STATE, root=SystemRoot(tmp_path), commands=systemd_commands(),
                              log=LOG, executable=EXE)


def _installed(tmp_path: Path, unit: str = UNIT) -> None:
    d = tmp_path / "etc/systemd/system"
    (d / "coldrun@.service").write_text(bs.render_systemd_unit(EXE))
    (d / "multi-user.target.wants").mkdir(exist_ok=True)
    os.symlink("/etc/systemd/system/coldrun@.service", d / "multi-user.target.wants" / unit)


def test_disable_removes_the_unit_and_its_links(tmp_path):
    root = systemd_root(tmp_path)
    _installed(tmp_path)
    assert bs.is_enabled(STATE, root=root)
    cmds = systemd_commands()
    info = bs.disable_and_remove(STATE, root=root, commands=cmds, log=LOG)
    assert cmds.calls == [("systemctl", "disable", UNIT), ("systemctl", "daemon-reload"), ("sync",)]
    assert not (tmp_path / "etc/systemd/system/coldrun@.service").exists()
    assert not list((tmp_path / "etc/systemd/system").rglob("coldrun@*"))
    assert info["template_removed"] is True
    assert not bs.is_enabled(STATE, root=root)


def test_disable_keeps_the_template_while_another_experiment_uses_it(tmp_path):
    root = systemd_root(tmp_path)
    _installed(tmp_path)
    other = bs.instance_unit("/srv/other")
    os.symlink("/etc/systemd/system/coldrun@.service",
               tmp_path / "etc/systemd/system/multi-user.target.wants" / other)
    bs.disable_and_remove(STATE, root=root, commands=systemd_commands(), log=LOG)
    assert (tmp_path / "etc/systemd/system/coldrun@.service").exists()
    assert not (tmp_path / "etc/systemd/system/multi-user.target.wants" / UNIT).is_symlink()


def test_disable_cleans_up_after_a_cut_that_left_only_the_link(tmp_path):
    # The template is gone (cut mid-removal, or removed by hand) but the link survived.
    root = systemd_root(tmp_path)
    _installed(tmp_path)
    (tmp_path / "etc/systemd/system/coldrun@.service").unlink()
    cmds = systemd_commands()
    bs.disable_and_remove(STATE, root=root, commands=cmds, log=LOG)
    assert ("systemctl", "disable", UNIT) not in cmds.calls
    assert not (tmp_path / "etc/systemd/system/multi-user.target.wants" / UNIT).is_symlink()


def test_disable_when_nothing_is_installed_is_harmless(tmp_path):
    root = systemd_root(tmp_path)
    cmds = systemd_commands()
    info = bs.disable_and_remove(STATE, root=root, commands=cmds, log=LOG)
    assert info["template_removed"] is False
    assert cmds.calls == [("systemctl", "daemon-reload"), ("sync",)]


def test_disable_falls_back_to_removing_links_when_systemctl_fails(tmp_path):
    root = systemd_root(tmp_path)
    _installed(tmp_path)
    cmds = systemd_commands()
    cmds.replies[("systemctl", "disable")] = (1, "", "Failed to disable unit\n")
    bs.disable_and_remove(STATE, root=root, commands=cmds, log=LOG)
    assert not list((tmp_path / "etc/systemd/system").rglob("coldrun@*"))


# --- OpenBSD ----------------------------------------------------------------

def rcctl_commands() -> RecordingCommands:
    return RecordingCommands(replies={("rcctl",): (0, "", ""), ("sync",): (0, "", "")})


def venv_coldrun(tmp_path: Path) -> str:
    """A coldrun console script as pip writes it (the rc.d script's pexp names its interpreter)."""
    exe = tmp_path / "opt/venv/bin/coldrun"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/opt/venv/bin/python3\nimport sys\n")
    return str(exe)


def test_openbsd_install_writes_rc_script_and_sets_flags(tmp_path):
    root, cmds = openbsd_root(tmp_path), rcctl_commands()
    exe = venv_coldrun(tmp_path)
    bs.install_and_enable(STATE, root=root, commands=cmds, log=LOG, executable=exe)
    script = tmp_path / "etc/rc.d/coldrun"
    assert f'daemon="{exe}"' in script.read_text()
    assert 'pexp="/opt/venv/bin/python3 ${daemon}' in script.read_text()
    assert oct(script.stat().st_mode & 0o777) == "0o555"
    assert cmds.calls == [("rcctl", "enable", "coldrun"),
                          ("rcctl", "set", "coldrun", "flags", "resume", str(STATE)),
                          ("sync",)]


def test_openbsd_disable_removes_rc_script(tmp_path):
    root = openbsd_root(tmp_path)
    bs.install_and_enable(STATE, root=root, commands=rcctl_commands(), log=LOG, executable=venv_coldrun(tmp_path))
    (tmp_path / "etc/rc.conf.local").write_text("pkg_scripts=postgresql coldrun\n")
    assert bs.is_enabled(STATE, root=root)
    cmds = rcctl_commands()
    bs.disable_and_remove(STATE, root=root, commands=cmds, log=LOG)
    assert ("rcctl", "disable", "coldrun") in cmds.calls
    assert not (tmp_path / "etc/rc.d/coldrun").exists()


# --- the unit text and the shipped files -------------------------------------

def test_shipped_files_are_what_coldrun_installs():
    assert (REPO / "systemd/coldrun@.service").read_text() == bs.SYSTEMD_UNIT_TEMPLATE
    assert (REPO / "systemd/coldrun.rc").read_text() == bs.OPENBSD_RC_TEMPLATE


def test_unit_never_times_out_never_restarts_and_runs_after_boot():
    lines = set(bs.render_systemd_unit(EXE).splitlines())
    for wanted in ("TimeoutStartSec=infinity", "Restart=no", "After=multi-user.target",
                   "WantedBy=multi-user.target", "Type=exec", "StandardOutput=journal"):
        assert wanted in lines


def test_systemd_accepts_the_rendered_unit(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed on this machine")
    exe = tmp_path / "coldrun"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    unit = tmp_path / UNIT
    unit.write_text(bs.render_systemd_unit(str(exe)))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                       capture_output=True, text=True)
    # verify also complains about the host's own units when PID 1 is not
    # systemd; only lines about our file matter.
    ours = [l for l in (r.stderr + r.stdout).splitlines() if UNIT in l or "coldrun@" in l]
    assert not ours, ours


def test_coldrun_executable_is_the_running_command(tmp_path):
    exe = tmp_path / "bin" / "coldrun"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert bs.coldrun_executable(str(exe)) == str(exe)
