"""[stop] end to end: `coldrun start --simulate-reboots` with the real analysis (analysis.pilot), re-executing per boot.

The fake runner's "flat" executions agree to 1e-9, so Pilot's rule stops them at
min_executions (converged); "noisy" executions disagree by up to a factor of 2,
so they run to max_executions (not converged); "wps" executions take
2 ms + param / 1e6 s.  The reduced demo (configs/adaptive.toml on the C
benchmarks) measures real timings on a shared machine, so it checks that every
key stopped for a reason its numbers bear out, not which reason.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from coldrun_helpers import REPO, coldrun, make_experiment, native_export, records_match_schedule
from root_runs import runs_as_invoker


def test_keys_converge_or_stop_at_max_with_the_real_analysis(tmp_path):
    exp = make_experiment(tmp_path, {"steady": "flat", "wild": "noisy"}, executions=None, iterations=40,
                          extra="[stop]\nci_percent = 0.01\nmin_executions = 3\nmax_executions = 6\n"
                                "adapt_iterations = true\nmax_iterations = 120\n")
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=600)
    assert r.returncode == 9, r.stderr[-3000:]      # all completed, but wild did not converge
    decisions = json.loads((state / "run_length.json").read_text())
    steady, wild = decisions["steady:fake:fake"], decisions["wild:fake:fake"]
    assert steady["converged"] and steady["executions"] == 3 and steady["ci_width"] <= steady["target_width"]
    assert wild["done"] and not wild["converged"] and wild["executions"] == 6
    assert wild["ci_width"] > wild["target_width"]
    bundle = native_export(state, tmp_path)
    records_match_schedule(bundle)
    counts = {k: sum(1 for j in bundle["jobs"] if j["key"] == k) for k in decisions}
    assert counts == {"steady:fake:fake": 3, "wild:fake:fake": 6}
    # Pilot's next-round work amount: the wild key's later executions ran more iterations, at most 120
    wild_iterations = [j["iterations"] for j in bundle["jobs"] if j["key"] == "wild:fake:fake"]
    assert wild_iterations[:3] == [40, 40, 40] and max(wild_iterations) > 40 and max(wild_iterations) <= 120
    status = coldrun("status", str(state))
    assert status.returncode == 9, status.stderr
    assert "steady:fake:fake: converged after 3 executions" in status.stdout
    assert "wild:fake:fake: NOT CONVERGED: stopped at max_executions (6 executions)" in status.stdout
    # --json: the same standing and exit status, each key's decision as the real analysis made it
    as_json = coldrun("status", str(state), "--json")
    assert as_json.returncode == 9, as_json.stderr
    keys = {k["key"]: k for k in json.loads(as_json.stdout)["run_length"]["keys"]}
    assert (keys["steady:fake:fake"]["converged"], keys["steady:fake:fake"]["executions"]) == (True, 3)
    assert (keys["wild:fake:fake"]["converged"], keys["wild:fake:fake"]["done"]) == (False, True)
    assert keys["wild:fake:fake"]["ci_width"] == wild["ci_width"] > keys["wild:fake:fake"]["target_width"]
    log = (state / "log").read_text()
    assert "key stopped at max_executions without reaching its target" in log


def test_wps_mode_chooses_params_and_fits_the_rate(tmp_path):
    exp = make_experiment(tmp_path, {"w": "wps"}, executions=None, iterations=1,
                          extra="[stop]\nci_percent = 0.05\nmin_executions = 5\nmax_executions = 10\n"
                                "[stop.wps]\nmin_param = 1000\nmax_param = 100000\nsession = \"20s\"\n")
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=600)
    assert r.returncode in (0, 9), r.stderr[-3000:]
    bundle = native_export(state, tmp_path)
    records_match_schedule(bundle)
    params = [j["param"] for j in bundle["jobs"]]
    assert params[0] == 1000 and len(set(params)) == len(params) and all(1000 <= p <= 100000 for p in params)
    d = json.loads((state / "run_length.json").read_text())["w:fake:fake"]
    assert d["done"] and d["executions"] == len(params)
    assert r.returncode == (0 if d["converged"] else 9)
    if d["converged"]:       # the fit of exact data: v is the runner's 1e6 param units per second
        assert abs(d["mean"] - 1e6) / 1e6 < 1e-3 and d["ci_width"] <= d["target_width"]
        assert len(params) >= 5
    else:
        assert len(params) == 10, d
    status = coldrun("status", str(state)).stdout
    assert re.search(r"w:fake:fake: (converged|NOT CONVERGED).*param/s", status), status


def test_the_adaptive_demo_on_its_c_benchmarks(tmp_path):
    """configs/adaptive.toml, reduced: the C VM only, at most 4 executions of at most 200 iterations."""
    shutil.copytree(REPO / "configs" / "demo", tmp_path / "demo", symlinks=True)
    text = (REPO / "configs" / "adaptive.toml").read_text()
    text = re.sub(r"(?ms)^\[vms\.python\].*?(?=^\[vms\.c\])", "", text)
    text = text.replace("max_executions = 10", "max_executions = 4").replace("max_iterations = 400",
                                                                            "max_iterations = 200")
    exp = tmp_path / "adaptive.toml"
    exp.write_text(runs_as_invoker(text))
    if not (tmp_path / "demo" / "benchmarks" / "fib" / "c" / "bench.so").exists():
        pytest.fail("configs/demo's C benchmarks are not built: run make -C configs/demo (scripts/setup does)")
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=900)
    assert r.returncode in (0, 9), r.stderr[-3000:]
    decisions = json.loads((state / "run_length.json").read_text())
    assert r.returncode == (0 if all(d["converged"] for d in decisions.values()) else 9)
    assert sorted(decisions) == ["fib:c:default-c", "sieve:c:default-c", "spectralnorm:c:default-c"]
    bundle = native_export(state, tmp_path)
    records_match_schedule(bundle)
    status = coldrun("status", str(state)).stdout
    for key, d in decisions.items():
        runs = sum(1 for j in bundle["jobs"] if j["key"] == key)
        assert d["done"] and d["executions"] == runs and 3 <= runs <= 4
        if d["converged"]:
            assert d["ci_width"] <= d["target_width"]
            assert f"{key}: converged after {runs} executions" in status
        else:
            assert runs == 4
            assert f"{key}: NOT CONVERGED: stopped at max_executions (4 executions)" in status
