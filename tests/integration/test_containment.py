"""Containment through `coldrun`: a runner's escaped helper neither spoils its measurement nor outlives it."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from coldrun_helpers import OK_SCALE, FAKE_RUNNER, coldrun
from process_checks import gone
from supervisor.launch.containment import open_containment

ESCAPING_RUNNER = FAKE_RUNNER.parent / "escaping_runner.py"


def expected_containment() -> str:
    box, why = open_containment()
    box.close()
    print(f"containment on this machine: {box.kind} ({why})")
    return box.kind


def run_escaping(exp_factory, tmp_path, behaviour: str, extra: str = "", exit_code: int = 0) -> tuple[dict, int, float]:
    p = exp_factory({"esc": behaviour}, extra=extra)
    p.write_text(p.read_text().replace(str(FAKE_RUNNER), str(ESCAPING_RUNNER)))
    state = tmp_path / "s"
    t0 = time.monotonic()
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state), timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == exit_code, r.stderr[-3000:]
    native = tmp_path / "n.json"
    assert coldrun("export", str(state), "--format", "native", "-o", str(native)).returncode == 0
    [record] = json.loads(native.read_text())["executions"]
    daemon = int((tmp_path / "benchmarks" / "esc" / "fake" / "daemon.pid").read_text())
    return record, daemon, elapsed


def test_setsid_daemon_holding_stdout_does_not_spoil_or_hang_the_execution(exp_factory, tmp_path):
    kind = expected_containment()
    # No execution_timeout: before, the supervisor waited for pipe EOF for ever.
    record, daemon, elapsed = run_escaping(exp_factory, tmp_path, "daemon")
    print({k: record[k] for k in ("outcome", "leftover_processes", "containment", "duration_seconds")},
          f"coldrun start took {elapsed:.2f}s")
    assert record["outcome"] == "C" and record["state"] == "completed", record["reason"]
    assert record["timed_out"] is False and record["exit_code"] == 0
    assert record["wallclock_times"] == [(1000 + i / 1e3) * OK_SCALE for i in range(5)]
    assert f"started helper {daemon}" in record["stdout_tail"]
    assert record["leftover_processes"] == 1 and record["containment"] == kind
    assert record["duration_seconds"] < 20 and elapsed < 60     # bounded (was: for ever); loose for a loaded CI machine
    assert gone(daemon)


def test_timed_out_runner_and_its_escaped_helper_are_killed(exp_factory, tmp_path):
    kind = expected_containment()
    record, daemon, _ = run_escaping(exp_factory, tmp_path, "daemon-hang", extra='execution_timeout = "2s"',
                                     exit_code=6)   # finished, with a timed-out execution
    assert record["outcome"] == "T" and record["timed_out"] is True
    assert record["leftover_processes"] == 1 and record["containment"] == kind
    assert 2 <= record["duration_seconds"] < 5
    assert gone(daemon)


def test_escaped_helper_of_a_killed_supervisor_is_killed_through_its_cgroup(exp_factory, tmp_path):
    if expected_containment() != "cgroup":
        pytest.skip("no writable cgroup v2 here: after the supervisor dies, only a cgroup still finds an escapee")
    p = exp_factory({"esc": "daemon"})
    p.write_text(p.read_text().replace(str(FAKE_RUNNER), str(ESCAPING_RUNNER)))
    state = tmp_path / "s"
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state),
                env={"COLDRUN_TEST_PAUSE_AT": "during-run@1"})
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    cgroup = json.loads((state / "runner.json").read_text())["cgroup"]
    pid_file = tmp_path / "benchmarks" / "esc" / "fake" / "daemon.pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists():
        assert time.monotonic() < deadline, "the runner never started its helper"
        time.sleep(0.05)
    daemon = int(pid_file.read_text())
    assert not gone(daemon)
    r = coldrun("resume", str(state), timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"process(es) left in its cgroup {cgroup} and removed it" in (state / "log").read_text()
    assert gone(daemon) and not os.path.exists(cgroup)


def test_the_runs_memory_is_bounded_together_and_a_hit_says_so(exp_factory, tmp_path):
    """Issue 26 item 9: with heap_limit = "64MiB" a 256 MiB /dev/shm file (outside RLIMIT_DATA) was written
    and the run completed, unflagged.  Now the run's memory cgroup (v2 memory.max, or a v1 memory cgroup on a
    hybrid host) bounds all its processes together, swap off, and the record says the OOM killer ended it."""
    if os.geteuid() != 0:
        pytest.skip("making memory cgroups needs root")
    p = exp_factory({"shm": "shm"}, extra='heap_limit = "64MiB"')
    shm = "/dev/shm/coldrun-test-" + str(tmp_path / "benchmarks" / "shm" / "fake" / "bench.txt").replace("/", "_")
    state = tmp_path / "s"
    try:
        r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state), timeout=120)
        native = tmp_path / "n.json"
        assert coldrun("export", str(state), "--format", "native", "-o", str(native)).returncode == 0
        [record] = json.loads(native.read_text())["executions"]
        memory = record["memory_limit"]
        if memory["mechanism"] == "none":
            pytest.skip(f"no memory cgroup on this machine: {memory['note']}")
        print(memory, record["reason"])
        assert memory["limit_bytes"] == (64 + 8) << 20
        assert record["outcome"] == "E" and record["signal_name"] == "SIGKILL", record["reason"]
        assert "memory_limit" in record["flags"] and memory["oom_kills"] >= 1
        assert "OOM killer" in record["reason"] and r.returncode == 6
    finally:
        if os.path.exists(shm):
            os.unlink(shm)
