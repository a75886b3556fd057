"""Failed process executions are rows that say so, counted apart (issue 10 §4).

Hand-made inputs in both export formats: Krun results (a failed slot has
empty lists, its pexec_flags letter and error_flag true), the same as
coldrun's Krun export writes them (also each slot's state: crashed and
skipped are no letters of Krun's), and the native bundle (every slot's state
in the job list, records for completed / errored / timed out executions).
The last two must read alike (contracts.state_view).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from analysis.cli import main
from real_parts import missing_real_part

UNAME = "Linux rig1.example.org 6.1.0 #1 SMP x86_64"
ITERATIONS = 80


def _flat(rng, level=1.0):
    return [float(level + rng.normal(0, 0.001)) for _ in range(ITERATIONS)]


def _warm(rng):
    return [float((2.0 if i < 10 else 1.0) + rng.normal(0, 0.001)) for i in range(ITERATIONS)]


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def krun_results(rng) -> dict:
    """fib: 4 slots, #1 errored, #3 timed out; nbody: #0 errored (must not hide
    the rest); spec: every slot errored."""
    return {
        "wallclock_times": {
            "fib:PyPy:default-python": [_warm(rng), [], _warm(rng), []],
            "nbody:PyPy:default-python": [[], _flat(rng), _flat(rng)],
            "spec:PyPy:default-python": [[], []],
        },
        "pexec_flags": {
            "fib:PyPy:default-python": ["C", "E", "C", "T"],
            "nbody:PyPy:default-python": ["E", "C", "C"],
            "spec:PyPy:default-python": ["E", "E"],
        },
        "error_flag": True,
        "audit": {"uname": UNAME},
        "config": "",
    }


def native_bundle(rng) -> dict:
    """The same slots as a native bundle; spec's slots crashed and were skipped
    (no records), fib #3 timed out."""
    states = {
        "fib:PyPy:default-python": ["completed", "errored", "completed", "timed_out"],
        "nbody:PyPy:default-python": ["errored", "completed", "completed"],
        "spec:PyPy:default-python": ["crashed", "skipped"],
    }
    jobs, executions = [], []
    for key, slots in states.items():
        for pexec, state in enumerate(slots):
            jobs.append({"index": len(jobs), "key": key, "pexec": pexec, "state": state, "attempts": 1})
            if state == "completed":
                times = _warm(rng) if key.startswith("fib") else _flat(rng)
                executions.append({"key": key, "pexec": pexec, "state": state, "outcome": True,
                                   "wallclock_times": times})
            elif state in ("errored", "timed_out"):
                executions.append({"key": key, "pexec": pexec, "state": state, "outcome": False,
                                   "wallclock_times": []})
    return {"format": "coldrun-native", "format_version": 1, "jobs": jobs, "executions": executions,
            "audit": {"uname": UNAME}}


def coldrun_krun_results(rng) -> dict:
    """The native bundle's slots as coldrun's Krun export writes them: Krun's letters and the states."""
    results = krun_results(rng)
    results["pexec_flags"]["spec:PyPy:default-python"] = ["E", "S"]
    results["execution_states"] = {
        "fib:PyPy:default-python": ["completed", "errored", "completed", "timed_out"],
        "nbody:PyPy:default-python": ["errored", "completed", "completed"],
        "spec:PyPy:default-python": ["crashed", "skipped"],
    }
    return results


EXPECTED_STATES = {
    "krun": {
        "fib:PyPy:default-python": ["completed", "errored", "completed", "timed_out"],
        "nbody:PyPy:default-python": ["errored", "completed", "completed"],
        "spec:PyPy:default-python": ["errored", "errored"],
    },
    "native": {
        "fib:PyPy:default-python": ["completed", "errored", "completed", "timed_out"],
        "nbody:PyPy:default-python": ["errored", "completed", "completed"],
        "spec:PyPy:default-python": ["crashed", "skipped"],
    },
}
EXPECTED_STATES["coldrun-krun"] = EXPECTED_STATES["native"]
MAKE = {"krun": krun_results, "coldrun-krun": coldrun_krun_results, "native": native_bundle}


