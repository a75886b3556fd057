"""Containment through `coldrun`: a runner's escaped helper neither spoils its measurement nor outlives it."""

from __future__ import annotations

import json
import time

from coldrun_helpers import FAKE_RUNNER, coldrun
from process_checks import gone
from supervisor.launch.containment import open_containment

ESCAPING_RUNNER = FAKE_RUNNER.parent / "escaping_runner.py"


def expected_containment() -> str:
    box, why = open_containment()
    box.close()
    print(f"containment on this machine: {box.kind} ({why})")
    return box.kind


def run_escaping(exp_factory, tmp_path, behaviour: str, extra: str = "") -> tuple[dict, int, float]:
    p = exp_factory({"esc": behaviour}, extra=extra)
    p.write_text(p.read_text().replace(str(FAKE_RUNNER), str(ESCAPING_RUNNER)))
    state = tmp_path / "s"
    t0 = time.monotonic()
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state), timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
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
    assert record["wallclock_times"] == [1000 + i / 1e3 for i in range(5)]
    assert f"started helper {daemon}" in record["stdout_tail"]
    assert record["leftover_processes"] == 1 and record["containment"] == kind
    assert record["duration_seconds"] < 5 and elapsed < 30
    assert gone(daemon)


def test_timed_out_runner_and_its_escaped_helper_are_killed(exp_factory, tmp_path):
    kind = expected_containment()
    record, daemon, _ = run_escaping(exp_factory, tmp_path, "daemon-hang", extra='execution_timeout = "2s"')
    assert record["outcome"] == "T" and record["timed_out"] is True
    assert record["leftover_processes"] == 1 and record["containment"] == kind
    assert 2 <= record["duration_seconds"] < 5
    assert gone(daemon)
