"""The exec helpers that sit in the launch prefix: runas (OpenBSD user switch) and cgexec (placement)."""

import os
import subprocess
import sys

import pytest

from supervisor.errors import PlatformError
from supervisor.experiment.platform_policy import PlatformPolicy

from platform_helpers import make_linux


def run_with_fd3(argv):
    """Run argv with a pipe on fd 3, as the supervisor hands the runner its results channel."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(w, 3)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    out = os.read(r, 200)
    os.close(r)
    return os.waitstatus_to_exitcode(status), out


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_runas_switches_user_and_keeps_fd3():
    p, out = run_with_fd3([sys.executable, "-m", "supervisor.platforms.runas", "nobody", "--",
                           "/bin/sh", "-c", 'printf "%s %s" "$(id -u)" "$USER" >&3'])
    assert p == 0
    assert out == b"65534 nobody"


def test_runas_unknown_user_fails_clearly():
    p = subprocess.run([sys.executable, "-m", "supervisor.platforms.runas", "no-such-user-xyz", "--", "true"],
                       capture_output=True, text=True)
    assert p.returncode == 125 and "no user 'no-such-user-xyz'" in p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_runas_reports_an_unrunnable_program_in_one_line(tmp_path):
    prog = tmp_path / "private"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o700)  # root only
    p = subprocess.run([sys.executable, "-m", "supervisor.platforms.runas", "nobody", "--", str(prog)],
                       capture_output=True, text=True)
    assert p.returncode == 125 and p.stderr.strip() == f"runas: cannot run {prog}: Permission denied"


def test_cgexec_refuses_to_run_unplaced(tmp_path):
    p = subprocess.run([sys.executable, "-m", "supervisor.platforms.cgexec", str(tmp_path / "missing"), "--", "true"],
                       capture_output=True, text=True)
    assert p.returncode == 125 and "cgexec:" in p.stderr


def test_unwritable_setting_stops_with_the_control_name(machine, tmp_path):
    root = machine("vm-nocpufreq")
    target = root / "proc/sys/kernel/perf_event_max_sample_rate"
    target.unlink()
    target.mkdir()  # reads fail as "unreadable", writes fail: the apply must say which control
    (target / "x").write_text("")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(governor="ignore", turbo="ignore", tickless="ignore"))
    with pytest.raises(PlatformError, match="^perf_max_sample_rate: could not apply 1"):
        p.apply_and_verify()
