"""Schedule format 2: durable appends, and what a cut at each step of one leaves (in-process).

A cut is emulated by an exception from the append's checkpoint (the boot's crash
points kill the process there; tests/integration/test_run_length_crash.py does that
for real).  Whatever the step, loading then discarding the unfinished append gives
the schedule as it was, or the append whole; never a half, never a job twice.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from supervisor.experiment.plan import JobSpec
from supervisor.state.schedule import (COMPLETED, OUTSTANDING, SECTOR, Schedule, ScheduleCorrupt, job_line,
                                       render_new)

FIRST = [JobSpec("a:vm:v", 0, False, 100, 20), JobSpec("b:vm:v", 0, False, 100, -3)]
STEPS = ["append-intent", "append-half-written", "append-written", "append-committed"]


class Cut(Exception):
    pass


def cut_at(point):
    def checkpoint(name):
        if name == point:
            raise Cut(name)
    return checkpoint


def make(tmp_path):
    path = tmp_path / "schedule"
    Schedule.create(path, render_new(FIRST, experiment_sha256="cd" * 32, mode="simulated", order="round-robin",
                                     seed=0, baselines={"x": 1.0}))
    return path


def more(n=2, start=1):
    return [JobSpec("a:vm:v", start + i, False, 150 + i, 20) for i in range(n)]


def test_append_grows_the_schedule_with_iterations_and_params(tmp_path):
    path = make(tmp_path)
    s = Schedule.load(path)
    s.set_job(s.jobs[0], COMPLETED, 1)
    lines = s.append(more())
    assert [(j.index, j.pexec, j.iterations, j.param) for j in lines] == [(2, 1, 150, 20), (3, 2, 151, 20)]
    again = Schedule.load(path)
    assert [(j.key, j.pexec, j.iterations, j.param, j.state) for j in again.jobs] == [
        ("a:vm:v", 0, 100, 20, COMPLETED), ("b:vm:v", 0, 100, -3, OUTSTANDING),
        ("a:vm:v", 1, 150, 20, OUTSTANDING), ("a:vm:v", 2, 151, 20, OUTSTANDING)]
    assert path.read_bytes().endswith((job_line(OUTSTANDING, 0, more()[1]) + "\n").encode())
    assert not again.append_in_flight and again.unfinished_append == 0
    # updates in place still work on appended jobs
    again.set_job(again.jobs[3], COMPLETED, 1)
    assert Schedule.load(path).jobs[3].state == COMPLETED


def test_commit_fields_share_one_sector(tmp_path):
    data = make(tmp_path).read_bytes()
    start = data.index(b"\njobs=") + 1
    end = data.index(b"\nend_header")
    assert start // SECTOR == (end - 1) // SECTOR


@pytest.mark.parametrize("point", STEPS)
def test_a_cut_at_any_step_loses_and_duplicates_nothing(tmp_path, point):
    path = make(tmp_path)
    before = path.read_bytes()
    with pytest.raises(Cut):
        Schedule.load(path).append(more(), cut_at(point))
    s = Schedule.load(path)           # readable as it is (status does this without the lock)
    if point == "append-committed":
        assert len(s.jobs) == 4 and not s.append_in_flight
        return
    assert len(s.jobs) == 2 and s.append_in_flight
    written = {"append-intent": 0, "append-half-written": 39, "append-written": 78}[point]
    assert s.unfinished_append == written
    assert s.discard_unfinished_append() == written
    assert path.read_bytes() == before               # exactly as before the append
    again = Schedule.load(path)
    assert not again.append_in_flight and len(again.jobs) == 2
    again.append(more())                              # the next decision appends the same jobs
    assert [j.pexec for j in Schedule.load(path).jobs] == [0, 0, 1, 2]


def test_a_cut_while_discarding_is_settled_next_time(tmp_path):
    path = make(tmp_path)
    with pytest.raises(Cut):
        Schedule.load(path).append(more(), cut_at("append-written"))
    data = path.read_bytes()
    tail = len(data) - Schedule.load(path).size
    path.write_bytes(data[:-tail])                    # truncated, append_end not yet cleared
    s = Schedule.load(path)
    assert s.append_in_flight and s.unfinished_append == 0
    assert s.discard_unfinished_append() == 0 and not Schedule.load(path).append_in_flight


@pytest.mark.parametrize("damage", [
    lambda d, end: d + b"O 000 000001 000150 +0000000020 a:vm:v\n",           # a tail nobody announced
    lambda d, end: d.replace(b"append_end=000000000000", f"append_end={end - 10:012d}".encode()) + b"x" * 20,
    lambda d, end: d.replace(b"jobs=00000002", b"jobs=00000001"),               # the count lowered
])
def test_a_tail_is_discarded_only_when_an_append_announced_it(tmp_path, damage):
    path = make(tmp_path)
    data = path.read_bytes()
    bad = damage(data, len(data) + 10)
    path.write_bytes(bad)
    with pytest.raises(ScheduleCorrupt):
        Schedule.load(path)
    assert path.read_bytes() == bad


def test_format_1_is_refused_with_one_line(tmp_path):
    path = make(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"format_version=0002", b"format_version=0001"))
    with pytest.raises(ScheduleCorrupt) as e:
        Schedule.load(path)
    assert "\n" not in str(e.value) and "schedule format 1 is not supported" in str(e.value)
    assert "coldrun that started it" in str(e.value)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.sampled_from(STEPS + [None])), min_size=1, max_size=6))
def test_any_sequence_of_appends_and_cuts(tmp_path_factory, appends):
    """Appends, some cut at some step and settled: the jobs are exactly the appends that committed."""
    path = make(tmp_path_factory.mktemp("s"))
    expected = [(j.key, j.pexec, j.iterations, j.param) for j in FIRST]
    pexec = 1
    for n, point in appends:
        s = Schedule.load(path)
        s.discard_unfinished_append()
        specs = more(n, pexec)
        try:
            s.append(specs, cut_at(point))
            committed = True
        except Cut:
            committed = point == "append-committed"
        if committed:
            expected += [(j.key, j.pexec, j.iterations, j.param) for j in specs]
            pexec += n
    s = Schedule.load(path)
    s.discard_unfinished_append()
    assert [(j.key, j.pexec, j.iterations, j.param) for j in Schedule.load(path).jobs] == expected
