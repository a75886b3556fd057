"""The wall clock set back or forward between boots (issue 26, item 17): the boot's ETA, the order of records and
status's last error follow the schedule and the boots, never the wall clock."""

from __future__ import annotations

import io
import json
import os
import re
import time

import pytest

from cycle_helpers import ScriptedPlatform, boot_quiet, experiment, start_quiet
from doubles import FakeMachine
from supervisor.boot.lifecycle import continue_stopped
from supervisor.boot.one_boot import boot
from supervisor.state.schedule import Schedule
from supervisor.views.status import status_report

DAY = 86400.0


def seconds(eta: str) -> float:
    """format_duration's text back to seconds: "4.2s", "3m05s", "1h02m"; a minus sign kept."""
    m = re.fullmatch(r"(-?)(?:(\d+)h(\d+)m|(\d+)m(\d+)s|([\d.]+)s)", eta)
    assert m, eta
    sign = -1 if m[1] else 1
    if m[2]:
        return sign * (int(m[2]) * 3600 + int(m[3]) * 60)
    if m[4]:
        return sign * (int(m[4]) * 60 + int(m[5]))
    return sign * float(m[6])


@pytest.mark.parametrize("jump", [-2 * DAY, 400 * DAY], ids=["set-back-2-days", "forward-400-days"])
def test_the_boot_eta_ignores_a_wall_clock_jump(tmp_path, monkeypatch, jump):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, executions=3)
    state = tmp_path / "s"
    start_quiet(exp, state)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + jump)    # the clock as the next boots read it
    etas = []
    for _ in range(3):
        err = io.StringIO()
        assert boot(state, stderr=err, machine=FakeMachine(ScriptedPlatform())) == 0
        line = next(ln for ln in err.getvalue().splitlines() if "rebooting" in ln)
        etas.append(seconds(re.search(r"eta=(\S+)", line)[1]))
    # Six 3-iteration fake executions take well under a minute each on any machine this runs on.
    assert all(0 <= eta < 600 for eta in etas), etas
    assert etas[-1] <= etas[0] * 3 + 1      # fewer outstanding jobs, not a jump


def test_status_last_error_is_the_last_boot_s_whatever_the_file_times(tmp_path):
    exp = experiment(tmp_path, {"a": "fail", "b": "fail"}, rerun="")
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0 and boot_quiet(state) == 0
    records = sorted((state / "executions").iterdir())
    by_boot = {json.loads(p.read_text())["boot"]: p for p in records}
    assert sorted(by_boot) == [1, 2]
    # Boot 2 ran after the clock was set back two days: its file is older than boot 1's.
    t = os.stat(by_boot[1]).st_mtime
    os.utime(by_boot[2], (t - 2 * DAY, t - 2 * DAY))
    report = status_report(str(state))
    assert report.last_error is not None and report.last_error.key.startswith("b:")


def test_boots_keep_counting_across_a_continue(tmp_path):
    flag = tmp_path / "pre-fails"
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"},
                     extra=f'pre_execution = [["sh", "-c", "test ! -e {flag}"]]', rerun="max_unexplained_boots = 3")
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0                          # boot 1 runs a
    Schedule.load(state / "schedule").set_boots(3)        # two boots that claimed nothing (power cuts)
    flag.touch()
    assert boot_quiet(state) == 3                          # boot 4: the pre-command stops the experiment
    flag.unlink()
    continue_stopped(str(state), machine=FakeMachine(ScriptedPlatform()), stderr=io.StringIO())
    assert Schedule.load(state / "schedule").boots == 4    # a count of boots, not reset
    assert boot_quiet(state) == 0                          # boot 5 runs b; the guard counts from the continue
    boots = sorted(json.loads(p.read_text())["boot"] for p in (state / "executions").iterdir())
    assert boots == [1, 5]
