"""Kill the supervisor at every named point of a pair execution's boot (the new one between the two
sides' records included), resume each time: every pair execution ends recorded whole, both sides, once;
no runner, barrier or half a pair is left behind."""

from __future__ import annotations

import os
import re
import signal

import psutil
import pytest

from coldrun_helpers import coldrun, native_export, pause_env
from pair_experiments import pair_experiment

POINTS = ["after-claim", "during-run", "in-reconcile", "after-run", "between-pair-records", "in-reconcile",
          "after-record", "after-flag", "during-run", "between-pair-records"]

if len(os.sched_getaffinity(0)) < 2:
    pytest.skip("pair executions need 2 CPUs; this machine gives the tests fewer", allow_module_level=True)


def _boots(state) -> int:
    line = next(x for x in (state / "schedule").read_text().splitlines() if x.startswith("boots="))
    return int(line.split("=")[1])


def _ours(tmp_path) -> list[psutil.Process]:
    """Runners of this test's benchmarks still alive."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if any(str(tmp_path) in arg for arg in (p.info["cmdline"] or [])):
            found.append(p)
    return found


def test_kills_at_every_point_of_a_pair_execution_never_record_half_a_pair(tmp_path):
    exp = pair_experiment(tmp_path, [("ok", "ok"), ("ok", "slow")], executions=4, iterations=20,
                          extra="[rerun]\nmax_attempts = 50\nmax_unexplained_boots = 100\n")
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), env=pause_env("after-claim@1"))
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    for point in POINTS:
        r = coldrun("resume", str(state), env=pause_env(f"{point}@{_boots(state) + 1}"))
        assert r.returncode == -signal.SIGKILL, (point, r.stderr[-2000:])
    r = coldrun("resume", str(state), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    log = (state / "log").read_text()
    assert "the other side of its pair execution was never recorded" in log     # a lone half was removed
    assert "removed the duet barrier" in log

    bundle = native_export(state, tmp_path)
    assert [j["state"] for j in bundle["jobs"]] == ["completed"] * 8
    slots = bundle["executions"]
    assert len(slots) == 16
    for job in bundle["jobs"]:
        a, b = [s for s in slots if s["job_index"] == job["index"]]
        assert (a["side"], b["side"]) == ("a", "b")
        assert a["attempt"] == b["attempt"] == job["attempts"]
        assert f'{a["key"]}/{b["key"]}' == job["key"] and a["pair_id"] == b["pair_id"]
        assert len(a["wallclock_times"]) == len(b["wallclock_times"]) == 20
        assert a["pair"]["start_order"] == b["pair"]["start_order"]
    names = os.listdir(state / "executions")
    for rec in names:      # every attempt on disk is whole: both sides or none
        other = rec.replace("-a.json", "-b.json") if rec.endswith("-a.json") else rec.replace("-b.json", "-a.json")
        assert other in names, rec
    assert _ours(tmp_path) == []
    barriers = set(re.findall(r"/coldrun-duet-\d+-[0-9a-f]+", log)) | {s["pair"]["barrier"] for s in slots}
    assert len(barriers) > 8 and not [b for b in barriers if os.path.exists("/dev/shm" + b)]
