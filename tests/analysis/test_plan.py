"""``coldrun-analyze plan``: Kalibera & Jones' estimates and allocation (analysis.plan), and the command on a
small native export made here and on Krun results."""

from __future__ import annotations

import bz2
import json
import math

import numpy as np
import pytest

from analysis import plan
from analysis.cli import main

KEYS = ("fib:c:default-c", "nbody:python:default-python")
GAP = 100.0   # seconds between one execution's end and the next one's start (reboot and waits)


def test_kj_estimates_on_hand_made_data():
    # Each execution's variance: ((-1)^2 + 1^2) / 1 = 2, so S1^2 = T1^2 = 2. Means 2, 6, 3 (grand 11/3):
    # S2^2 = ((5/3)^2 + (7/3)^2 + (2/3)^2) / 2 = (78/9) / 2 = 13/3; T2^2 = S2^2 - T1^2/n1 = 13/3 - 2/2 = 10/3.
    c = plan.variance_components([[1, 3], [5, 7], [2, 4]], batch=1)
    assert (c.executions, c.batch) == (3, 1)
    assert c.t1_sq == pytest.approx(2) and c.plain_s1_sq == pytest.approx(2)
    assert c.s2_sq == pytest.approx(13 / 3) and c.t2_sq == pytest.approx(10 / 3)
    assert c.mean == pytest.approx(11 / 3) and c.inverse_n1 == pytest.approx(1 / 2)


def test_batch_means_see_autocorrelation():
    # 16 iterations each: batch = floor(sqrt(16)) = 4; batch means 1, 3, 1, 3 (+10 in the second execution):
    # their variance 4/3, times the batch size: T1^2 = 16/3. The plain variance: 16 x 1^2 / 15 = 16/15.
    one = [1.0] * 4 + [3.0] * 4 + [1.0] * 4 + [3.0] * 4
    c = plan.variance_components([one, [v + 10 for v in one]])
    assert c.batch == 4
    assert c.t1_sq == pytest.approx(16 / 3) and c.plain_s1_sq == pytest.approx(16 / 15)
    # Means 2 and 12: S2^2 = 50; T2^2 = 50 - (16/3) / 16.
    assert c.t2_sq == pytest.approx(50 - 1 / 3)


def test_cheapest_allocation_checked_by_hand():
    # c1 = 1, c2 = 210, T1^2 = 8, T2^2 = 1: n1* = ceil(sqrt(210 x 8)) = ceil(40.99) = 41.
    assert plan.cheapest_iterations(1.0, 210.0, 8.0, 1.0) == 41
    # Per execution 1 + 8/41 = 1.19512; 95%, half-width 1: n2 = 7 gives t(6) 2.447 x sqrt(1.19512/7) = 1.011,
    # n2 = 8 gives t(7) 2.365 x sqrt(1.19512/8) = 0.914 <= 1.
    assert plan.executions_needed(8.0, 1.0, 41, 1.0, 0.95) == 8
    kj = plan.allocate(8.0, 1.0, 1.0, 210.0, 1.0, 0.95, trim=False)
    assert (kj.n1, kj.n2) == (41, 8) and kj.half_width == pytest.approx(0.914, abs=1e-3)
    # Trimmed at n2 = 8: (1 / 2.3646)^2 x 8 - 1 = 0.43075 left for T1^2/n1: n1 >= 8 / 0.43075 = 18.57 -> 19
    # (half-width 0.9966; 18 gives 1.0048).
    trimmed = plan.allocate(8.0, 1.0, 1.0, 210.0, 1.0, 0.95)
    assert (trimmed.n1, trimmed.n2) == (19, 8) and trimmed.half_width == pytest.approx(0.9966, abs=1e-4)


def test_between_execution_component_not_detectable():
    # Means 2.0, 2.1, 1.9 spread less than the iterations' variance predicts: T2^2 < 0.
    c = plan.variance_components([[1, 3], [1.1, 3.1], [0.9, 2.9]], batch=1)
    assert c.t2_sq < 0
    upper = plan.t2_upper(c, 0.99)
    # The chi-square bound on the variance of execution means: 2 x 0.01 / chi2(0.005, 2) = 0.02 / 0.010025.
    assert upper == pytest.approx(0.02 / 0.0100250836 - 1.0, rel=1e-6) and upper > 0
    a = plan.allocate(c.t1_sq, upper, 1.0, 100.0, 0.1, 0.99)
    assert a.n2 is not None and a.half_width <= 0.1
    # No between variance at all: the cheapest (n2, n1), not an unbounded n1.
    none = plan.allocate(2.0, 0.0, 1.0, 100.0, 0.1, 0.99)
    assert none.n2 is not None and none.n1 < plan.MAX_ITERATIONS and none.half_width <= 0.1


