"""The OpenBSD rc.d script coldrun installs, run under a POSIX shell (dash) with a stand-in for
rc.subr (tests/fixtures/openbsd_rc/rc.subr: its pexp and `pgrep -xf` rules), against a real
process started the way rc starts coldrun: the venv's #! interpreter running the coldrun script."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.platforms import boot_service as bs

REPO = Path(__file__).resolve().parents[3]
RC_SUBR = REPO / "tests/fixtures/openbsd_rc/rc.subr"


@pytest.fixture
def rc(tmp_path):
    """Runs `sh /etc/rc.d/coldrun ACTION` with flags as `rcctl set coldrun flags resume DIR` leaves them."""
    for tool in ("dash", "pgrep"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    # coldrun as pip installs it (the same #! line as this venv's console script), sleeping instead of running.
    installed = Path(sys.executable).parent / "coldrun"
    shebang = installed.read_text().splitlines()[0] if installed.exists() else f"#!{sys.executable}"
    exe = tmp_path / "venv/bin/coldrun"
    exe.parent.mkdir(parents=True)
    exe.write_text(shebang + "\nimport time\ntime.sleep(60)\n")
    exe.chmod(0o755)
    state = tmp_path / "exp-1"
    script = tmp_path / "rc.d/coldrun"
    script.parent.mkdir()
    started: list[int] = []

    def run(action: str, text: str | None = None) -> subprocess.CompletedProcess:
        script.write_text((text or bs.render_openbsd_rc(str(exe))).replace("/etc/rc.d/rc.subr", str(RC_SUBR)))
        env = {**os.environ, "coldrun_flags": f"resume {state}", "daemon_timeout": "2"}
        return subprocess.run(["dash", str(script), action], env=env, capture_output=True, text=True, timeout=30)

    def running() -> list[int]:
        out = subprocess.run(["pgrep", "-f", f"{exe} resume {state}"], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        started.extend(pids)
        return pids

    run.running = running
    run.exe, run.state = exe, state
    yield run
    for pid in set(started):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_check_matches_the_process_rc_started(rc):
    start = rc("start")
    assert start.returncode == 0 and start.stdout.strip() == "coldrun(ok)", start
    assert len(rc.running()) == 1
    check = rc("check")
    assert (check.returncode, check.stdout.strip()) == (0, "coldrun(ok)")


def test_the_old_pexp_never_matched(rc):
    """Before: pexp was rc.subr's default (the coldrun script and its flags), which is not the command line."""
    old = bs.render_openbsd_rc(str(rc.exe)).split("\npexp=")[0] + "\nrc_bg=YES\nrc_cmd $1\n"
    start = rc("start", old)
    assert start.stdout.strip() == "coldrun(timeout)"    # rc waited daemon_timeout at every boot
    assert len(rc.running()) == 1                          # though coldrun was running
    assert rc("check", old).returncode == 1


def test_stop_restart_and_reload_are_refused_and_leave_the_execution_running(rc):
    assert rc("start").returncode == 0
    for action in ("stop", "restart", "reload"):
        r = rc(action)
        assert r.returncode == 1 and f"{action} is not supported" in r.stderr, r
    assert len(rc.running()) == 1


@pytest.mark.parametrize("first_lines, expected", [
    ("#!/opt/venv/bin/python3\n", ["/opt/venv/bin/python3"]),
    ("#!/usr/bin/env python3\n", ["python3"]),
    ("#!/bin/sh\n'''exec' /very/long/venv/bin/python3 \"$0\" \"$@\"\n' '''\n", ["/very/long/venv/bin/python3"]),
    ("\x7fELF", []),
])
def test_the_interpreter_is_what_the_kernel_puts_first(tmp_path, first_lines, expected):
    exe = tmp_path / "coldrun"
    exe.write_text(first_lines)
    assert bs.script_interpreter(str(exe)) == expected
    pexp = next(line for line in bs.render_openbsd_rc(str(exe)).splitlines() if line.startswith("pexp="))
    assert pexp == 'pexp="' + "".join(w + " " for w in expected) + '${daemon}${daemon_flags:+ ${daemon_flags}}"'
