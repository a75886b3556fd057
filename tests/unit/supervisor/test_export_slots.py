"""Every scheduled execution keeps its slot in both exports (issue 10 §4).

Job states and records are planted directly in a started state dir, so each
case is exactly the state a boot would leave.
"""

from __future__ import annotations

import bz2
import json

import pytest

from cycle_helpers import experiment, start_quiet
from execution_records import make_record
from supervisor.views.export import krun_results, native_bundle, write_export
from supervisor.state.records import write_record
from supervisor.state.schedule import (COMPLETED, CRASHED, ERRORED, OUTSTANDING, RUNNING, SKIPPED, TIMED_OUT,
                                       Schedule)
from supervisor.state.statedir import StateDir

KEY = "a:fake:v"
OTHER = "b:fake:v"


def plant(tmp_path, states: dict[tuple[str, int], tuple[str, int]], executions: int = 5, extra: str = ""):
    """Start an experiment of keys a and b; give job (key, pexec) the (state, attempts) asked for,
    with a record for every attempt (a completed final one carries times pexec + 0.1 .. + 0.3)."""
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"}, executions=executions, extra=extra)
    state = tmp_path / "s"
    start_quiet(exp, state)
    sched = Schedule.load(state / "schedule")
    for job in sched.jobs:
        if job.state == SKIPPED:
            continue
        flag, attempts = states.get((job.key, job.pexec), (COMPLETED, 1))
        for attempt in range(1, attempts + 1):
            final = attempt == attempts
            if not final:
                outcome = "O"
            elif flag in (COMPLETED, ERRORED, TIMED_OUT):
                outcome = flag
            else:
                break          # crashed / outstanding: the last attempt left no record
            times = [job.pexec + t for t in (0.1, 0.2, 0.3)]
            write_record(state, make_record(key=job.key, pexec=job.pexec, job_index=job.index, attempt=attempt,
                                            outcome=outcome, wallclock_times=times if outcome == "C" else [],
                                            duration_seconds=2.0 + job.pexec))
        sched.set_job(job, flag, attempts)
    return StateDir(state)


def times(pexec):
    return [pexec + t for t in (0.1, 0.2, 0.3)]


def test_job_crashed_on_all_attempts_keeps_its_slot(tmp_path):
    """The issue's case: max_attempts = 3, killed on all three, marked crashed."""
    state = plant(tmp_path, {(KEY, 1): (CRASHED, 3)}, executions=3)
    krun = krun_results(state)
    assert krun["pexec_flags"][KEY] == ["C", "E", "C"]
    assert krun["wallclock_times"][KEY] == [times(0), [], times(2)]
    assert all(krun[k][KEY][1] == [] for k in ("core_cycle_counts", "aperf_counts", "mperf_counts"))
    assert krun["eta_estimates"][KEY] == [2.0, 0.0, 4.0]
    assert krun["error_flag"] is True
    native = native_bundle(state)
    assert native["error_flag"] is True
    slot = [e for e in native["executions"] if e["key"] == KEY][1]
    assert (slot["pexec"], slot["state"], slot["attempt"], slot["wallclock_times"]) == (1, "crashed", 3, [])
    # Its earlier attempts' records are re-runs; none of them is the final one.
    assert [(r["key"], r["attempt"]) for r in native["rerun_attempts"]] == [(KEY, 1), (KEY, 2)]


@pytest.mark.parametrize("flag,krun_flag,state_name,error_flag", [
    (CRASHED, "E", "crashed", True),
    (ERRORED, "E", "errored", True),
    (TIMED_OUT, "T", "timed_out", False),      # Krun: a timeout does not set error_flag
    (OUTSTANDING, "O", "outstanding", False),  # e.g. re-queued after a crash, not run again yet
])
def test_failed_slot_in_the_middle_keeps_the_order_of_the_others(tmp_path, flag, krun_flag, state_name, error_flag):
    state = plant(tmp_path, {(KEY, 2): (flag, 1)})
    krun = krun_results(state)
    assert krun["pexec_flags"][KEY] == ["C", "C", krun_flag, "C", "C"]
    assert krun["wallclock_times"][KEY] == [times(0), times(1), [], times(3), times(4)]
    for k in ("core_cycle_counts", "aperf_counts", "mperf_counts", "eta_estimates"):
        assert len(krun[k][KEY]) == 5, k
    assert krun["pexec_flags"][OTHER] == ["C"] * 5
    assert krun["error_flag"] is error_flag

    native = native_bundle(state)
    assert native["error_flag"] is error_flag
    assert len(native["executions"]) == len(native["jobs"]) == 10
    assert [(e["key"], e["pexec"]) for e in native["executions"]] == [(j["key"], j["pexec"]) for j in native["jobs"]]
    mine = [e for e in native["executions"] if e["key"] == KEY]
    assert [e["state"] for e in mine] == ["completed", "completed", state_name, "completed", "completed"]
    assert [e["wallclock_times"] for e in mine] == [times(0), times(1), [], times(3), times(4)]
    assert all(e["bench"] == "a" and e["vm"] == "fake" and e["variant"] == "v" for e in mine)


