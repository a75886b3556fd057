"""The demo runs to completion in simulated mode and exports one record per job."""

from __future__ import annotations

import bz2
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coldrun_helpers import REPO, coldrun, config_as_invoker, make_experiment
from root_runs import runs_as_invoker


def test_demo_completes_and_exports(demo_built, tmp_path):
    state = tmp_path / "demo-state"
    demo = config_as_invoker(tmp_path, "demo.toml")    # as root: what start would refuse, check fails too
    r = coldrun("check", demo)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "18 jobs" in r.stdout and "loaded 6 of 6 benchmark(s)" in r.stdout
    # 18 executions: about a minute alone, and minutes beside four TCG guests (a bound, not a speed check)
    r = coldrun("start", demo, "--simulate-reboots", "--state-dir", str(state), timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "experiment finished" in r.stderr

    st = coldrun("status", str(state))
    assert st.returncode == 0
    assert "18/18 done" in st.stdout and "completed 18" in st.stdout

    out = tmp_path / "demo_results.json.bz2"
    r = coldrun("export", str(state), "--format", "krun", "-o", str(out))
    assert r.returncode == 0, r.stderr
    krun = json.loads(bz2.decompress(out.read_bytes()))
    assert set(krun) >= {"wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts",
                         "pexec_flags", "eta_estimates", "audit", "config", "error_flag"}
    assert len(krun["wallclock_times"]) == 6
    for key, per_exec in krun["wallclock_times"].items():
        assert len(per_exec) == 3, key
        assert all(len(times) == 100 for times in per_exec), key
        assert krun["pexec_flags"][key] == ["C", "C", "C"]
    assert krun["audit"]["uname"].startswith("Linux ")
    assert krun["error_flag"] is False

    native_out = tmp_path / "demo.json.bz2"
    r = coldrun("export", str(state), "--format", "native", "-o", str(native_out))
    assert r.returncode == 0, r.stderr
    native = json.loads(bz2.decompress(native_out.read_bytes()))
    assert native["format"] == "coldrun-native" and native["format_version"] == 1
    assert len(native["jobs"]) == 18 and len(native["executions"]) == 18
    seen = {(e["key"], e["pexec"]) for e in native["executions"]}
    assert len(seen) == 18
    for e in native["executions"]:
        assert e["state"] == "completed" and len(e["wallclock_times"]) == 100
        # every per-core list has one entry per iteration
        for k in ("core_cycle_counts", "aperf_counts", "mperf_counts"):
            assert all(len(core) == 100 for core in e[k])
        assert e["environment"]["LANG"] == "C" and e["environment_bytes"] > 0


def test_schema_command_prints_json_schema():
    r = coldrun("schema")
    assert r.returncode == 0, r.stderr
    schema = json.loads(r.stdout)
    assert schema["title"] == "Experiment" and "vms" in schema["required"]
    assert "platform" in schema["properties"]


def test_check_lists_keys_order_and_eta_for_random_order(tmp_path):
    exp = (REPO / "configs" / "demo.toml").read_text().replace('order = "round-robin"',
                                                               'order = "random"\nseed = 5')
    exp = exp.replace('benchmarks_dir = "demo/benchmarks"',
                      f'benchmarks_dir = "{REPO / "configs" / "demo" / "benchmarks"}"')
    p = tmp_path / "random.toml"
    p.write_text(runs_as_invoker(exp))
    r = coldrun("check", str(p), "--all")
    if "missing: run make" in r.stdout:
        import pytest
        pytest.skip("demo C benchmarks not built (make -C configs/demo)")
    assert r.returncode == 0, r.stderr
    assert "order: random, seed 5" in r.stdout and "ETA: at least" in r.stdout
    jobs = [ln.split()[2] for ln in r.stdout.splitlines() if ln.startswith("  ") and " O " in ln]
    assert len(jobs) == 18 and jobs != sorted(jobs)


def test_skipped_jobs_are_not_run_and_exported_as_skipped_slots(tmp_path):
    p = make_experiment(tmp_path, {"a": "ok", "b": "ok", "c": "ok"}, executions=2, extra='skip = ["b:*:*"]')
    state = tmp_path / "s"
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state))
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(os.listdir(state / "executions")) == 4          # b never ran
    out = tmp_path / "n.json"
    assert coldrun("export", str(state), "--format", "native", "-o", str(out)).returncode == 0
    bundle = json.loads(out.read_text())
    assert [j["state"] for j in bundle["jobs"]].count("skipped") == 2
    ran = [(e["key"], e["pexec"]) for e in bundle["executions"] if e["state"] == "completed"]
    assert sorted(ran) == [("a:fake:fake", 0), ("a:fake:fake", 1), ("c:fake:fake", 0), ("c:fake:fake", 1)]
    assert all(len(e["wallclock_times"]) == (5 if e["state"] == "completed" else 0) for e in bundle["executions"])
    assert [e["state"] for e in bundle["executions"] if e["key"] == "b:fake:fake"] == ["skipped", "skipped"]
    kout = tmp_path / "k.json.bz2"
    assert coldrun("export", str(state), "--format", "krun", "-o", str(kout)).returncode == 0
    krun = json.loads(bz2.decompress(kout.read_bytes()))
    assert krun["pexec_flags"] == {"a:fake:fake": ["C", "C"], "b:fake:fake": ["S", "S"], "c:fake:fake": ["C", "C"]}
    assert krun["wallclock_times"]["b:fake:fake"] == [[], []]


def test_simulated_reboots_reexecute_the_running_coldrun_not_a_package_in_the_cwd(tmp_path):
    """A `supervisor/` package in the cwd (say, a source checkout) is never what a re-execution runs."""
    entry = Path(sys.executable).parent / "coldrun"       # the installed entry point: the cwd is not on its path
    if not entry.is_file():
        pytest.skip(f"{entry} not installed (scripts/setup --for-tests installs it)")
    decoy = tmp_path / "cwd"
    (decoy / "supervisor").mkdir(parents=True)
    imported = tmp_path / "decoy-imported"
    (decoy / "supervisor" / "__init__.py").write_text(f"open({str(imported)!r}, 'w').close()\n")
    (decoy / "supervisor" / "__main__.py").write_text("raise SystemExit(97)\n")
    p = make_experiment(tmp_path, {"a": "ok", "b": "ok"}, executions=2)
    state = tmp_path / "s"
    r = subprocess.run([str(entry), "start", str(p), "--simulate-reboots", "--state-dir", str(state)],
                       capture_output=True, text=True, cwd=decoy, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert not imported.exists()
    assert "experiment finished" in r.stderr and r.stderr.count("re-executing instead") == 5   # after start and after each job


def test_simulated_run_and_resume_exit_non_zero_when_executions_failed(tmp_path):
    p = make_experiment(tmp_path, {"a": "ok", "b": "fail"})
    state = tmp_path / "s"
    r = coldrun("start", str(p), "--simulate-reboots", "--state-dir", str(state))
    assert r.returncode == 6, r.stderr[-2000:]          # finished, with errored executions
    assert "experiment finished" in r.stderr
    assert coldrun("resume", str(state)).returncode == 6
    assert coldrun("status", str(state)).returncode == 6
