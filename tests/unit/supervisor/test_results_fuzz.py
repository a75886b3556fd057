"""Fuzzing the one results-document validator and the supervisor's judging of a document.

Random JSON, mutated valid documents and cut byte strings never raise anything
but ProtocolError (a one-line reason), and a document the validator refuses
never becomes a completed record; a document it accepts always makes a valid one.
"""

from __future__ import annotations

import copy
import json
import math
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.execution_record import ExecutionRecord
from execution_records import record_fields
from iteration_runners.protocol import REQUIRED_KEYS, U64_MAX, ProtocolError, parse_document
from supervisor.boot.execution import judge_document

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=16)
finite_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6)
                           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
run_modes = st.fixed_dictionaries({"iterations": st.integers(1, 5), "mode": st.sampled_from(["iterations", "startup"]),
                                   "instrument": st.booleans()})


@st.composite
def valid_documents(draw) -> tuple[dict[str, Any], SimpleNamespace]:
    """A valid document and the VM run it fits."""
    startup = draw(st.booleans())
    n = 1 if startup else draw(st.integers(1, 5))
    cores = draw(st.integers(0, 3))
    per_core = st.lists(st.lists(st.integers(0, U64_MAX), min_size=n, max_size=n), min_size=cores, max_size=cores)
    doc: dict[str, Any] = {"protocol_version": 1, "wallclock_times": draw(st.lists(seconds, min_size=n, max_size=n)),
                           "core_cycle_counts": draw(per_core), "aperf_counts": draw(per_core),
                           "mperf_counts": draw(per_core),
                           "counters": {"available": True, "reason": None} if cores
                           else {"available": False, "reason": draw(st.text(min_size=1, max_size=20))}}
    instrument = not startup and draw(st.booleans())
    if instrument:
        doc["instrumentation"] = draw(st.dictionaries(st.text(max_size=8), finite_json, max_size=3))
    if startup:
        doc["startup"] = {"clock": "CLOCK_MONOTONIC_RAW", "wrapper_time": "1.0", "runner_time": "1.5",
                          "seconds": doc["wallclock_times"][0]}
    return doc, SimpleNamespace(iterations=n, mode="startup" if startup else "iterations", instrument=instrument)


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, at + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, at + (i,))
    return out


def _replace(doc: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = new
    return doc


def judged(raw: bytes, vm: SimpleNamespace) -> tuple[str, str | None, dict[str, Any]]:
    fields: dict[str, Any] = {}
    try:
        judged = judge_document(raw, vm, vm.iterations, fields)
    except Exception as e:   # the property: nothing escapes the judging
        raise AssertionError(f"judging raised {type(e).__name__}: {e}") from e
    outcome, reason = judged.flag, judged.reason
    if outcome == "E":
        assert judged.cause == "protocol_refusal"
        assert isinstance(reason, str) and reason and "\n" not in reason, reason
    else:
        assert outcome == "C" and reason is None
        # A completed record is a valid record whose measurements fit the run.
        rec = ExecutionRecord.model_validate(record_fields(outcome="C", iterations=vm.iterations, mode=vm.mode,
                                                           instrument=vm.instrument, **fields))
        assert len(rec.wallclock_times) == vm.iterations
        assert all(math.isfinite(t) and t >= 0 for t in rec.wallclock_times)
    return outcome, reason, fields


@FUZZ
@given(json_values, run_modes)
def test_random_json_is_judged_without_a_traceback(value, mode):
    try:
        raw = json.dumps(value).encode()
    except ValueError:
        return
    judged(raw, SimpleNamespace(**mode))


@FUZZ
@given(st.binary(max_size=200), run_modes)
def test_random_bytes_are_judged_without_a_traceback(raw, mode):
    judged(raw, SimpleNamespace(**mode))


@FUZZ
@given(valid_documents())
def test_valid_documents_complete_with_their_measurements(case):
    doc, vm = case
    outcome, reason, fields = judged(json.dumps(doc).encode(), vm)
    assert outcome == "C", reason
    assert fields["wallclock_times"] == doc["wallclock_times"] and fields["counters"] == doc["counters"]


@FUZZ
@given(valid_documents(), st.data())
def test_mutated_documents_never_escape_the_validator(case, data):
    doc, vm = case
    mutated = copy.deepcopy(doc)
    path = data.draw(st.sampled_from(_paths(mutated)))
    mutated = _replace(mutated, path, data.draw(json_values))
    try:
        raw = json.dumps(mutated).encode()
    except ValueError:
        return
    judged(raw, vm)
    try:
        parse_document(raw)
    except ProtocolError as e:
        assert "\n" not in str(e)


BAD_VALUES = {"wallclock_times": st.sampled_from([-1.0, "0.1", True, None, [0.1]]),
              "core_cycle_counts": st.sampled_from([-1, 2**64, 1.0, "1", True, None])}


@FUZZ
@given(valid_documents(), st.data())
def test_documents_broken_on_purpose_are_errored(case, data):
    doc, vm = case
    broken = copy.deepcopy(doc)
    how = data.draw(st.sampled_from(["drop key", "unknown key", "bad time", "bad count", "nan", "cut",
                                     "wrong count"]))
    raw = None
    if how == "drop key":
        del broken[data.draw(st.sampled_from(sorted(REQUIRED_KEYS)))]
    elif how == "unknown key":
        broken[data.draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in doc))] = 1
    elif how == "bad time":
        broken["wallclock_times"][0] = data.draw(BAD_VALUES["wallclock_times"])
    elif how == "bad count":
        if not broken["core_cycle_counts"]:
            broken["core_cycle_counts"] = [[1] * len(broken["wallclock_times"])]  # breaks all-or-nothing
        else:
            broken["core_cycle_counts"][0][0] = data.draw(BAD_VALUES["core_cycle_counts"])
    elif how == "nan":
        raw = json.dumps(broken).encode().replace(b'"wallclock_times": [', b'"wallclock_times": [NaN, ', 1)
    elif how == "cut":
        full = json.dumps(broken).encode()
        raw = full[:data.draw(st.integers(0, len(full) - 1))]
    else:
        vm = SimpleNamespace(iterations=vm.iterations + 1, mode=vm.mode, instrument=vm.instrument)
    raw = raw if raw is not None else json.dumps(broken).encode()
    outcome, reason, fields = judged(raw, vm)
    assert outcome == "E" and fields == {}, (how, reason)