def test_both_files_on_disk_keep_the_slots(tmp_path):
    state = plant(tmp_path, {(KEY, 0): (CRASHED, 1), (OTHER, 4): (ERRORED, 2)})
    n, out = write_export(str(state.path), "krun", str(tmp_path / "k.json.bz2"))
    krun = json.loads(bz2.decompress(out.read_bytes()))
    assert n == 10 and krun["pexec_flags"] == {KEY: ["E", "C", "C", "C", "C"], OTHER: ["C", "C", "C", "C", "E"]}
    n, out = write_export(str(state.path), "native", str(tmp_path / "n.json"))
    native = json.loads(out.read_text())
    assert n == 10 and [e["state"] for e in native["executions"]].count("completed") == 8
    assert native["error_flag"] is True


def test_skipped_slots_are_in_both_exports(tmp_path):
    """Krun's results never held a skipped key; coldrun's keep its slots (flag S, as Krun's manifest), so
    both readings show them."""
    state = plant(tmp_path, {}, executions=2, extra='skip = ["b:*:*"]')
    krun = krun_results(state)
    assert krun["pexec_flags"][OTHER] == ["S", "S"] and krun["execution_states"][OTHER] == ["skipped"] * 2
    assert krun["wallclock_times"][OTHER] == [[], []] and krun["error_flag"] is False
    native = native_bundle(state)
    mine = [(e["pexec"], e["state"], e["attempt"], e["wallclock_times"]) for e in native["executions"]
            if e["key"] == OTHER]
    assert mine == [(0, "skipped", 0, []), (1, "skipped", 0, [])]


@pytest.mark.parametrize("states", [
    {(KEY, 1): (CRASHED, 3), (KEY, 3): (TIMED_OUT, 1), (OTHER, 0): (ERRORED, 2)},
    {(KEY, 0): (RUNNING, 1), (KEY, 1): (OUTSTANDING, 0), (OTHER, 4): (OUTSTANDING, 1)},
])
def test_the_analysis_makes_of_the_native_bundle_the_krun_export(tmp_path, states):
    """Both readings of the state dir are one: the native bundle read back through contracts.state_view is
    the Krun export, list for list, flags, states, durations and error_flag included."""
    from analysis.inputs import native_to_krun
    state = plant(tmp_path, states)
    krun = krun_results(state)
    from_native = native_to_krun(native_bundle(state), tmp_path / "n.json", warn=pytest.fail)
    assert from_native == krun


def test_all_completed_sets_no_flag(tmp_path):
    state = plant(tmp_path, {})
    assert krun_results(state)["error_flag"] is False and native_bundle(state)["error_flag"] is False


def test_the_analysis_reads_the_slots_of_both_exports_alike(tmp_path):
    from analysis.inputs import read_results
    state = plant(tmp_path, {(KEY, 1): (CRASHED, 3), (KEY, 3): (TIMED_OUT, 1)})
    _, native_file = write_export(str(state.path), "native", str(tmp_path / "n.json"))
    _, krun_file = write_export(str(state.path), "krun", str(tmp_path / "k.json.bz2"))
    warnings: list[str] = []
    from_native = read_results(native_file, warn=warnings.append)
    from_krun = read_results(krun_file, warn=warnings.append)
    for results in (from_native, from_krun):
        assert results["pexec_flags"][KEY] == ["C", "E", "C", "T", "C"]
        assert results["execution_states"][KEY] == ["completed", "crashed", "completed", "timed_out", "completed"]
        assert results["wallclock_times"][KEY] == [times(0), [], times(2), [], times(4)]
    assert warnings == []


def test_the_analysis_warns_about_a_native_entry_that_is_not_a_slot(tmp_path):
    from analysis.inputs import read_results
    state = plant(tmp_path, {})
    bundle = native_bundle(state)
    bundle["executions"][0]["wallclock_times"] = [0.1, "x", 0.3]
    path = tmp_path / "n.json"
    path.write_text(json.dumps(bundle))
    warnings: list[str] = []
    results = read_results(path, warn=warnings.append)
    assert len(warnings) == 1 and f"{path}: executions[0]: wallclock_times.1:" in warnings[0], warnings
    first = bundle["executions"][0]
    assert results["wallclock_times"][first["key"]][first["pexec"]] == []   # kept as an empty slot