@pytest.fixture(params=list(MAKE))
def results_file(request, tmp_path, rng):
    doc = MAKE[request.param](rng)
    path = tmp_path / f"{request.param}.json"
    path.write_text(json.dumps(doc))
    return request.param, path


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_annotate_keeps_every_slot_with_its_state(results_file, tmp_path, capsys):
    fmt, path = results_file
    out = tmp_path / "ann.json"
    code, _, err = _run(["annotate", str(path), "-o", str(out), "--jobs", "1"], capsys)
    assert code == 0, err
    ann = json.loads(out.read_text())
    assert ann["execution_states"] == EXPECTED_STATES[fmt]
    assert ann["classifications"]["fib:PyPy:default-python"] == ["warmup", None, "warmup", None]
    assert ann["classifications"]["nbody:PyPy:default-python"] == [None, "flat", "flat"]
    assert ann["classifications"]["spec:PyPy:default-python"] == [None, None]
    assert "fib:PyPy:default-python process execution #2: errored (no data); not classified" in err
    assert "fib:PyPy:default-python process execution #4: timed out (no data); not classified" in err


def test_summary_lists_failed_executions_apart(results_file, tmp_path, capsys):
    fmt, path = results_file
    out = tmp_path / "s.json"
    code, _, err = _run(["summary", str(path), "-o", str(out), "--seed", "1", "--resamples", "200",
                         "--jobs", "1"], capsys)
    assert code == 0, err
    summary = json.loads(out.read_text())
    pypy = summary["machines"]["rig1"]["PyPy"]
    # Failures are never a classification: only the completed executions count.
    assert pypy["fib"]["detailed_classification"]["warmup"] == 2
    assert sum(pypy["fib"]["detailed_classification"].values()) == 2
    # A failed first execution no longer hides the benchmark's good ones.
    assert pypy["nbody"]["classification"] == "flat"
    assert sum(pypy["nbody"]["detailed_classification"].values()) == 2
    assert "spec" not in pypy  # nothing to classify ...
    failed = summary["failed_process_executions"]["rig1"]["PyPy"]
    states = EXPECTED_STATES[fmt]
    for bench in ("fib", "nbody", "spec"):  # ... but every failure is listed
        want = [{"index": i, "state": s} for i, s in enumerate(states[f"{bench}:PyPy:default-python"])
                if s != "completed"]
        assert failed[bench] == want


@pytest.mark.parametrize("table_format", ["text", "html", "latex"])
def test_tables_show_failed_rows_and_counts(results_file, table_format, tmp_path, capsys):
    fmt, path = results_file
    out = tmp_path / f"t.{table_format}"
    code, _, err = _run(["table", str(path), "--format", table_format, "--quality", "low", "--seed", "1",
                         "--no-plots", "-o", str(out)], capsys)
    assert code == 0, err
    text = out.read_text()
    assert "5 process execution(s) without data, not classified" in text
    assert "errored (no data)" in text and "timed out (no data)" in text
    if fmt != "krun":
        assert "crashed (no data)" in text and "skipped (no data)" in text
    if table_format == "text":
        lines = text.splitlines()
        fib = next(ln for ln in lines if ln.startswith("fib ") and "warmup" in ln)
        assert "1 errored (no data), 1 timed out (no data)" in fib  # counted next to the class
        cells = [re.split(r"\s{2,}", ln) for ln in lines]
        no_data = [c for c in cells if len(c) == 4 and c[3].endswith("(no data)")]
        assert ["fib", "PyPy", "#2", "errored (no data)"] in no_data
        assert ["fib", "PyPy", "#4", "timed out (no data)"] in no_data
        assert ["nbody", "PyPy", "#1", "errored (no data)"] in no_data
        assert [c[:3] for c in no_data if c[0] == "spec"] == [["spec", "PyPy", "#1"], ["spec", "PyPy", "#2"]]
        assert len(no_data) == 5
    if table_format == "html":
        assert text.count('<tr class="no-data" id="exec-') == 5


