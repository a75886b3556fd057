"""[stop] in-process: keys grow by appended jobs until their target or max_executions (analysis doubles).

The analysis is tests/run_length_doubles.py, handed in through Machine.seams["run_length"]:
these tests check the supervisor's side (decide between executions, append,
carry iterations and params on the job, stop, say why), not Pilot's numbers.
"""

from __future__ import annotations

import io
import json

import pytest

from cycle_helpers import ScriptedPlatform, boot_quiet, experiment, run_to_end, start_quiet
from run_length_doubles import FakeStopping, FakeWps, double_analysis
from supervisor.boot.lifecycle import start
from supervisor.boot.prepare import prepare
from supervisor.platforms.factory import Machine
from supervisor.errors import ColdrunError
from supervisor.kinds.stop.analysis import RunLengthAnalysis
from supervisor.views.export import native_bundle
from supervisor.state.outcome import EXIT_FAILURES, EXIT_UNCONVERGED
from supervisor.state.records import list_records, read_record
from supervisor.state.schedule import COMPLETED, Schedule
from supervisor.views.status import status_report
from supervisor.views.status_text import status_text
from supervisor.state.statedir import StateDir
from supervisor.state.verify import verify_records
from doubles import FakeMachine

STOP = "[stop]\nci_percent = 0.000001\nmin_executions = 3\nmax_executions = 6\n"


def _jobs(state):
    return Schedule.load(state / "schedule").jobs


def _decisions(state):
    return json.loads((state / "run_length.json").read_text())


def _run(tmp_path, behaviours, stop, *, iterations=3, to_end=True, code=EXIT_UNCONVERGED):
    """Start a [stop] experiment on the analysis doubles (and run it to its end, expecting exit ``code``:
    by default a key stopped at max_executions); (state dir, analysis)."""
    exp = experiment(tmp_path, behaviours, executions=None, iterations=iterations, extra=stop)
    state = tmp_path / "s"
    analysis = double_analysis()
    assert start_quiet(exp, state, run_length=analysis) == 0
    if to_end:
        assert run_to_end(state, run_length=analysis) == code
    return state, analysis


def _records_match_schedule(state):
    """Every job's final record is its own, with the job's iterations and param, and nothing else is on disk."""
    assert verify_records(StateDir(state), Schedule.load(state / "schedule")) == []
    jobs = _jobs(state)
    records = list_records(state)
    assert sorted(records) == [(j.index, j.attempts) for j in jobs]
    for job in jobs:
        rec = read_record(records[(job.index, job.attempts)])
        assert (rec.key, rec.pexec, rec.iterations, rec.param) == (job.key, job.pexec, job.iterations, job.param)
        assert len(rec.wallclock_times) == job.iterations


def test_keys_stop_when_converged_or_at_max(tmp_path):
    state, analysis = _run(tmp_path, {"steady": "flat", "wild": "noisy"}, STOP, to_end=False)
    # each key starts with min_executions jobs
    assert [j.key.split(":")[0] for j in _jobs(state)] == ["steady", "wild"] * 3
    assert run_to_end(state, run_length=analysis) == EXIT_UNCONVERGED     # wild stopped at max_executions
    jobs = _jobs(state)
    by_key = {k: [j for j in jobs if j.key.startswith(k)] for k in ("steady", "wild")}
    assert len(by_key["steady"]) == 3 and len(by_key["wild"]) == 6
    assert all(j.state == COMPLETED for j in jobs)
    assert [j.pexec for j in by_key["wild"]] == list(range(6))
    d = _decisions(state)
    steady, wild = d["steady:fake:v"], d["wild:fake:v"]
    assert steady["converged"] and steady["done"] and steady["executions"] == 3 and steady["next"] is None
    assert wild["done"] and not wild["converged"] and wild["executions"] == 6
    assert wild["reason"].startswith("max_executions (6) reached") or "max" in wild["reason"]
    _records_match_schedule(state)
    # every execution was estimated once, however many decisions followed
    estimated = [c for c in analysis._stopping.calls if c[0] == "execution_estimate"]
    assert len(estimated) == 9
    report = status_report(str(state))
    text = status_text(report)
    assert report.altered == []
    assert "steady:fake:v: converged after 3 executions" in text
    assert "wild:fake:v: NOT CONVERGED: stopped at max_executions (6 executions)" in text
    log = (state / "log").read_text()
    assert "key stopped at max_executions without reaching its target" in log
    assert "key reached its target" in log
    assert "1 key(s) stopped at max_executions without reaching the run-length target (wild:fake:v)" in log


