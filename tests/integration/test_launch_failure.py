"""A key whose runner cannot even launch stops the experiment (stop_on_launch_failure), and exit codes."""

from __future__ import annotations

import io
import json

import pytest

from cycle_helpers import ScriptedPlatform, boot_quiet, experiment, run_to_end, start_quiet
from doubles import FakeMachine
from supervisor.boot.lifecycle import abort, continue_stopped
from supervisor.cli import main
from supervisor.state.outcome import (EXIT_ABORTED, EXIT_CLEAN, EXIT_FAILURES, EXIT_RUNNING, EXIT_STOPPED,
                                      EXIT_UNCONVERGED)
from supervisor.state.schedule import Schedule


def states(state):
    sched = Schedule.load(state / "schedule")
    return sched.status, [(j.key.split(":")[0], j.state) for j in sched.jobs]


def test_runner_setup_failure_stops_at_the_first_execution_of_its_key(tmp_path):
    exp = experiment(tmp_path, {"a": "setup", "b": "ok"}, executions=2)
    state = tmp_path / "s"
    start_quiet(exp, state)
    plat = ScriptedPlatform()
    assert run_to_end(state, plat) == EXIT_STOPPED
    assert plat.reboots == 0                       # no reboot spent after the failed launch
    assert states(state) == ("stopped", [("a", "E"), ("b", "O"), ("a", "O"), ("b", "O")])
    reason = (state / "stop_reason").read_text()
    assert "a:fake:v: the runner cannot launch" in reason and "status 2 (usage/setup)" in reason
    assert "cannot load libfake.so" in reason      # the runner's own words name what is missing
    assert f"coldrun resume --continue {state}" in reason and "stop_on_launch_failure = false" in reason


def test_missing_benchmark_file_stops_with_cannot_launch(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    (tmp_path / "benchmarks" / "a" / "b.txt").unlink()     # gone after start's checks
    assert boot_quiet(state) == EXIT_STOPPED
    assert states(state) == ("stopped", [("a", "E"), ("b", "O")])
    assert "a:fake:v: the runner cannot launch (cannot launch:" in (state / "stop_reason").read_text()


def test_launch_failures_are_recorded_and_run_on_when_not_stopping(tmp_path):
    exp = experiment(tmp_path, {"a": "setup", "b": "ok"}, executions=2, extra="stop_on_launch_failure = false")
    state = tmp_path / "s"
    start_quiet(exp, state)
    plat = ScriptedPlatform()
    assert run_to_end(state, plat) == EXIT_FAILURES
    assert plat.reboots == 4
    assert states(state) == ("finished", [("a", "E"), ("b", "C"), ("a", "E"), ("b", "C")])


def test_a_key_that_completed_once_is_not_stopped_by_a_later_failure(tmp_path):
    # on_changed_files = "flag": the rewritten benchmark file runs (test_changed_files.py: the default stops).
    exp = experiment(tmp_path, {"a": "ok"}, executions=2, extra='on_changed_files = "flag"')
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0
    (tmp_path / "benchmarks" / "a" / "b.txt").write_text("setup")   # the benchmark's failure now, not a launch's
    assert run_to_end(state) == EXIT_FAILURES
    assert states(state) == ("finished", [("a", "C"), ("a", "E")])


def test_a_key_that_launched_before_and_now_cannot_launch_stops_the_experiment(tmp_path):
    """The benchmarks directory vanishes (an unmounted disk) after a key's first success: coldrun cannot start
    its runner, which would fail every remaining job alike, so the experiment stops (issue 26, item 3)."""
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, executions=3)
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0 and boot_quiet(state) == 0       # a and b completed once each
    (tmp_path / "benchmarks").rename(tmp_path / "unmounted")
    plat = ScriptedPlatform()
    assert run_to_end(state, plat) == EXIT_STOPPED
    assert plat.reboots == 0
    assert states(state) == ("stopped", [("a", "C"), ("b", "C"), ("a", "E"), ("b", "O"), ("a", "O"), ("b", "O")])
    assert "a:fake:v: the runner cannot launch (cannot launch:" in (state / "stop_reason").read_text()


def test_continue_after_a_launch_failure_runs_the_rest(tmp_path):
    exp = experiment(tmp_path, {"a": "setup", "b": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == EXIT_STOPPED
    (tmp_path / "benchmarks" / "a" / "b.txt").write_text("ok")      # the fix
    continue_stopped(str(state), machine=FakeMachine(ScriptedPlatform()), stderr=io.StringIO())
    assert run_to_end(state) == EXIT_FAILURES                          # the failed first attempt stays recorded
    assert states(state) == ("finished", [("a", "E"), ("b", "C")])


def status_code(state) -> int:
    return main(["status", str(state)])


def test_status_exit_codes(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "ok", "b": "fail"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert status_code(state) == EXIT_RUNNING
    assert run_to_end(state) == EXIT_FAILURES
    assert status_code(state) == EXIT_FAILURES
    assert boot_quiet(state) == EXIT_FAILURES        # resume of a finished experiment says how it ended

    clean = tmp_path / "clean"
    clean.mkdir()
    start_quiet(experiment(clean, {"a": "ok"}), clean / "s")
    assert run_to_end(clean / "s") == EXIT_CLEAN and status_code(clean / "s") == EXIT_CLEAN

    stopped = tmp_path / "stopped"
    stopped.mkdir()
    start_quiet(experiment(stopped, {"a": "setup"}), stopped / "s")
    assert boot_quiet(stopped / "s") == EXIT_STOPPED and status_code(stopped / "s") == EXIT_STOPPED

    assert abort(str(stopped / "s"), stderr=io.StringIO()) == 0
    assert status_code(stopped / "s") == EXIT_ABORTED
    assert len({EXIT_CLEAN, EXIT_STOPPED, EXIT_FAILURES, EXIT_ABORTED, EXIT_RUNNING, EXIT_UNCONVERGED, 2, 4, 5}) == 9


def test_status_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["status", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for text in ("0 finished, every execution completed", "3 stopped", "6 finished with errored, timed-out or "
                 "crashed executions", "7 aborted", "8 still running"):
        assert text in out


def test_iteration_times_longer_than_the_runner_lived_are_refused(tmp_path):
    """A document claiming 5 x 100 s from a process that lived a fraction of a second (forged, or an external
    runner reporting milliseconds) is errored with the reason, its numbers not kept (issue 26, item 4)."""
    exp = experiment(tmp_path, {"a": "forged"}, executions=1, iterations=5,
                     extra="stop_on_launch_failure = false")
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert run_to_end(state) == EXIT_FAILURES
    [record] = [json.loads(p.read_text()) for p in (state / "executions").iterdir()]
    assert record["outcome"] == "E" and record["cause"] == "protocol_refusal"
    assert record["reason"].startswith("iteration times add up to 500s, more than the ")
    assert "forged or mis-scaled" in record["reason"] and record["wallclock_times"] == []
