"""[duet] barrier = false end to end: configs/duet.toml's A/B pair run with --simulate-reboots and no barrier; the
records say so, and `coldrun-analyze duet` pairs its iterations by overlap and says it did."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from coldrun_helpers import REPO, coldrun
from root_runs import runs_as_invoker

if len(os.sched_getaffinity(0)) < 2:
    pytest.skip("a pair needs 2 CPUs; this machine gives the tests fewer", allow_module_level=True)

AB = "fib:python:default-python/fib:python:slow-python"


def _experiment(tmp_path) -> str:
    text = (REPO / "configs/duet.toml").read_text()
    duet_lines = ('pairs = [\n    { a = "fib:python:default-python", b = "fib:python:slow-python" },\n]\n'
                  'barrier = false\n')
    start, end = text.index("pairs = ["), text.index("[waits]")
    text = text[:start] + duet_lines + "\n" + text[end:]
    # fib(26), ~40 ms an iteration: over two seconds of iterations, longer than the two runners' start-up skew
    # under the parallel suite's load (fib(24) left one execution without overlapping iterations there)
    text = text.replace("executions = 4 ", "executions = 3 ").replace("\nfib = 20\n", "\nfib = 26\n").replace(
        'benchmarks_dir = "demo/benchmarks"', f'benchmarks_dir = "{REPO / "configs/demo/benchmarks"}"')
    assert "barrier = false" in text and "executions = 3 " in text and "fib = 26" in text
    path = tmp_path / "unsynchronised.toml"
    path.write_text(runs_as_invoker(text))
    return str(path)


def test_a_pair_run_without_a_barrier_is_recorded_so_and_analysed_by_overlap(tmp_path):
    state = tmp_path / "state"
    r = coldrun("start", _experiment(tmp_path), "--simulate-reboots", "--state-dir", str(state), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    native = tmp_path / "native.json"
    assert coldrun("export", str(state), "--format", "native", "-o", str(native)).returncode == 0
    execs = json.loads(native.read_text())["executions"]
    assert len(execs) == 6 and {e["state"] for e in execs} == {"completed"}
    for e in execs:
        assert e["pair"]["barrier"] is None and e["pair"]["spin_us"] is None
        assert "COLDRUN_DUET_BARRIER" not in e["environment"] and "barrier_wait_ns" not in e
        assert len(e["iteration_start_ns"]) == len(e["iteration_end_ns"]) == 60
    j = subprocess.run([sys.executable, "-m", "analysis.cli", "duet", str(native), "--seed", "1",
                        "--resamples", "500", "--json"], capture_output=True, text=True, cwd=str(REPO))
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)["pairs"][0]
    assert doc["pair"] == AB and doc["pairing"] == "overlap"
    # both runners start together, so iterations find partners; how many is up to the scheduler
    assert sorted(doc["overlap"]) == ["0", "1", "2"] and any(c["paired"] for c in doc["overlap"].values())
    for counts in doc["overlap"].values():   # an iteration may pair with two of the other side's (> 40% of each)
        assert counts["paired"] < 120 and counts["a_iterations"] == counts["b_iterations"] == 60
    t = subprocess.run([sys.executable, "-m", "analysis.cli", "duet", str(native), "--seed", "1",
                        "--resamples", "500"], capture_output=True, text=True, cwd=str(REPO))
    assert t.returncode == 0 and "pairing            by overlap (run without a barrier" in t.stdout, t.stderr