def test_coldruns_krun_export_and_its_native_bundle_give_one_table(tmp_path, capsys):
    tables = []
    for name, make in (("krun", coldrun_krun_results), ("native", native_bundle)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(make(np.random.default_rng(5))))    # the same times in both
        # Without the Plan section: it says what each input records of the reboots (only the native bundle does).
        code, out, err = _run(["table", str(path), "--quality", "low", "--seed", "1", "--plan-target", "none"], capsys)
        assert code == 0, err
        tables.append(out)
    assert tables[0] == tables[1] and "skipped (no data)" in tables[0]


def test_summary_of_a_failure_only_file_still_renders(tmp_path, capsys):
    doc = {"wallclock_times": {"spec:PyPy:default-python": [[], []]},
           "pexec_flags": {"spec:PyPy:default-python": ["E", "T"]}, "audit": {"uname": UNAME}}
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(doc))
    code, out, err = _run(["table", str(path)], capsys)
    assert code == 0, err
    assert "Machine: rig1" in out
    assert "2 process execution(s) without data, not classified: 1 errored (no data), 1 timed out (no data)" in out


def test_without_recorded_states_warmup_stats_skip_rule_holds(tmp_path, rng, capsys):
    """A plain Krun file (no pexec_flags): an empty first execution is
    warmup_stats' crashed benchmark, still listed as a row."""
    doc = {"wallclock_times": {"nbody:PyPy:default-python": [[], _flat(rng), _flat(rng)]},
           "audit": {"uname": UNAME}}
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "s.json"
    code, _, err = _run(["summary", str(path), "-o", str(out), "--resamples", "100", "--seed", "1"], capsys)
    assert code == 0 and "benchmark crashed" in err
    summary = json.loads(out.read_text())
    assert "nbody" not in summary["machines"]["rig1"].get("PyPy", {})
    assert summary["failed_process_executions"]["rig1"]["PyPy"]["nbody"] == [{"index": 0, "state": "empty"}]


def test_clean_summary_has_no_failed_key(tmp_path, rng, capsys):
    doc = {"wallclock_times": {"nbody:PyPy:default-python": [_flat(rng), _flat(rng)]}, "audit": {"uname": UNAME}}
    path = tmp_path / "clean.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "s.json"
    assert main(["summary", str(path), "-o", str(out), "--resamples", "100", "--seed", "1"]) == 0
    # warmup_stats' keys plus only the bootstrap record (the seed) and the equivalence rule, no failures key.
    written = json.loads(out.read_text())
    assert set(written) == {"machines", "warmup_format_version", "bootstrap", "classifier"}
    assert written["classifier"] == {"delta": "2%"}


def test_rejected_times_are_a_failed_row(tmp_path, rng, capsys):
    bad = _flat(rng)
    bad[4] = -1.0
    doc = {"wallclock_times": {"nbody:PyPy:default-python": [_flat(rng), bad]}, "audit": {"uname": UNAME}}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    code, out, err = _run(["table", str(path), "--quality", "low", "--seed", "1"], capsys)
    assert code == 0, err
    assert "iteration 4 has an invalid time" in err
    assert "invalid data (dropped)" in out


def test_latex_with_failed_rows_compiles(results_file, tmp_path, capsys):
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        missing_real_part("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    _, path = results_file
    tex = tmp_path / "table.tex"
    code, _, err = _run(["table", str(path), "--format", "latex", "--quality", "low", "--seed", "1",
                         "-o", str(tex)], capsys)
    assert code == 0, err
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "table.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (tmp_path / "table.pdf").stat().st_size > 1000
