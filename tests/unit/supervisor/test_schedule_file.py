
import pytest

from supervisor.experiment.plan import JobSpec
from supervisor.state.schedule import (COMPLETED, OUTSTANDING, RUNNING, SKIPPED, MailCounter, Schedule, ScheduleCorrupt,
                                 render_new)

JOBS = [JobSpec("a:vm:v", 0, False, 5, 7), JobSpec("b:vm:v", 0, True, 5, -7), JobSpec("a:vm:v", 1, False, 5, 7)]


def make(tmp_path, baselines=None):
    path = tmp_path / "schedule"
    Schedule.create(path, render_new(JOBS, experiment_sha256="ab" * 32, mode="simulated", order="random",
                                     seed=42, baselines=baselines or {"coretemp:temp1": 41.5, "acpitz": -3.25}))
    return path


def test_round_trip_and_header(tmp_path):
    s = Schedule.load(make(tmp_path))
    assert s.seed == 42 and s.order == "random" and s.mode == "simulated" and s.status == "running"
    assert s.baselines == {"coretemp:temp1": 41.5, "acpitz": -3.25}
    assert [(j.state, j.key, j.pexec) for j in s.jobs] == [(OUTSTANDING, "a:vm:v", 0), (SKIPPED, "b:vm:v", 0),
                                                           (OUTSTANDING, "a:vm:v", 1)]


def test_updates_in_place_keep_size(tmp_path):
    path = make(tmp_path)
    size = path.stat().st_size
    inode = path.stat().st_ino
    s = Schedule.load(path)
    s.set_job(s.jobs[0], RUNNING, 1)
    s.set_job(s.jobs[0], COMPLETED)
    s.set_boots(12345)
    s.set_mails_sent(3)
    s.set_status("finished")
    assert path.stat().st_size == size and path.stat().st_ino == inode
    again = Schedule.load(path)
    assert again.jobs[0].state == COMPLETED and again.jobs[0].attempts == 1
    assert again.boots == 12345 and again.mails_sent == 3 and again.status == "finished"
    assert again.next_outstanding().index == 2


def test_mail_counter_backed_by_header(tmp_path):
    s = Schedule.load(make(tmp_path))
    c = MailCounter(s)
    assert c.get() == 0
    c.set(4)
    assert Schedule.load(s.path).mails_sent == 4


def test_create_refuses_to_overwrite(tmp_path):
    path = make(tmp_path)
    with pytest.raises(Exception, match="already exists"):
        Schedule.create(path, b"x")


@pytest.mark.parametrize("mutate", [
    lambda d: d.replace(b"\nO 000 000000", b"\nZ 000 000000", 1),               # bad state byte
    lambda d: d[:-5],                                                             # truncated
    lambda d: d + b"O 000 000002 000005 +0000000007 a:vm:v\n",                    # grown, no append announced
    lambda d: d.replace(b"b:vm:v", b"c:vm:v"),                                    # key edited
    lambda d: d.replace(b"000005 -0000000007", b"000005 -0000000008"),            # param edited
    lambda d: d.replace(b"000005 -0000000007", b"000006 -0000000007"),            # iterations edited
    lambda d: d.replace(b"boots=00000000", b"boots=0000000x"),                    # bad header value
    lambda d: d.replace(b"format_version=0002", b"format_version=0009"),          # unknown version
    lambda d: d.replace(b"append_end=000000000000", b"append_end=000000000001"),  # append before the jobs' end
    lambda d: b"",                                                                # empty
])
def test_corruption_is_an_error_not_a_repair(tmp_path, mutate):
    path = make(tmp_path)
    bad = mutate(path.read_bytes())
    path.write_bytes(bad)
    with pytest.raises(ScheduleCorrupt):
        Schedule.load(path)
    assert path.read_bytes() == bad        # untouched


def test_too_many_sensors_refused():
    with pytest.raises(Exception, match="temperature sensors"):
        render_new(JOBS, experiment_sha256="ab" * 32, mode="simulated", order="random", seed=1,
                   baselines={f"s{i}": 1.0 for i in range(129)})


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from("ORCETXS"), st.integers(0, 999)), max_size=30),
       st.integers(0, 99_999_999), st.integers(0, 9999))
def test_any_update_sequence_round_trips(tmp_path_factory, updates, boots, mails):
    path = make(tmp_path_factory.mktemp("s"))
    size = path.stat().st_size
    s = Schedule.load(path)
    expected = {j.index: (j.state, j.attempts) for j in s.jobs}
    for index, state, attempts in updates:
        s.set_job(s.jobs[index], state, attempts)
        expected[index] = (state, attempts)
    s.set_boots(boots)
    s.set_mails_sent(mails)
    again = Schedule.load(path)
    assert path.stat().st_size == size
    assert {j.index: (j.state, j.attempts) for j in again.jobs} == expected
    assert (again.boots, again.mails_sent) == (boots, mails)
