"""Every way a boot can end (issue 26, items 12-14): running with a live supervisor, finished, or stopped with its
reason, settings restored, boot service gone and mail sent; never "running" with nobody to run it."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from coldrun_helpers import REPO, coldrun
from cycle_helpers import RebootRecorder, experiment, fake_root
from doubles import FakeMachine, RecordingCommands
from supervisor.boot.lifecycle import continue_stopped, start
from supervisor.boot.one_boot import boot
from supervisor.platforms.base import LaunchPrefix
from supervisor.platforms.benchmark_user import BenchmarkUser
from supervisor.state.outcome import EXIT_STOPPED
from supervisor.state.schedule import Schedule

MAIL = '[mail]\nto = ["bench@example.org"]\nquota = 5'


def hardware(tmp_path, plat, replies: dict | None = None):
    """start in hardware mode on the seams; returns (state dir, boot kwargs, commands, fake root)."""
    if os.geteuid() != 0:
        pytest.skip("hardware-mode start requires root (test_hardware_mode.py shows the refusal)")
    root = fake_root(tmp_path)
    commands = RecordingCommands(replies={("systemctl",): (0, "enabled\n", ""), ("sync",): (0, "", ""),
                                          ("/usr/sbin/sendmail",): (0, "", ""), **(replies or {})})
    kw = dict(machine=FakeMachine(plat, root=root, commands=commands), stderr=io.StringIO())
    return kw, commands, root


def mails(commands) -> list[tuple]:
    return [c for c in commands.calls if c[0] == "/usr/sbin/sendmail"]


def assert_stopped_and_wound_down(state, plat, commands, root, *fragments):
    sched = Schedule.load(state / "schedule")
    assert sched.status == "stopped"
    reason = (state / "stop_reason").read_text()
    for f in fragments:
        assert f in reason, reason
    assert plat.restored == 1
    assert not (root.root / "etc/systemd/system/coldrun@.service").exists()
    assert len(mails(commands)) == 2          # "started" and "stopped"
    assert coldrun("status", str(state)).returncode == EXIT_STOPPED


def test_experiment_file_edited_during_the_run_stops_with_its_reason(tmp_path):
    plat = RebootRecorder()
    kw, commands, root = hardware(tmp_path, plat)
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, extra=f"[platform]\nbenchmark_user = false\n{MAIL}")
    state = tmp_path / "s"
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    assert boot(state, **kw) == 0
    exp.write_text(exp.read_text() + "# a comment\n")
    assert boot(state, **kw) == EXIT_STOPPED
    assert_stopped_and_wound_down(state, plat, commands, root, "experiment file changed since the experiment "
                                  "started", "'# a comment'", "coldrun resume --continue")
    assert [j.state for j in Schedule.load(state / "schedule").jobs] == ["C", "O"]
    # The fix is the one the reason names; then the experiment runs on.
    exp.write_text(exp.read_text().replace("# a comment\n", ""))
    continue_stopped(str(state), **kw)
    assert boot(state, **kw) == 0 and boot(state, **kw) == 0
    assert Schedule.load(state / "schedule").status == "finished"


class GroupTaken(RebootRecorder):
    """The real benchmark-user creation, on commands where useradd fails as it does when a group of the user's
    name exists (Debian's useradd: exit 9)."""

    def launch_prefix(self, job_name):
        user = BenchmarkUser("coldrunbench", self.commands, self.state_dir, self.log, "linux")
        user.create()
        return LaunchPrefix([])


def test_useradd_failing_after_the_claim_stops_and_requeues_the_job(tmp_path):
    plat = GroupTaken()
    kw, commands, root = hardware(tmp_path, plat, {
        ("id",): (1, "", "id: 'coldrunbench': no such user\n"),
        ("useradd",): (9, "", "useradd: group coldrunbench exists - if you want to add this user to that "
                              "group, use -g.\n")})
    exp = experiment(tmp_path, {"a": "ok"}, extra=f"[platform]\nbenchmark_user = false\n{MAIL}")
    state = tmp_path / "s"
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    assert boot(state, **kw) == EXIT_STOPPED
    assert_stopped_and_wound_down(state, plat, commands, root, "could not create benchmark user 'coldrunbench'",
                                  "group coldrunbench exists")
    sched = Schedule.load(state / "schedule")
    assert [(j.state, j.attempts) for j in sched.jobs] == [("O", 1)]    # settled now, not by later boots
    assert not (state / "executions").exists() or not any((state / "executions").iterdir())


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1])
def test_a_stray_signal_kills_the_runner_and_stops_the_experiment(exp_factory, tmp_path, sig):
    p = exp_factory({"a": "slow", "b": "ok"}, iterations=500)   # ~10 s run
    state = tmp_path / "s"
    env = {k: v for k, v in os.environ.items() if k != "COLDRUN_TEST_PAUSE_AT"}
    proc = subprocess.Popen([sys.executable, "-m", "supervisor", "start", str(p), "--simulate-reboots",
                             "--state-dir", str(state)], cwd=str(REPO), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (state / "runner.json").exists():
        assert time.monotonic() < deadline, "runner never started"
        time.sleep(0.05)
    runner_pid = json.loads((state / "runner.json").read_text())["pid"]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT_STOPPED, err
    time.sleep(0.1)
    assert not os.path.exists(f"/proc/{runner_pid}") or \
        open(f"/proc/{runner_pid}/stat").read().split()[2] == "Z"
    reason = (state / "stop_reason").read_text()
    assert f"received {signal.Signals(sig).name}" in reason and "runner in flight was killed" in reason
    st = coldrun("status", str(state))
    assert st.returncode == EXIT_STOPPED and "outstanding 2" in st.stdout, st.stdout
    assert "simulated: would mail" in err and "stopped" in err


def test_status_says_when_no_supervisor_runs_a_running_experiment(exp_factory, tmp_path):
    """SIGKILL cannot be caught: the state dir still says running, so status says that nothing runs it."""
    p = exp_factory({"a": "slow"}, iterations=50)
    state = tmp_path / "s"
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state),
                env={"COLDRUN_TEST_PAUSE_AT": "during-run"})
    assert r.returncode == -9
    st = coldrun("status", str(state))
    assert st.returncode == 8, st.stdout
    assert st.stdout.splitlines()[0] == "experiment t: running (simulated), boot 1" and "supervisor: pid" not in st.stdout
    assert f"no supervisor is running it: nothing happens until coldrun resume {state}" in st.stdout
    assert json.loads(coldrun("status", str(state), "--json").stdout)["unattended"] is True


