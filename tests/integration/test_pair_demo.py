"""configs/duet.toml end to end: `coldrun start --simulate-reboots` runs its A/A and A/B pairs, the exports
carry both sides, and `coldrun-analyze duet` on the native export prints each pair's ratio CI."""

from __future__ import annotations

import bz2
import json
import os
import subprocess
import sys

import pytest

from coldrun_helpers import REPO, coldrun, config_as_invoker

if len(os.sched_getaffinity(0)) < 2:
    pytest.skip("the duet demo needs 2 CPUs; this machine gives the tests fewer", allow_module_level=True)

AA = "fib:python:default-python/fib:python:default-python"
AB = "fib:python:default-python/fib:python:slow-python"


def test_duet_demo_runs_its_pairs_and_analyses_them(tmp_path):
    r = coldrun("check", config_as_invoker(tmp_path, "duet.toml"))   # as root: the benchmark user is you
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "8 jobs" in r.stdout and "duet: 2 pairs (a/b)" in r.stdout
    cpus = sorted(os.sched_getaffinity(0))[:2]   # the demo names no cpus: the first two coldrun may use
    assert f"on CPUs {cpus[0]} and {cpus[1]}" in r.stdout
    assert "a barrier before every iteration (spin 100 us, timeout 60 s)" in r.stdout
    assert f"  {AB} 4 x 60 iterations" in r.stdout     # a pair key is run, not "skipped"
    state = tmp_path / "state"
    r = coldrun("start", config_as_invoker(tmp_path, "duet.toml"), "--simulate-reboots", "--state-dir", str(state), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    st = coldrun("status", str(state))
    assert st.returncode == 0 and "pairs (a / b):" in st.stdout
    assert "fib:python:default-python / fib:python:slow-python: 4 completed, 0 failed, 0 to run" in st.stdout

    krun = tmp_path / "krun.json.bz2"
    assert coldrun("export", str(state), "--format", "krun", "-o", str(krun)).returncode == 0
    flags = json.loads(bz2.decompress(krun.read_bytes()))["pexec_flags"]
    # each side under its own key: the A/A pair's two sides and the A/B pair's a side share one key
    assert {k: len(v) for k, v in flags.items()} == {"fib:python:default-python": 12, "fib:python:slow-python": 4}

    native = tmp_path / "native.json"
    assert coldrun("export", str(state), "--format", "native", "-o", str(native)).returncode == 0
    bundle = json.loads(native.read_text())
    assert sorted({e["pair_id"].rpartition("#")[0] for e in bundle["executions"]}) == [AA, AB]
    html = tmp_path / "duet.html"
    a = subprocess.run([sys.executable, "-m", "analysis.cli", "duet", str(native), "--seed", "1",
                        "--resamples", "2000", "--html", str(html)], capture_output=True, text=True, cwd=str(REPO))
    assert a.returncode == 0, a.stderr
    assert a.stdout.count("ggms (x/y, ratio)") == 2 and a.stdout.count("99% CI [") >= 6
    assert "pair fib:python:default-python / fib:python:slow-python (x = a, y = b)" in a.stdout
    assert html.read_text().count("<svg") == 4
    j = subprocess.run([sys.executable, "-m", "analysis.cli", "duet", str(native), "--seed", "1",
                        "--resamples", "2000", "--json"], capture_output=True, text=True, cwd=str(REPO))
    doc = json.loads(j.stdout)
    for pair in doc["pairs"]:
        assert pair["executions"] == 4 and pair["ci"][0] <= pair["ggms"] <= pair["ci"][1]