def test_unconverged_keys_have_their_own_exit_code_and_failures_keep_theirs(tmp_path):
    state, analysis = _run(tmp_path / "a", {"steady": "flat", "wild": "noisy"}, STOP)
    assert boot_quiet(state, run_length=analysis) == EXIT_UNCONVERGED      # resume of the finished experiment
    assert status_report(str(state)).status == "finished"
    # a key whose executions all fail never converges either: the failures decide the code
    state, analysis = _run(tmp_path / "b", {"wild": "noisy", "broken": "fail"},
                           "stop_on_launch_failure = false\n" + STOP, code=EXIT_FAILURES)
    assert not _decisions(state)["wild:fake:v"]["converged"]
    assert boot_quiet(state, run_length=analysis) == EXIT_FAILURES


def test_jobs_are_appended_one_at_a_time_between_executions(tmp_path):
    state, analysis = _run(tmp_path, {"a": "noisy", "b": "noisy"},
                           "[stop]\nci_percent = 0.000001\nmin_executions = 2\nmax_executions = 4\n", to_end=False)
    seen = []
    for _ in range(30):
        if boot_quiet(state, run_length=analysis) != 0 or Schedule.load(state / "schedule").status != "running":
            break
        jobs = _jobs(state)
        outstanding = [j for j in jobs if j.state == "O"]
        seen.append(len(jobs))
        # never more than one job ahead per key once its first ones ran
        assert all(sum(1 for j in outstanding if j.key == k) <= 2 for k in ("a:fake:v", "b:fake:v"))
    assert max(seen) == 8
    # the appended jobs stay interleaved: a, b, a, b
    assert [j.key[0] for j in _jobs(state)] == list("abababab")
    status = status_text(status_report(str(state)))
    assert "NOT CONVERGED" in status


def test_adapted_iterations_are_carried_by_the_job_to_the_runner(tmp_path):
    state, analysis = _run(tmp_path, {"a": "noisy"}, "[stop]\nci_percent = 0.000001\nmin_executions = 2\n"
                           "max_executions = 5\nadapt_iterations = true\nmax_iterations = 20\n")
    # the double doubles the last count, capped at max_iterations
    assert [j.iterations for j in _jobs(state)] == [3, 3, 6, 12, 20]
    _records_match_schedule(state)
    asked = [c for c in analysis._stopping.calls if c[0] == "decide_key"]
    assert asked[-1] == ("decide_key", 5, (3, 3, 6, 12, 20), 20)


def test_fixed_iterations_ignore_the_analysis_proposal(tmp_path):
    state, analysis = _run(tmp_path, {"a": "noisy"}, "[stop]\nci_percent = 0.000001\nmin_executions = 2\n"
                           "max_executions = 3\n", iterations=4)
    assert [j.iterations for j in _jobs(state)] == [4, 4, 4]
    assert all(c[3] is None for c in analysis._stopping.calls if c[0] == "decide_key")


