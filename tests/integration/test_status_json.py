"""`coldrun status --json`: its fields and exit codes for every standing, its schema, and agreement with the text."""

from __future__ import annotations

import io
import json
import re
import socket
from pathlib import Path

from contracts.status_report import StatusReport, schema_text
from cycle_helpers import boot_quiet, experiment, run_to_end, start_quiet
from run_length_doubles import double_analysis
from supervisor.boot.lifecycle import abort
from supervisor.cli import main
from supervisor.state.records import record_path

SCHEMA = Path(__file__).resolve().parents[2] / "contracts" / "status_report.schema.json"
STOP = "[stop]\nci_percent = 0.000001\nmin_executions = 3\nmax_executions = 6\n"


def status(state: Path, capsys) -> tuple[int, dict, int, str]:
    """(exit code, object) of `status --json`, then (exit code, text) of `status`; the JSON is checked against
    the model the checked-in schema is generated from, and the text's counts against the JSON's."""
    code = main(["status", str(state), "--json"])
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert StatusReport.model_validate_json(out).model_dump(mode="json") == doc
    assert set(doc) == set(json.loads(SCHEMA.read_text())["required"])
    text_code = main(["status", str(state)])
    text = capsys.readouterr().out
    _text_agrees(text, doc)
    return code, doc, text_code, text


def _text_agrees(text: str, doc: dict) -> None:
    head = re.match(r"experiment (\S+): (\w+) \((\w+)\), boot (\d+)\n", text)
    assert head and head.groups() == (doc["experiment"], doc["status"], doc["mode"], str(doc["boots"])), text
    progress = re.search(r"progress: (\d+)/(\d+) done", text)
    assert progress and (int(progress[1]), int(progress[2])) == (doc["done"], doc["total"])
    counts = dict((name.replace(" ", "_"), int(n)) for n, name in
                  ((m[2], m[1]) for m in re.finditer(r"(completed|errored|timed out|crashed|outstanding|running|"
                                                     r"skipped) (\d+)", text.splitlines()[2])))
    assert counts == doc["counts"]
    assert ("last error:" in text) == (doc["last_error"] is not None)
    assert (f"failed executions ({len(doc['failures'])}):" in text) == bool(doc["failures"])
    assert ("ALTERED:" in text) == bool(doc["altered"])
    for line in doc["altered"]:
        assert f"  {line}" in text


def ended(tmp_path: Path, behaviours: dict[str, str], expected: int, capsys) -> tuple[int, dict, int, str]:
    """Run an experiment to its end (ending with ``expected``), then `status` of it, as status() gives it."""
    state = tmp_path / "s"
    start_quiet(experiment(tmp_path, behaviours), state)
    assert run_to_end(state) == expected
    code, doc, text_code, text = status(state, capsys)
    assert code == text_code == expected
    return code, doc, text_code, text


def test_checked_in_schema_matches_the_model():
    assert SCHEMA.read_text() == schema_text(), (
        "contracts/status_report.schema.json is out of date: python -m contracts.status_report > "
        "contracts/status_report.schema.json")


def test_running(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "ok"}, executions=3)
    state = tmp_path / "s"
    start_quiet(exp, state)
    boot_quiet(state)
    code, doc, text_code, text = status(state, capsys)
    assert code == text_code == 8
    assert (doc["format"], doc["version"]) == ("coldrun-status", 1)
    assert doc["experiment"] == "unit" and doc["state_dir"] == str(state.resolve())
    assert doc["machine"] == socket.gethostname() and doc["mode"] == "simulated" and doc["status"] == "running"
    assert doc["counts"] == {"outstanding": 2, "running": 0, "completed": 1, "errored": 0, "timed_out": 0,
                             "crashed": 0, "skipped": 0}
    assert (doc["done"], doc["total"], doc["boots"]) == (1, 3, 1)
    # two outstanding jobs, each about as long as the one that ran (the fake runner's times are seconds)
    assert doc["eta_seconds"] is not None and doc["eta_seconds"] > 0
    assert "ETA: " in text and "for the 2 jobs now known" in text
    assert doc["last_error"] is None and doc["stop_reason"] is None and doc["altered"] == []
    assert doc["run_length"] is None and doc["more_expected"] == 0


def test_running_eta_unknown_is_null(tmp_path, capsys):
    state = tmp_path / "s"
    start_quiet(experiment(tmp_path, {"a": "ok", "b": "ok"}), state)
    boot_quiet(state)                      # b has not run yet
    code, doc, _, text = status(state, capsys)
    assert code == 8 and doc["eta_seconds"] is None
    assert "ETA: unknown until every outstanding key has run once" in text


def test_finished_clean(tmp_path, capsys):
    code, doc, text_code, _ = ended(tmp_path, {"a": "ok", "b": "ok"}, 0, capsys)
    assert doc["status"] == "finished" and doc["counts"]["completed"] == 2 and (doc["done"], doc["total"]) == (2, 2)
    assert doc["eta_seconds"] is None and doc["supervisor_pid"] is None and doc["last_error"] is None


def test_finished_with_failures_names_the_last_error(tmp_path, capsys):
    code, doc, text_code, text = ended(tmp_path, {"a": "ok", "b": "fail"}, 6, capsys)
    assert doc["counts"]["errored"] == 1 and doc["counts"]["completed"] == 1 and doc["done"] == 2
    err = doc["last_error"]
    assert (err["key"], err["pexec"], err["attempt"], err["state"]) == ("b:fake:v", 0, 1, "errored")
    assert err["reason"] and f"last error: b:fake:v #0 attempt 1: {err['reason']}" in text


