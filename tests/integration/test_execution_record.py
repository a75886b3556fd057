"""The execution record's model, its checked-in JSON Schema, and records that are not valid on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from contracts.execution_record import ExecutionRecord, ExecutionSlot, schema_text
from coldrun_helpers import coldrun
from cycle_helpers import experiment, run_to_end, start_quiet
from execution_records import make_record, record_fields
from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.state.records import list_records, read_record, record_path, write_record

SCHEMA = Path(__file__).resolve().parents[2] / "contracts" / "execution_record.schema.json"


def test_checked_in_schema_matches_the_model():
    assert SCHEMA.read_text() == schema_text(), (
        "contracts/execution_record.schema.json is out of date: python -m contracts.execution_record > "
        "contracts/execution_record.schema.json")


def test_schema_requires_what_every_record_has():
    schema = json.loads(SCHEMA.read_text())
    assert {"key", "pexec", "attempt", "outcome", "state", "reason", "wallclock_times", "flags"} <= set(
        schema["required"])
    assert "argv" not in schema["required"] and "instrumentation" not in schema["required"]
    assert schema["additionalProperties"] is False


def test_records_written_by_a_run_are_valid_and_round_trip(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "fail"}, executions=1)
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert run_to_end(state) == 6      # finished, with b errored
    records = {rec.bench: rec for rec in map(read_record, list_records(state).values())}
    assert records["a"].state == "completed" and len(records["a"].wallclock_times) == 3
    assert records["b"].state == "errored" and "status 1" in records["b"].reason
    for rec in records.values():
        on_disk = json.loads(record_path(state, rec.job_index, rec.attempt).read_text())
        assert on_disk == rec.as_json()
        assert ExecutionRecord.model_validate(on_disk) == rec


def test_unset_fields_are_left_out_not_null(tmp_path):
    (tmp_path / "executions").mkdir()
    path = write_record(tmp_path, make_record(outcome="E"))
    on_disk = json.loads(path.read_text())
    assert "argv" not in on_disk and "instrumentation" not in on_disk and on_disk["reason"] == "planted"


def test_pair_execution_timeline_is_optional_and_kept(tmp_path):
    """Records from before pair executions stay valid; a pair's timeline round-trips."""
    (tmp_path / "executions").mkdir()
    timeline = {"iteration_start_ns": [10], "iteration_end_ns": [20], "barrier_wait_ns": [3]}
    path = write_record(tmp_path, make_record(**timeline))
    assert read_record(path).barrier_wait_ns == [3]
    assert {k: json.loads(path.read_text())[k] for k in timeline} == timeline
    assert "iteration_start_ns" not in json.loads(write_record(tmp_path, make_record(attempt=2)).read_text())


BAD = [
    (b"[1,2,3]", "the whole record: Input should be an object"),
    (b"{half", "the whole record: Invalid JSON"),
    (json.dumps(record_fields(wallclock_times=[0.1, "x"])).encode(), "wallclock_times.1:"),
    (json.dumps(record_fields(pexec="0")).encode(), "pexec: Input should be a valid integer"),
    (json.dumps(record_fields(pexec=True)).encode(), "pexec: Input should be a valid integer"),
    (json.dumps(record_fields(core_cycle_counts=[[2**64]])).encode(), "core_cycle_counts.0.0:"),
    (json.dumps(record_fields(surprise=1)).encode(), "surprise: Extra inputs are not permitted"),
    (json.dumps({k: v for k, v in record_fields().items() if k != "outcome"}).encode(), "outcome: Field required"),
    (json.dumps(record_fields(outcome="E")).encode().replace(b'"errored"', b'"completed"'),
     "state 'completed' does not match outcome 'E'"),
    (json.dumps(record_fields(vm="other")).encode(), "key 'a:fake:v' is not bench:vm:variant"),
    (json.dumps(record_fields()).encode().replace(b"0.1", b"NaN"), "wallclock_times.0:"),
    (json.dumps(record_fields(barrier_wait_ns=[-1])).encode(), "barrier_wait_ns.0:"),
    (json.dumps(record_fields(iteration_start_ns=[1.5])).encode(), "iteration_start_ns.0:"),
]


@pytest.mark.parametrize("data,field", BAD)
def test_invalid_record_is_one_line_naming_file_and_field(tmp_path, data, field):
    path = tmp_path / "job000000-attempt001.json"
    path.write_bytes(data)
    with pytest.raises(ColdrunError) as e:
        read_record(path)
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{path}: not a valid execution record: ") and field in line


def test_commands_reading_an_invalid_record_print_one_line(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "ok"}, executions=2)
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert run_to_end(state) == 0
    bad = record_path(state, 1, 1)
    bad.write_text('{"key": 3}')
    for argv in (["export", str(state), "--format", "native", "-o", str(tmp_path / "n.json")],
                 ["export", str(state), "--format", "krun", "-o", str(tmp_path / "k.json.bz2")]):
        assert main(argv) != 0
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(bad) in err and "key: Input should be a valid string" in err, err
    assert not (tmp_path / "n.json").exists() and not (tmp_path / "k.json.bz2").exists()
    # status reports rather than fails: the damaged record is one line of its ALTERED list (exit 4)
    assert main(["status", str(state)]) == 4
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if str(bad) in line and "key: Input should be a valid string" in line]


def test_a_slot_without_a_record_is_a_valid_slot_but_not_a_record():
    slot = ExecutionSlot(key="a:b:c", pexec=2, state="crashed", attempt=3).model_dump(mode="json")
    assert slot["wallclock_times"] == [] and slot["state"] == "crashed"
    with pytest.raises(ValueError):
        ExecutionRecord.model_validate(slot)


def test_check_shows_the_results_cap_and_the_largest_run_is_kept(exp_factory, tmp_path):
    """Issue 26 item 6: check shows the results document's cap, which follows the experiment (iterations x
    cores x counters; tests/unit/supervisor/test_results_document.py has a big machine's sizes), and the
    largest document a run on this machine can write (the most iterations, 20-digit counts on every core)
    is recorded whole."""
    from iteration_runners.protocol import document_limit
    from supervisor.experiment.quantities import format_size
    cores = os.cpu_count() or 1
    iterations = 100_000
    p = exp_factory({"big": "bigcounters"}, iterations=iterations)
    check = coldrun("check", str(p))
    assert (f"results document: kept up to {format_size(document_limit(iterations, cores))} per execution "
            f"({iterations:,} iterations x (4 times + {cores} cores x 3 counters)") in check.stdout, check.stdout
    state = tmp_path / "s"
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state), timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    [path] = list_records(state).values()
    rec = read_record(path)
    assert rec.outcome == "C", rec.reason
    assert len(rec.core_cycle_counts) == cores and len(rec.core_cycle_counts[0]) == iterations