def test_wps_chooses_each_param_and_stops_on_the_rate(tmp_path):
    state, analysis = _run(tmp_path, {"w": "wps"}, "[stop]\nci_percent = 0.05\nmin_executions = 4\n"
                           "max_executions = 12\n[stop.wps]\nmin_param = 1000\nmax_param = 9000\n",
                           iterations=1, to_end=False)
    assert [(j.pexec, j.param) for j in _jobs(state)] == [(0, 1000)]      # WPS starts with one execution
    assert run_to_end(state, run_length=analysis) == 0
    params = [j.param for j in _jobs(state)]
    # the double's slice schedule: steps of (9000 - 1000) / 4
    assert params == [1000, 3000, 5000, 7000]
    _records_match_schedule(state)
    d = _decisions(state)["w:fake:v"]
    assert d["converged"] and d["measure"].startswith("v ") and abs(d["mean"] - 1e6) / 1e6 < 1e-3
    assert d["wps_slices"] == 4
    assert "converged after 4 executions" in status_text(status_report(str(state)))


def test_wps_slice_state_survives_reboots(tmp_path):
    state, analysis = _run(tmp_path, {"w": "noisy"}, "[stop]\nci_percent = 0.0001\nmin_executions = 3\n"
                           "max_executions = 8\n[stop.wps]\nmin_param = 1000\nmax_param = 9000\n", iterations=1)
    # past max the double's slice count doubles: 4 -> 8, and is passed back on the next decision
    assert [j.param for j in _jobs(state)] == [1000, 3000, 5000, 7000, 9000, 2000, 3000, 4000]
    assert [c[2] for c in analysis._wps.calls if c[0] == "next_wps_work_amount"] == [None, 4, 4, 4, 4, 8, 8, 8]
    assert not _decisions(state)["w:fake:v"]["converged"]


def test_analysis_failure_stops_the_experiment_with_one_line(tmp_path):
    exp = experiment(tmp_path, {"a": "flat"}, executions=None, extra=STOP)
    state = tmp_path / "s"
    start_quiet(exp, state, run_length=double_analysis())
    broken = double_analysis(fail=ValueError("iteration times: iteration 3 took -1 s"))
    assert run_to_end(state, run_length=broken) == 3
    reason = StateDir(state).stop_reason()
    assert reason.startswith("run length: a:fake:v: the run-length analysis failed on 3 executions")
    assert "\n" not in reason


def test_check_and_start_refuse_without_the_analysis_extra(tmp_path):
    exp = experiment(tmp_path, {"a": "flat"}, executions=None, extra=STOP)
    missing = RunLengthAnalysis(stopping=FakeStopping(), wps=FakeWps(), required=("numpy", "coldrun_no_such_mod"))
    with pytest.raises(ColdrunError) as e:
        prepare(str(exp), machine=Machine(seams={"run_length": missing}))
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{exp}: stop: needs coldrun's analysis extra")
    assert "coldrun_no_such_mod" in line and "pip install 'coldrun[analysis]'" in line
    state = tmp_path / "s"
    with pytest.raises(ColdrunError, match="coldrun_no_such_mod"):
        start(str(exp), str(state), simulate=True, stderr=io.StringIO(),
              machine=FakeMachine(ScriptedPlatform(), run_length=missing))
    assert not (state / "schedule").exists()
    # an experiment without [stop] never asks
    plain = experiment(tmp_path / "plain", {"a": "flat"})
    assert prepare(str(plain), machine=Machine(seams={"run_length": missing})).exp.stop is None


def test_status_shows_progress_and_revised_eta(tmp_path):
    state, analysis = _run(tmp_path, {"a": "noisy"}, "[stop]\nci_percent = 0.000001\nmin_executions = 2\n"
                           "max_executions = 9\n", to_end=False)
    text = status_text(status_report(str(state)))
    assert "run length: CI width of the mean (pilot estimate) <= 0.0001 % of the mean (95 % confidence), " \
           "2 to 9 executions per key" in text
    assert "a:fake:v: waiting for its first 2 executions (0 done)" in text
    for _ in range(2):      # the second execution's boot decides and appends the third
        boot_quiet(state, run_length=analysis)
    text = status_text(status_report(str(state)))
    assert "a:fake:v: running: 2 executions, about 1 more expected" in text
    assert "progress: 2/3 done" in text
    assert "ETA:" in text and "for the 1 jobs now known" in text