def test_plan_line_and_times():
    assert plan.plan_line(plan.Target(0.01, True), 14, 2000, 7800) == \
        "±1% needs about 14 executions × 2000 iterations, ~2 h 10 min"
    assert plan.human_time(40) == "~40 s" and plan.human_time(3 * 86400 + 4 * 3600) == "~3 d 4 h"
    fifty = plan.parse_target("50us")
    assert not fifty.relative and fifty.value == pytest.approx(50e-6) and fifty.label() == "±50.0 µs"
    assert plan.parse_target("0.2ms").value == pytest.approx(2e-4)
    assert plan.parse_target("0.001") == plan.Target(0.001, False)


def _execution(rng, key, pexec, start, offset):
    times = [float(v) for v in 0.01 + offset + rng.normal(0, 0.0005, 100)]
    run = sum(times) + 0.5
    bench, vm, variant = key.split(":")
    return {"key": key, "pexec": pexec, "state": "completed", "boot": pexec + 1, "bench": bench, "vm": vm,
            "variant": variant, "wallclock_times": times, "core_cycle_counts": [], "aperf_counts": [],
            "mperf_counts": [], "flags": [], "duration_seconds": run, "started_at": start,
            "ended_at": start + run}


@pytest.fixture
def native_export(tmp_path):
    """Two keys x 6 executions, 100 steady iterations each, GAP seconds between executions."""
    rng = np.random.default_rng(39)
    executions, clock = [], 1.8e9
    for pexec in range(6):
        for key in KEYS:
            executions.append(_execution(rng, key, pexec, clock, float(rng.normal(0, 0.0002))))
            clock = executions[-1]["ended_at"] + GAP
    bundle = {"format": "coldrun-native", "format_version": 1, "audit": {"uname": "Linux planbox 6.1.0"},
              "jobs": [{"index": i, "key": e["key"], "pexec": e["pexec"], "state": "completed", "attempts": 1}
                       for i, e in enumerate(executions)],
              "executions": executions}
    path = tmp_path / "native.json.bz2"
    path.write_bytes(bz2.compress(json.dumps(bundle).encode()))
    return path


def test_cli_plans_each_key_of_a_native_export(native_export, capsys):
    assert main(["plan", str(native_export), "--target", "0.5%", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "half-width ±0.5% of the mean" in out and "99% confidence" in out
    assert "median gap between executions 100 s" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("key"))
    assert header.split()[:5] == ["key", "executions", "iterations", "steady", "time"]
    for key in KEYS:
        row = next(line for line in out.splitlines() if line.strip().startswith(key))
        executions, iterations, steady = (int(v) for v in row.split()[1:4])
        assert executions >= 2 and iterations >= steady >= 1 and "~" in row
        assert "only 6 executions" in row    # under 10: the plan at T2^2's upper end too


def test_cli_json_and_krun_input(native_export, tmp_path, capsys):
    assert main(["plan", str(native_export), "--target", "1%", "--json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["target_is"] == "half-width" and doc["execution_overhead"]["source"] == "measured"
    for key in KEYS:
        k = doc["keys"][key]
        assert k["cost"]["reboot_and_waits"] == pytest.approx(GAP)
        assert k["cost"]["start_up_and_exit"] == pytest.approx(0.5)
        p = k["plan"]
        assert p["half_width"] <= k["target_seconds"]
        assert p["seconds"] == pytest.approx(p["executions"] * (k["cost"]["execution"] + p["steady_iterations"]
                                                                * k["cost"]["iteration"]))
        assert k["line"].startswith(f"±1% needs about {p['executions']} executions × {p['iterations']} iterations")
        assert k["upper_plan"]["executions"] >= p["executions"]
    # Krun results record no reboots: assumed, and said; --execution-overhead supplies it.
    from analysis.inputs import read_results

    krun = tmp_path / "krun.json"
    krun.write_text(json.dumps(read_results(native_export)))
    assert main(["plan", str(krun), "--target", "1%", "--no-progress"]) == 0
    assert "NOT RECORDED" in capsys.readouterr().out
    assert main(["plan", str(krun), "--target", "1%", "--execution-overhead", "2min", "--json",
                 "--no-progress"]) == 0
    given = json.loads(capsys.readouterr().out)
    assert given["execution_overhead"]["source"] == "given"
    assert all(math.isclose(k["cost"]["overhead"], 120.0) for k in given["keys"].values())


@pytest.mark.parametrize("target", ["fast", "0%", "150%", "-1ms", "3 parsecs"])
def test_bad_target_is_one_line_and_exit_2(native_export, capsys, target):
    assert main(["plan", str(native_export), f"--target={target}", "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("coldrun-analyze: error: --target:"), err