def test_every_failed_execution_is_listed_not_only_the_last(tmp_path, capsys):
    state = tmp_path / "s"
    start_quiet(experiment(tmp_path, {"a": "fail", "b": "ok", "c": "crash", "d": "hang"}, executions=2,
                           extra="stop_on_launch_failure = false"), state)
    assert run_to_end(state) == 6
    code, doc, text_code, text = status(state, capsys)
    failures = doc["failures"]
    # a, c (a signal) and d (a timeout) failed twice each; b never: every one is listed, in schedule order
    assert [(f["key"], f["pexec"], f["attempt"], f["state"]) for f in failures] == [
        (f"{k}:fake:v", p, 1, "timed_out" if k == "d" else "errored") for p in (0, 1) for k in "acd"]
    assert all(f["reason"] for f in failures)
    assert "SIGSEGV" in failures[1]["reason"] and "timed out" in failures[2]["reason"]
    assert f"failed executions ({len(failures)}):" in text
    for f in failures:
        assert f"  {f['key']} #{f['pexec']} attempt {f['attempt']}: {f['state'].replace('_', ' ')}: {f['reason']}" \
            in text


def test_stopped_carries_the_stop_reason(tmp_path, capsys):
    code, doc, text_code, text = ended(tmp_path, {"a": "setup", "b": "ok"}, 3, capsys)
    assert doc["status"] == "stopped" and doc["eta_seconds"] is None
    assert "a:fake:v: the runner cannot launch" in doc["stop_reason"]
    assert f"stop reason: {doc['stop_reason']}" in text


def test_aborted(tmp_path, capsys):
    state = tmp_path / "s"
    start_quiet(experiment(tmp_path, {"a": "ok", "b": "ok"}), state)
    boot_quiet(state)
    assert abort(str(state), stderr=io.StringIO()) == 0
    code, doc, text_code, _ = status(state, capsys)
    assert code == text_code == 7
    assert doc["status"] == "aborted" and doc["counts"]["completed"] == 1 and doc["counts"]["outstanding"] == 1
    assert doc["stop_reason"] is None and doc["eta_seconds"] is None


def test_altered_records_are_listed_with_exit_4(tmp_path, capsys):
    state = tmp_path / "s"
    start_quiet(experiment(tmp_path, {"a": "ok", "b": "ok"}), state)
    assert run_to_end(state) == 0
    record_path(state, 1, 1).unlink()
    code, doc, text_code, _ = status(state, capsys)
    assert code == text_code == 4
    [line] = doc["altered"]
    assert line.startswith(f"{record_path(state, 1, 1)}: record missing")
    assert doc["status"] == "finished"      # the standing is still reported


def test_not_a_state_dir_prints_nothing_on_stdout(tmp_path, capsys):
    assert main(["status", str(tmp_path / "nothing"), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("coldrun: ")


def test_stop_keys_list_their_progress(tmp_path, capsys):
    exp = experiment(tmp_path, {"steady": "flat", "wild": "noisy"}, executions=None, extra=STOP)
    state = tmp_path / "s"
    analysis = double_analysis()
    assert start_quiet(exp, state, run_length=analysis) == 0
    code, doc, _, text = status(state, capsys)
    assert code == 8
    rl = doc["run_length"]
    assert (rl["wps"], rl["min_executions"], rl["max_executions"]) == (False, 3, 6)
    assert f"run length: {rl['target']}" in text
    assert [k["key"] for k in rl["keys"]] == ["steady:fake:v", "wild:fake:v"]
    waiting = rl["keys"][0]
    assert waiting["decided_on"] is None and waiting["mean"] is None and not waiting["done"]
    assert "steady:fake:v: waiting for its first 3 executions (0 done)" in text

    assert run_to_end(state, run_length=analysis) == 9
    code, doc, _, text = status(state, capsys)
    assert code == 9          # finished, every execution completed, but wild did not converge
    steady, wild = doc["run_length"]["keys"]
    decisions = json.loads((state / "run_length.json").read_text())
    for k in (steady, wild):
        d = decisions[k["key"]]
        assert (k["decided_on"], k["mean"], k["ci_width"], k["target_width"], k["reason"], k["measure"]) == \
            (d["executions"], d["mean"], d["ci_width"], d["target_width"], d["reason"], d["measure"])
    assert (steady["executions"], steady["converged"], steady["done"]) == (3, True, True)
    assert (wild["executions"], wild["converged"], wild["done"]) == (6, False, True)
    assert steady["mean"] > 0 and steady["ci_width"] is not None
    assert "steady:fake:v: converged after 3 executions" in text
    assert "wild:fake:v: NOT CONVERGED: stopped at max_executions (6 executions)" in text
    assert doc["total"] == 9 and doc["done"] == 9


def test_altered_decision_is_one_line_with_exit_4(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "flat"}, executions=None, extra=STOP)
    state = tmp_path / "s"
    analysis = double_analysis()
    start_quiet(exp, state, run_length=analysis)
    assert run_to_end(state, run_length=analysis) == 0
    decisions = json.loads((state / "run_length.json").read_text())
    decisions["a:fake:v"]["mean"] = "fast"
    (state / "run_length.json").write_text(json.dumps(decisions))
    assert main(["status", str(state), "--json"]) == 4
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"coldrun: {state / 'run_length.json'}: a:fake:v: mean: ") and "altered" in err
    assert len(err.splitlines()) == 1
