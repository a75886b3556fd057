"""`check` and `start` share one preparation path (supervisor/boot/prepare.py): same refusals, same schedule."""

from __future__ import annotations

import re

import pytest

from cycle_helpers import experiment, start_quiet
from supervisor.boot.prepare import prepare
from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.state.schedule import Schedule

SCHEDULE_LINE = re.compile(r"^ +\d+ ([OS]) (\S+) #(\d+)$", re.M)     # check's "  index O|S key #pexec"


def test_check_refuses_what_start_refuses_with_the_same_line(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "ok"}, extra='skip = ["*:*:*"]')
    assert main(["check", str(exp)]) == 2
    said = capsys.readouterr().err.strip()
    assert said == (f"coldrun: {exp}: skip: every bench:vm:variant key is skipped, so there is nothing to run; "
                    f"remove a pattern")
    with pytest.raises(ColdrunError) as e:
        start_quiet(exp, tmp_path / "s")
    assert f"coldrun: {e.value}" == said and not (tmp_path / "s").exists()


def test_start_runs_the_schedule_check_shows(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok", "c": "ok"}, executions=2,
                     extra='order = "random"\nseed = 7\nskip = ["b:*:*"]')
    prep = prepare(str(exp))
    assert prep.seed == 7 and prep.run_keys == ["a:fake:v", "c:fake:v"] and prep.n_run == 4
    assert main(["check", str(exp), "--all"]) == 0
    shown = [m.groups() for m in SCHEDULE_LINE.finditer(capsys.readouterr().out)]
    start_quiet(exp, tmp_path / "s")
    jobs = Schedule.load(tmp_path / "s" / "schedule").jobs
    assert shown == [(j.state, j.key, str(j.pexec)) for j in jobs]
    assert [(j.key, j.pexec, j.skipped) for j in prep.jobs] == [(j.key, j.pexec, j.state == "S") for j in jobs]


def test_without_a_seed_start_draws_one_and_check_shows_seed_0(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, executions=3, extra='order = "random"')
    assert prepare(str(exp)).seed == 0
    assert prepare(str(exp), random_seed=123456).seed == 123456
    (tmp_path / "rr").mkdir()
    round_robin = experiment(tmp_path / "rr", {"a": "ok"})
    assert prepare(str(round_robin), random_seed=123456).seed == 0     # round-robin needs none
