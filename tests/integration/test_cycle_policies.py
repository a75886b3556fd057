"""Boot cycle policies in-process: reconciliation, re-runs, the reboot-loop guard, hooks, abort."""

from __future__ import annotations

import io
import json

import pytest

from execution_records import make_record
from cycle_helpers import ScriptedPlatform, boot_quiet, experiment, run_to_end, start_quiet
from supervisor.errors import ColdrunError
from supervisor.views.export import native_bundle
from supervisor.boot.lifecycle import abort
from supervisor.platforms.base import PostCheckResult
from supervisor.state.records import record_path, write_record
from supervisor.state.outcome import EXIT_FAILURES
from supervisor.state.schedule import RUNNING, Schedule
from supervisor.state.statedir import StateDir

THROTTLED = PostCheckResult(flags=["thermal_throttle"], rerun=True, details={"why": "test"})
CLEAN = PostCheckResult()


def test_rerun_then_clean_keeps_both_records(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    plat = ScriptedPlatform([THROTTLED, CLEAN])
    assert run_to_end(state, plat) == 0
    bundle = native_bundle(StateDir(state))
    assert bundle["jobs"][0]["attempts"] == 2 and bundle["jobs"][0]["state"] == "completed"
    assert len(bundle["executions"]) == 1 and bundle["executions"][0]["attempt"] == 2
    assert [r["attempt"] for r in bundle["rerun_attempts"]] == [1]
    assert bundle["rerun_attempts"][0]["flags"] == ["thermal_throttle"]
    assert bundle["rerun_attempts"][0]["state"] == "rerun"


def test_always_throttling_machine_stops_instead_of_looping(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, rerun="max_attempts = 3")
    state = tmp_path / "s"
    start_quiet(exp, state)
    plat = ScriptedPlatform([THROTTLED])
    assert run_to_end(state, plat) == 3
    sched = Schedule.load(state / "schedule")
    assert sched.status == "stopped" and plat.calls == 3
    assert sched.jobs[0].attempts == 3 and sched.jobs[0].state == "C" and sched.jobs[1].state == "O"
    final = json.loads(record_path(state, 0, 3).read_text())
    assert "rerun_exhausted" in final["flags"]
    with pytest.raises(ColdrunError, match="thermal_throttle"):
        boot_quiet(state, plat)


def test_unlisted_flags_do_not_rerun(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    plat = ScriptedPlatform([PostCheckResult(flags=["kernel_log"], rerun=True)])
    assert run_to_end(state, plat) == 0
    bundle = native_bundle(StateDir(state))
    assert bundle["executions"][0]["flags"] == ["kernel_log"] and bundle["rerun_attempts"] == []


def _claim_and_crash(state, index=0):
    """What a cut during the run leaves: the job marked running at attempt n, no record."""
    sched = Schedule.load(state / "schedule")
    job = sched.jobs[index]
    sched.set_job(job, RUNNING, job.attempts + 1)
    return job.attempts


@pytest.mark.parametrize("policy,expected", [("requeue", "O"), ("mark", "X")])
def test_crashed_job_policy(tmp_path, policy, expected):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, rerun=f'crashed = "{policy}"')
    state = tmp_path / "s"
    start_quiet(exp, state)
    _claim_and_crash(state)
    # One boot: reconcile, then run the next outstanding job.
    assert boot_quiet(state) == 0
    sched = Schedule.load(state / "schedule")
    if expected == "O":
        assert sched.jobs[0].state == "C" and sched.jobs[0].attempts == 2   # re-queued and re-run at once
    else:
        assert sched.jobs[0].state == "X" and sched.jobs[1].state == "C"


def test_requeue_is_bounded_by_max_attempts(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"}, rerun="max_attempts = 2")
    state = tmp_path / "s"
    start_quiet(exp, state)
    _claim_and_crash(state)
    _claim_and_crash(state)       # attempt 2 also crashed (the first was requeued by hand here)
    assert boot_quiet(state) == EXIT_FAILURES      # finished, with a crashed execution
    sched = Schedule.load(state / "schedule")
    assert sched.jobs[0].state == "X" and sched.status == "finished"


def test_record_present_means_completed_not_rerun(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    _claim_and_crash(state)
    write_record(state, make_record(key="a:fake:v", pexec=0, job_index=0, attempt=1, outcome="E",
                                    reason="planted"))
    (state / "executions" / ".job000000-attempt002.json.tmp").write_text("{half")
    assert boot_quiet(state) == 0
    sched = Schedule.load(state / "schedule")
    assert sched.jobs[0].state == "E" and sched.jobs[0].attempts == 1
    assert not (state / "executions" / ".job000000-attempt002.json.tmp").exists()
    log = (state / "log").read_text()
    assert "had its record" in log and "removed half-written record" in log


def test_reboot_loop_guard(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, rerun="max_unexplained_boots = 2")
    state = tmp_path / "s"
    start_quiet(exp, state)
    sched = Schedule.load(state / "schedule")
    sched.set_boots(3)     # three boots that never claimed anything
    assert boot_quiet(state) == 3
    assert Schedule.load(state / "schedule").status == "stopped"
    assert "reboot-loop guard" in (state / "stop_reason").read_text()


def test_failing_pre_command_stops_with_job_outstanding(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"}, extra='pre_execution = [["false"]]')
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 3
    sched = Schedule.load(state / "schedule")
    assert sched.jobs[0].state == "O" and sched.jobs[0].attempts == 0 and sched.status == "stopped"
    assert "pre-execution command ['false'] exited with status 1" in (state / "stop_reason").read_text()


def test_post_command_sees_job_env(tmp_path):
    out = tmp_path / "post.txt"
    exp = experiment(tmp_path, {"a": "ok"},
                     extra=f'post_execution = [{{shell = "echo $COLDRUN_JOB_KEY $COLDRUN_JOB_STATE >> {out}"}}]')
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert run_to_end(state) == 0
    assert out.read_text() == "a:fake:v completed\n"


def test_abort_settles_and_refuses_resume(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    _claim_and_crash(state)
    assert abort(str(state), stderr=io.StringIO()) == 0
    sched = Schedule.load(state / "schedule")
    assert sched.status == "aborted" and sched.jobs[0].state == "O"
    with pytest.raises(ColdrunError, match="aborted"):
        boot_quiet(state)


def test_failed_start_restores_and_leaves_a_reusable_dir(tmp_path):
    from supervisor.errors import PlatformError

    class Refusing(ScriptedPlatform):
        restored = 0

        def apply_and_verify(self):
            raise PlatformError("governor: cannot set performance (no cpufreq)")

        def restore(self):
            self.restored += 1

    exp = experiment(tmp_path, {"a": "ok"})
    state = tmp_path / "s"
    plat = Refusing([CLEAN])
    with pytest.raises(ColdrunError, match="governor: cannot set performance.*nothing was started"):
        start_quiet(exp, state, plat)
    assert plat.restored == 1 and not (state / "schedule").exists()
    assert start_quiet(exp, state) == 0          # the same dir can be used again
    assert (state / "schedule").exists()


def test_continue_after_stop(tmp_path):
    from supervisor.boot.lifecycle import continue_stopped
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, rerun="max_attempts = 1")
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state, ScriptedPlatform([THROTTLED])) == 3       # stops after the first job
    continue_stopped(str(state), stderr=io.StringIO())
    assert run_to_end(state) == 0
    sched = Schedule.load(state / "schedule")
    assert sched.status == "finished" and [j.state for j in sched.jobs] == ["C", "C"]
    with pytest.raises(ColdrunError, match="--continue is for stopped"):
        continue_stopped(str(state), stderr=io.StringIO())
