"""Reading Krun, CSV and coldrun-native results; bad input gives one clear line."""

from __future__ import annotations

import bz2
import json

import numpy as np
import pytest

from analysis.cli import main
from analysis.errors import AnalysisError
from analysis.inputs import machine_from_uname, read_results
from analysis.pipeline import load_results


def _series(rng, n=60, level=1.0, warm=0):
    return [float(level * (3.0 if i < warm else 1.0) + rng.normal(0, 0.001)) for i in range(n)]


def _krun(rng, uname="Linux bencher3.example.org 6.1.0 #1 SMP x86_64") -> dict:
    return {
        "wallclock_times": {
            "fib:PyPy:default-python": [_series(rng, warm=10), _series(rng), _series(rng, warm=8)],
            "nbody:CPython:default-python": [_series(rng, level=2.0) for _ in range(3)],
        },
        "core_cycle_counts": {},
        "audit": {"uname": uname},
        "config": "",
    }


def _collect():
    notes: list[str] = []
    return notes, notes.append


@pytest.fixture
def rng():
    return np.random.default_rng(17)


def test_krun_plain_and_bz2_read_the_same(tmp_path, rng):
    data = _krun(rng)
    plain = tmp_path / "r.json"
    plain.write_text(json.dumps(data))
    packed = tmp_path / "r.json.bz2"
    with bz2.open(packed, "wt") as fh:
        json.dump(data, fh)
    a = read_results(plain)
    b = read_results(packed)
    assert a["wallclock_times"] == b["wallclock_times"] == data["wallclock_times"]
    assert machine_from_uname(a["audit"]["uname"]) == "bencher3"


def test_csv_keys_from_command_line(tmp_path):
    csv = tmp_path / "results.csv"
    csv.write_text(
        "pexec,bench,0,1,2,3\n"
        "0,fib,1.0,1.1,1.0,1.0\n"
        "1,fib,crash\n"
        "0,nbody,2.0,2.0,2.1,2.0\n"
    )
    notes, warn = _collect()
    r = read_results(csv, vm="PyPy", language="python", uname="Linux box 6.1", warn=warn)
    assert r["wallclock_times"] == {
        "fib:PyPy:default-python": [[1.0, 1.1, 1.0, 1.0], []],
        "nbody:PyPy:default-python": [[2.0, 2.0, 2.1, 2.0]],
    }
    assert machine_from_uname(r["audit"]["uname"]) == "box"
    with pytest.raises(AnalysisError, match="--vm and --language"):
        read_results(csv)


def test_native_bundle_converts_to_krun_shape(tmp_path):
    bundle = {
        "format": "coldrun-native",
        "format_version": 1,
        "experiment": {"name": "e", "sha256": "0" * 64, "text": "[x]"},
        "audit": {"uname": "Linux nativebox 6.1.0"},
        "jobs": [{"index": i, "key": "b:vm:v", "pexec": i, "state": "completed", "attempts": 1} for i in range(3)],
        "executions": [
            {"key": "b:vm:v", "pexec": 2, "state": "completed", "boot": 3, "wallclock_times": [3.0, 3.0],
             "core_cycle_counts": [[1, 2]], "aperf_counts": [[1, 1]], "mperf_counts": [[1, 1]], "flags": []},
            {"key": "b:vm:v", "pexec": 0, "state": "completed", "boot": 1, "wallclock_times": [1.0, 1.0],
             "core_cycle_counts": [], "aperf_counts": [], "mperf_counts": [], "flags": []},
            {"key": "b:vm:v", "pexec": 1, "state": "timed_out", "boot": 2, "wallclock_times": [9.0],
             "core_cycle_counts": [], "aperf_counts": [], "mperf_counts": [], "flags": []},
        ],
    }
    path = tmp_path / "export.json.bz2"
    with bz2.open(path, "wt") as fh:
        json.dump(bundle, fh)
    r = read_results(path)
    assert r["wallclock_times"] == {"b:vm:v": [[1.0, 1.0], [], [3.0, 3.0]]}
    assert r["pexec_flags"] == {"b:vm:v": ["C", "T", "C"]}
    assert r["core_cycle_counts"]["b:vm:v"][2] == [[1, 2]]
    assert r["config"] == "[x]"


def test_two_machines_at_once(tmp_path, rng):
    paths = []
    for host in ("alpha", "beta.lab.example"):
        p = tmp_path / f"{host}.json"
        p.write_text(json.dumps(_krun(rng, uname=f"Linux {host} 6.1")))
        paths.append(p)
    assert sorted(load_results(paths)) == ["alpha", "beta"]
    with pytest.raises(AnalysisError, match="already comes from"):
        load_results([paths[0], paths[0]])


# --- bad input: each case gives one line naming the file, the rest still analysed ---


def _run(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.strip()]


