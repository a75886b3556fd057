"""`coldrun-analyze startup` and `table` on start-up results: Krun's own startup files (every key, no
marker: --all-keys) and coldrun's export (``startup_keys``), alone or beside warmup keys."""

from __future__ import annotations

import json

import pytest

from analysis import bootstrap
from analysis.cli import main
from analysis.startup import summarise

UNAME = "Linux bencher5 4.9.0 #1 SMP x86_64"


def startup_file(path, *, marked: bool, warmup: bool = False) -> str:
    t0 = 1000.0
    times = {"binarytrees:C:default-c": [[t0, t0 + 0.001], [t0 + 5, t0 + 5.0012], []],
             "binarytrees:PyPy:default-python": [[t0, t0 + 0.05], [t0, t0 + 0.06]]}
    doc = {"audit": {"uname": UNAME}, "config": "", "error_flag": False,
           "wallclock_times": dict(times), "core_cycle_counts": {k: [[] for _ in v] for k, v in times.items()},
           "aperf_counts": {k: [[] for _ in v] for k, v in times.items()},
           "mperf_counts": {k: [[] for _ in v] for k, v in times.items()},
           "pexec_flags": {k: ["C" if e else "E" for e in v] for k, v in times.items()},
           "eta_estimates": {k: [1.0] * len(v) for k, v in times.items()}}
    if marked:
        doc["startup_keys"] = sorted(times)
    if warmup:
        steady = [[0.01 + (i % 3) * 1e-5 for i in range(40)] for _ in range(3)]
        for name, value in (("wallclock_times", steady), ("core_cycle_counts", [[]] * 3),
                            ("aperf_counts", [[]] * 3), ("mperf_counts", [[]] * 3), ("pexec_flags", ["C"] * 3),
                            ("eta_estimates", [1.0] * 3)):
            doc[name]["nbody:PyPy:default-python"] = value
    (path).write_text(json.dumps(doc))
    return str(path)


def test_startup_times_are_the_readings_difference_bootstrapped_as_the_paper_did(tmp_path):
    doc = json.loads(open(startup_file(tmp_path / "r.json", marked=True)).read())
    rows = {r.vm: r for r in summarise(doc, "bencher5")}
    c = rows["C"]
    assert (c.executions, c.skipped) == (2, 1)
    assert (c.minimum, c.maximum) == pytest.approx((0.001, 0.0012), abs=1e-9)
    # table_startup_results: bootstrap_runner(json.dumps([[data]])): one execution, one segment.
    expected = bootstrap.bootstrap_steady_perf([[[1000.001 - 1000.0, 1005.0012 - 1005.0]]], key=c.key)
    assert (c.mean, c.ci) == (expected.median, expected.ci)


def test_krun_s_own_startup_file_needs_all_keys(tmp_path, capsys):
    path = startup_file(tmp_path / "krun.json", marked=False)
    assert main(["startup", path]) == 0
    assert capsys.readouterr().out == "No start-up keys in these results.\n"
    assert main(["startup", path, "--all-keys", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["machine"], r["vm"], r["executions"]) for r in rows] == [("bencher5", "C", 2), ("bencher5", "PyPy", 2)]


def test_table_reports_startup_keys_beside_warmup_keys(tmp_path, capsys):
    # Before: "No benchmarks in this summary." (start-up keys have under 4 iterations: unclassified).
    assert main(["table", startup_file(tmp_path / "s.json", marked=True)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Start-up times\n") and "No benchmarks" not in out
    assert main(["table", startup_file(tmp_path / "m.json", marked=True, warmup=True), "--quality", "low"]) == 0
    out = capsys.readouterr().out
    warmup, startup = out.split("Start-up times\n")
    assert "nbody" in warmup and "binarytrees" not in warmup
    assert "bencher5  binarytrees  C" in startup and "2 (1 without data)" in startup