@pytest.mark.parametrize("damage", ["schedule", "experiment copy"])
def test_a_boot_that_cannot_read_its_state_dir_restores_the_machine(tmp_path, damage):
    """A damaged schedule or experiment copy leaves no experiment to run or to stop the usual way (no status to
    set, no mail settings). The boot still restores the settings from the machine's copy of the undo log and
    removes the boot service (no reboot loop), and its one-line error says so. It used to exit with the
    settings applied and the boot service in place."""
    from supervisor.errors import ColdrunError
    from supervisor.platforms.kept_state import undo_log
    plat = RebootRecorder()
    kw, commands, root = hardware(tmp_path, plat)
    setting = root.root / "proc/sys/kernel/perf_event_max_sample_rate"
    setting.parent.mkdir(parents=True)
    setting.write_text("100000\n")
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, extra=f"[platform]\nbenchmark_user = false\n{MAIL}")
    state = tmp_path / "s"
    assert start(str(exp), str(state), simulate=False, **kw) == 0
    undo_log(root, state).record("perf_max_sample_rate", "/proc/sys/kernel/perf_event_max_sample_rate",
                                 {"action": "write", "path": "/proc/sys/kernel/perf_event_max_sample_rate",
                                  "value": "100000\n"})
    setting.write_text("1\n")
    damaged = state / ("schedule" if damage == "schedule" else "experiment.toml")
    damaged.write_bytes(damaged.read_bytes()[:20] + b"\x00garbage")
    with pytest.raises(ColdrunError, match="the settings it changed were restored and its boot service removed"):
        boot(state, **kw)
    assert setting.read_text() == "100000\n"
    assert any(c[:2] == ("systemctl", "disable") for c in commands.calls)
    assert not list((root.root / "etc/systemd/system").glob("*.wants/coldrun@*"))
