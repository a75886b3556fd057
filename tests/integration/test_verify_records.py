"""Records checked against the schedule: status shows what was altered, resume stops instead of re-running, export
refuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.views.export import write_export
from supervisor.state.records import list_records, record_path
from supervisor.state.schedule import COMPLETED, OUTSTANDING, Schedule
from supervisor.state.statedir import StateDir
from supervisor.state.verify import verify_records

from cycle_helpers import boot_quiet, experiment, start_quiet
from execution_records import record_fields


@pytest.fixture
def done(tmp_path):
    """A state dir whose two jobs completed, still marked running (as after a cut before finishing)."""
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = tmp_path / "state"
    start_quiet(exp, state)
    boot_quiet(state)
    boot_quiet(state)
    sched = Schedule.load(state / "schedule")
    assert [j.state for j in sched.jobs] == [COMPLETED, COMPLETED]
    assert verify_records(StateDir(state), sched) == []
    return state


def problems(state: Path) -> list[str]:
    return verify_records(StateDir(state), Schedule.load(state / "schedule"))


def test_completed_flag_altered_back_to_outstanding_is_reported_and_not_rerun(done):
    sched = Schedule.load(done / "schedule")
    sched.set_job(sched.jobs[0], OUTSTANDING)
    rec = record_path(done, 0, 1)
    before = rec.read_bytes()
    [line] = problems(done)
    assert line.startswith(f"{rec}: record says outcome 'C' but the schedule has job 0") and "outstanding" in line
    assert boot_quiet(done) == 3                       # stopped, not re-run
    sched = Schedule.load(done / "schedule")
    assert sched.status == "stopped" and sched.jobs[0].attempts == 1 and sched.jobs[0].state == OUTSTANDING
    assert (done / "stop_reason").read_text().startswith(f"state dir altered: {rec}: record says outcome 'C'")
    assert rec.read_bytes() == before and len(list_records(done)) == 2


def test_missing_record_is_reported_by_status_with_exit_4(done, capsys):
    record_path(done, 1, 1).unlink()
    assert main(["status", str(done)]) == 4
    out = capsys.readouterr().out
    assert "ALTERED: 1 problem(s)" in out
    assert f"{record_path(done, 1, 1)}: record missing, but job 1 (b:fake:v #0) is completed after attempt 1" in out


@pytest.mark.parametrize("content, expected", [
    (b"[1,2,3]", "not a valid execution record: the whole record: Input should be an object"),
    (b"{half", "not a valid execution record: the whole record: Invalid JSON"),
    (json.dumps({"key": "zz:fake:v", "pexec": 0, "outcome": "C"}).encode(), "not a valid execution record"),
    (json.dumps(record_fields(key="zz:fake:v")).encode(), "record is for zz:fake:v #0"),
])
def test_bad_record_content_is_one_line_for_status_export_and_resume(done, capsys, content, expected):
    rec = record_path(done, 0, 1)
    rec.write_bytes(content)
    [line] = problems(done)
    assert line.startswith(str(rec)) and expected in line
    assert main(["status", str(done)]) == 4
    assert expected in capsys.readouterr().out
    with pytest.raises(ColdrunError, match="record") as e:
        write_export(str(done), "native", str(done.parent / "out.json"))
    assert str(e.value).startswith(str(rec)) and e.value.exit_code == 4
    assert boot_quiet(done) == 3
    assert rec.read_bytes() == content


def test_record_for_an_attempt_the_schedule_does_not_count(done):
    extra = record_path(done, 1, 2)
    extra.write_bytes(record_path(done, 1, 1).read_bytes())
    [line] = problems(done)
    assert line.startswith(f"{extra}: record for attempt 2, but the schedule counts 1 attempts of job 1")


def test_symlinked_record_is_reported(done, tmp_path):
    rec = record_path(done, 0, 1)
    copy = tmp_path / "copy.json"
    copy.write_bytes(rec.read_bytes())
    rec.unlink()
    rec.symlink_to(copy)
    assert problems(done) == [f"{rec}: record is a symlink; coldrun writes plain files, so it was altered"]


def test_deleted_experiment_copy_is_one_line_for_status_and_export(done, capsys):
    (done / "experiment.toml").unlink()
    assert main(["status", str(done)]) == 2
    assert main(["export", str(done), "--format", "native", "-o", str(done.parent / "o.json")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(f"{done / 'experiment.toml'}: cannot read the experiment copy" in x for x in err)


def test_export_replaces_a_planted_symlink_instead_of_following_it(done, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out.json"
    out.symlink_to(victim)
    (tmp_path / ".out.json.tmp").symlink_to(victim)    # the temp name coldrun used to use
    write_export(str(done), "native", str(out))
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and json.loads(out.read_text())["format"] == "coldrun-native"
    assert out.stat().st_mode & 0o777 == 0o644
