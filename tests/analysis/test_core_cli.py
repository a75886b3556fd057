"""coldrun-analyze annotate / summary end to end."""

from __future__ import annotations

import bz2
import json

import numpy as np
import pytest

from analysis.cli import main
from analysis.pipeline import ANNOTATION_KEYS, annotate


@pytest.fixture
def results_file(tmp_path):
    rng = np.random.default_rng(3)
    warm = [float(2.0 if i < 15 else 1.0) + rng.normal(0, 0.002) for i in range(120)]
    flat = [1.0 + float(rng.normal(0, 0.002)) for _ in range(120)]
    data = {
        "wallclock_times": {"b:vm:default-x": [warm, flat, list(warm)]},
        "audit": {"uname": "Linux host1 6.1"},
    }
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    return path


def test_annotate_writes_warmup_stats_keys(tmp_path, results_file, capsys):
    out = tmp_path / "ann.json.bz2"
    assert main(["annotate", str(results_file), "-o", str(out), "--jobs", "1"]) == 0
    with bz2.open(out, "rt") as fh:
        ann = json.load(fh)
    for key in ANNOTATION_KEYS:
        assert key in ann
    assert ann["window_size"] == 12 and ann["classifier"] == {"delta": "2%", "steady": 30}  # coldrun's default delta
    assert ann["classifications"]["b:vm:default-x"] == ["warmup", "flat", "warmup"]
    assert ann["changepoints"]["b:vm:default-x"][0] == [14]


def test_options_reach_the_classifier(tmp_path, results_file):
    out = tmp_path / "ann.json"
    assert main(["annotate", str(results_file), "-o", str(out), "--window", "20", "--steady", "10",
                 "--delta", "5%", "--jobs", "1"]) == 0
    ann = json.loads(out.read_text())
    assert ann["window_size"] == 20 and ann["classifier"] == {"delta": "5%", "steady": 10}


def test_summary_is_seeded_and_warmup_stats_shaped(tmp_path, results_file):
    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        assert main(["summary", str(results_file), "-o", str(out), "--seed", "9", "--resamples", "3000"]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    summary = json.loads(outs[0])
    assert outs[0] == json.dumps(summary, sort_keys=True, indent=4)
    bench = summary["machines"]["host1"]["vm"]["b"]
    assert bench["classification"] == "good inconsistent"
    assert bench["steady_state_iteration_list"] == [15, 1, 15]
    assert len(bench["process_executons"]) == 3
    assert abs(bench["steady_state_time"] - 1.0) < 0.001
    other = tmp_path / "c.json"
    assert main(["summary", str(results_file), "-o", str(other), "--seed", "10", "--resamples", "3000"]) == 0
    assert json.loads(other.read_text())["machines"]["host1"]["vm"]["b"]["steady_state_time"] != bench["steady_state_time"]


def test_bad_delta_is_an_argument_error(tmp_path, results_file, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["annotate", str(results_file), "-o", str(tmp_path / "x.json"), "--delta", "fast"])
    assert exc.value.code == 2
    assert "delta must be seconds" in capsys.readouterr().err


def test_too_short_execution_is_unclassified_not_fatal():
    results = {"wallclock_times": {"b:vm:v": [[1.0, 1.0, 1.0], [1.0, 1.01, 0.99, 1.0, 1.02, 1.0]]}}
    notes: list[str] = []
    ann = annotate(results, warn=notes.append)
    assert ann["classifications"]["b:vm:v"] == [None, "flat"]
    assert ann["changepoints"]["b:vm:v"][0] == [] and ann["changepoint_means"]["b:vm:v"][0] == []
    assert any("process execution #1" in n and "at least 4" in n for n in notes)


def test_all_zero_times_are_classified_as_warmup_stats_does_but_said():
    """Issue 28 (6): all-zero times were a silent 'flat 0.00000 ± 0'."""
    results = {"wallclock_times": {"b:vm:v": [[0.0] * 20, [1.0, 1.01, 0.99, 1.0, 1.02, 1.0]]}}
    notes: list[str] = []
    ann = annotate(results, warn=notes.append)
    assert ann["classifications"]["b:vm:v"][0] == "flat"
    assert [n for n in notes if "every iteration took 0 s" in n] == [n for n in notes if "#1" in n]
    assert len([n for n in notes if "every iteration took 0 s" in n]) == 1


def test_parallel_and_serial_annotation_agree(results_file):
    data = json.loads(results_file.read_text())
    data["wallclock_times"]["c:vm:default-x"] = data["wallclock_times"]["b:vm:default-x"][::-1]
    assert annotate(data, jobs=1) == annotate(data, jobs=2)


def test_summarise_accepts_one_machine_directly(results_file):
    from analysis.summary import summarise

    data = json.loads(results_file.read_text())
    ann = annotate(data)
    direct = summarise(ann, resamples=500, seed=1)
    by_machine = summarise({"host1": ann}, resamples=500, seed=1)
    assert direct == by_machine
    assert list(direct["machines"]) == ["host1"]


def test_annotate_accepts_load_results_output_for_one_machine(results_file):
    from analysis.errors import AnalysisError
    from analysis.pipeline import load_results

    by_machine = load_results([results_file])
    ann = annotate(by_machine)
    assert ann["classifications"]["b:vm:default-x"] == ["warmup", "flat", "warmup"]
    with pytest.raises(AnalysisError, match="one machine"):
        annotate({"a": by_machine["host1"], "b": by_machine["host1"]})


def test_annotate_and_summary_say_what_they_wrote(tmp_path, results_file, capsys):
    ann, summ = tmp_path / "ann.json", tmp_path / "summary.json"
    assert main(["annotate", str(results_file), "-o", str(ann), "--jobs", "1"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == f"Wrote {ann}: 3 process executions, 1 benchmark keys\n"
    assert main(["summary", str(results_file), "-o", str(summ), "--jobs", "1", "--resamples", "100",
                 "--seed", "4"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"Wrote {summ}: 3 process executions, 1 benchmark keys, 1 machine(s), bootstrap seed 4\n"


def test_times_the_changepoint_analysis_refuses_are_refused_by_pilot_alike():
    """Issue 28 (6): `table` dropped 1e-300 s iterations that `pilot` averaged in."""
    from analysis.pilot.stopping import StopTarget, execution_estimate

    tiny = [1e-300] * 20
    notes: list[str] = []
    ann = annotate({"wallclock_times": {"b:vm:v": [tiny, [1.0, 1.01, 0.99, 1.0, 1.02, 1.0] * 3]}},
                   warn=notes.append)
    assert ann["classifications"]["b:vm:v"] == [None, "flat"]
    (note,) = [n for n in notes if "#1" in n]
    for estimate in ("pilot", "warmup_stats"):
        est = execution_estimate(tiny, StopTarget(ci_percent=0.05, estimate=estimate))
        assert est.mean is None and est.reason in note, (est.reason, note)
    assert "between 1e-100 and 1e+100" in note and "took 1e-300 s" in note


def test_each_keys_file_digests_are_not_an_environment_difference():
    """The HTML's provenance listed every key's key_files_sha256 as a differing execution environment."""
    from analysis.reports.provenance import environment_differences

    records = [{"platform_before": {"platform": "simulated", "key_files_sha256": {k: k * 8}}} for k in "ab"]
    assert environment_differences(records) == []
    records[1]["platform_before"]["platform"] = "linux"
    assert environment_differences(records) == ["platform_before: {'platform': 'linux'} (1 execution), "
                                                "{'platform': 'simulated'} (1 execution)"]
