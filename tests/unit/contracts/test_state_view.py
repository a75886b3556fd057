"""contracts.state_view: which slots a state dir has and how each reading of them is made."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contracts import state_view
from contracts.execution_record import ExecutionSlot, native_entry
from contracts.state_view import Slot, by_key, krun_results, krun_states, native_slots

KEY = "fib:py:v"


def _record(times, duration=None, flags=()):
    """What a slot reads of a record: its measurement lists, duration and post-check flags."""
    return SimpleNamespace(wallclock_times=times, core_cycle_counts=[[1] * len(times)], aperf_counts=[],
                           mperf_counts=[], duration_seconds=duration, flags=list(flags))


def test_every_state_has_its_krun_letter_and_only_completed_slots_keep_measurements():
    slots = [Slot(KEY, i, s, _record([0.5, 0.5], duration=1.5) if s in state_view.RECORDED else None)
             for i, s in enumerate(state_view.SLOT_STATES)]
    out = krun_results(slots)
    assert out["pexec_flags"][KEY] == ["O", "O", "C", "E", "T", "E", "S"]
    assert out["execution_states"][KEY] == list(state_view.SLOT_STATES)
    assert out["wallclock_times"][KEY] == [[], [], [0.5, 0.5], [], [], [], []]
    assert out["core_cycle_counts"][KEY][2] == [[1, 1]] and out["core_cycle_counts"][KEY][3] == []
    assert out["eta_estimates"][KEY] == [0.0, 0.0, 1.5, 1.5, 1.5, 0.0, 0.0]
    assert out["error_flag"] is True         # the errored and the crashed slot


@pytest.mark.parametrize("state, flags, raised", [
    ("timed_out", (), False),                # as Krun: a timeout is no error
    ("completed", ("thermal_throttle",), False),
    ("completed", ("kernel_log",), True),
    ("crashed", (), True),
    ("skipped", (), False),
])
def test_error_flag(state, flags, raised):
    entry = _record([1.0], flags=flags) if state in state_view.RECORDED else None
    assert krun_results([Slot(KEY, 0, state, entry)])["error_flag"] is raised


def test_a_keys_executions_go_by_pexec_with_gaps_outstanding_and_a_completed_duplicate_kept():
    done = Slot(KEY, 1, "completed", _record([1.0]))
    rows = by_key([Slot(KEY, 3, "errored"), done, Slot(KEY, 1, "errored")])
    assert [(s.pexec, s.state) for s in rows[KEY]] == [(0, "outstanding"), (1, "completed"), (2, "outstanding"),
                                                        (3, "errored")]
    assert rows[KEY][1] is done


def test_pair_sides_go_in_the_order_listed():
    """An A/A pair: both sides under one key, two executions per pair execution, in schedule order."""
    pair = f"{KEY}/{KEY}"
    sides = [Slot(KEY, 0, "completed", _record([1.0]), pair_id=f"{pair}#0", side="a"),
             Slot(KEY, 0, "completed", _record([2.0]), pair_id=f"{pair}#0", side="b"),
             Slot(KEY, 1, "crashed", pair_id=f"{pair}#1", side="a"),
             Slot(KEY, 1, "crashed", pair_id=f"{pair}#1", side="b")]
    out = krun_results(sides)
    assert out["wallclock_times"][KEY] == [[1.0], [2.0], [], []]
    assert out["execution_states"][KEY] == ["completed", "completed", "crashed", "crashed"]


def test_a_slot_without_record_is_a_native_entry_of_its_own_and_reads_back_the_same():
    pair = f"{KEY}/{KEY}"
    slots = [Slot(KEY, 0, "skipped", job_index=0, attempt=0),
             Slot(KEY, 0, "crashed", job_index=1, attempt=2, pair_id=f"{pair}#0", side="b")]
    entries = [native_entry(s) for s in slots]
    assert entries[0] == {"key": KEY, "pexec": 0, "state": "skipped", "job_index": 0, "bench": "fib", "vm": "py",
                          "variant": "v", "attempt": 0, "wallclock_times": [], "core_cycle_counts": [],
                          "aperf_counts": [], "mperf_counts": [], "pair": None, "pair_id": None, "side": None,
                          "iteration_start_ns": None, "iteration_end_ns": None}
    assert entries[1]["pair_id"] == f"{pair}#0" and entries[1]["side"] == "b" and "pair" not in entries[1]
    validated = [ExecutionSlot.model_validate(e) for e in entries]
    assert native_slots(validated, []) == [Slot(s.key, s.pexec, s.state, e, s.job_index, s.attempt, s.pair_id,
                                                s.side) for s, e in zip(slots, validated)]


def test_a_recorded_slot_is_its_record_with_the_schedules_word_on_state_and_pair():
    """A pair whose side b crashed: side a's record completed on its own, the slot is the pair job's state."""
    record = SimpleNamespace(as_json=lambda: {"key": KEY, "pexec": 0, "state": "completed", "boot": 3})
    entry = native_entry(Slot(KEY, 0, "errored", record, 4, 1, pair_id=f"{KEY}/{KEY}#0", side="a"))
    assert entry == {"key": KEY, "pexec": 0, "state": "errored", "boot": 3, "pair_id": f"{KEY}/{KEY}#0",
                     "side": "a"}


def test_native_entries_then_the_jobs_no_entry_names():
    entries = [ExecutionSlot(key=KEY, pexec=0, state="completed", wallclock_times=[1.0])]
    jobs = [{"key": KEY, "pexec": 0, "state": "errored"},        # an entry names it: the entry decides
            {"key": KEY, "pexec": 1, "state": "skipped"},
            {"key": f"{KEY}/{KEY}", "pexec": 0, "state": "completed"},   # a pair job's key is no key
            {"key": KEY, "pexec": 2, "state": "no such state"}, "not a job"]
    slots = native_slots(entries, jobs)
    assert [(s.key, s.pexec, s.state) for s in slots] == [(KEY, 0, "completed"), (KEY, 1, "skipped")]
    assert krun_results(slots)["wallclock_times"][KEY] == [[1.0], []]


def test_a_krun_files_states_come_from_execution_states_else_its_letters():
    both = {"execution_states": {KEY: ["crashed", "running"]}, "pexec_flags": {KEY: ["E", "O"]}}
    assert krun_states(both, KEY, 2) == ["crashed", "running"]
    assert krun_states({"pexec_flags": {KEY: ["C", "E", "T", "O", "S", "Q"]}}, KEY, 6) == \
        ["completed", "errored", "timed_out", "outstanding", "skipped", "flag Q"]
    # states that are not one per execution, or not states, give way to the letters
    assert krun_states({"execution_states": {KEY: ["crashed"]}, "pexec_flags": {KEY: ["E", "E"]}}, KEY, 2) == \
        ["errored", "errored"]
    assert krun_states({"execution_states": {KEY: ["zapped"]}}, KEY, 1) is None
    assert krun_states({}, KEY, 1) is None


def test_the_record_contract_and_the_view_name_the_same_states():
    from typing import get_args

    from contracts.execution_record import SlotState
    assert get_args(SlotState) == state_view.SLOT_STATES
    assert set(state_view.KRUN_FLAG) == set(state_view.SLOT_STATES)
    assert all(state_view.KRUN_FLAG[s] == f for f, s in state_view.STATE_OF_KRUN_FLAG.items())