def test_truncated_bz2_is_one_line(tmp_path, rng, capsys):
    good = bz2.compress(json.dumps(_krun(rng)).encode())
    path = tmp_path / "cut.json.bz2"
    path.write_bytes(good[: len(good) // 2])
    code, lines = _run(["summary", str(path), "-o", str(tmp_path / "s.json")], capsys)
    assert code == 2
    assert len(lines) == 1 and str(path) in lines[0] and "truncated" in lines[0]
    assert not (tmp_path / "s.json").exists()


def test_unknown_format_is_one_line(tmp_path, capsys):
    path = tmp_path / "what.json"
    path.write_text(json.dumps({"hello": 1}))
    code, lines = _run(["annotate", str(path), "-o", str(tmp_path / "a.json")], capsys)
    assert code == 2 and len(lines) == 1
    assert str(path) in lines[0] and "wallclock_times" in lines[0]
    path.write_text("[1, 2")
    code, lines = _run(["annotate", str(path), "-o", str(tmp_path / "a.json")], capsys)
    assert code == 2 and len(lines) == 1 and "not valid JSON" in lines[0]


def test_missing_uname_names_machine_after_file(tmp_path, rng):
    data = _krun(rng)
    del data["audit"]
    path = tmp_path / "nouname.json"
    path.write_text(json.dumps(data))
    notes, warn = _collect()
    by_machine = load_results([path], warn=warn)
    assert list(by_machine) == ["nouname"]
    assert any("uname" in n and str(path) in n for n in notes)


def test_bad_executions_are_dropped_and_the_rest_analysed(tmp_path, rng, capsys):
    data = _krun(rng)
    fib = data["wallclock_times"]["fib:PyPy:default-python"]
    fib[1] = fib[1][:30]  # shorter execution
    fib[2][5] = -1.0  # negative time
    data["wallclock_times"]["nbody:CPython:default-python"][0] = []  # crashed
    data["wallclock_times"]["nbody:CPython:default-python"][1][3] = float("nan")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))  # json writes NaN literally, as Python reads it
    out = tmp_path / "s.json"
    code, lines = _run(["summary", str(path), "-o", str(out), "--seed", "1", "--quality", "low"], capsys)
    assert code == 0
    text = "\n".join(lines)
    assert "different lengths" in text
    assert "iteration 5 has an invalid time" in text
    assert "invalid time (nan)" in text
    summary = json.loads(out.read_text())
    fib_summary = summary["machines"]["bencher3"]["PyPy"]["fib"]
    # The negative-time execution is unclassified, the other two are analysed.
    assert [p["classification"] is None for p in fib_summary["process_executons"]] == [False, False, True]
    assert sum(fib_summary["detailed_classification"].values()) == 2
    # nbody's first execution crashed: skipped as warmup_stats does, with a warning.
    assert "nbody" not in summary["machines"]["bencher3"].get("CPython", {})
    assert "benchmark crashed" in text


def test_missing_file_is_one_line(tmp_path, capsys):
    code, lines = _run(["summary", str(tmp_path / "nope.json"), "-o", str(tmp_path / "s.json")], capsys)
    assert code == 2 and lines == [f"coldrun-analyze: error: {tmp_path / 'nope.json'}: no such file"]


def test_bad_key_is_skipped_with_a_warning(tmp_path, rng):
    data = _krun(rng)
    data["wallclock_times"]["nocolons"] = [[1.0, 2.0]]
    path = tmp_path / "k.json"
    path.write_text(json.dumps(data))
    notes, warn = _collect()
    r = read_results(path, warn=warn)
    assert "nocolons" not in r["wallclock_times"] and len(r["wallclock_times"]) == 2
    assert any("nocolons" in n for n in notes)


def test_a_krun_files_execution_flags_are_kept_where_they_fit_the_executions(tmp_path, rng):
    """coldrun's Krun export lists each key's flagged executions (execution_flags); one that does not give
    one list of flag names per execution (a hand-edited file) is dropped with a warning, the rest kept."""
    data = _krun(rng)
    data["execution_flags"] = {"fib:PyPy:default-python": [[], ["files_changed"], []],
                               "nbody:CPython:default-python": [["thermal_throttle"]],
                               "gone:vm:v": [[]]}
    path = tmp_path / "k.json"
    path.write_text(json.dumps(data))
    notes, warn = _collect()
    r = read_results(path, warn=warn)
    assert r["execution_flags"] == {"fib:PyPy:default-python": [[], ["files_changed"], []]}
    assert sorted(n.split("execution_flags.")[1].split(":")[0] for n in notes) == ["gone", "nbody"], notes
    data["execution_flags"] = ["files_changed"]
    path.write_text(json.dumps(data))
    notes, warn = _collect()
    assert "execution_flags" not in read_results(path, warn=warn)
    assert notes == [f"{path}: execution_flags: not a table of keys; ignored"]


def test_native_wrong_version(tmp_path):
    path = tmp_path / "n.json"
    path.write_text(json.dumps({"format": "coldrun-native", "format_version": 9, "executions": []}))
    with pytest.raises(AnalysisError, match="format_version 9"):
        read_results(path)
