"""``coldrun-analyze pilot RESULTS`` and ``compare --method welch A B`` on a Krun results file built here, the
Pilot section of the HTML report, the Pilot band on run-sequence plots, and a cheap --help."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from analysis import cli, plots
from analysis.pilot import edm
from analysis.pilot import subsession as ss
from analysis.pilot.readings import ReadingsSettings, analyse_readings
from shared_paths import REPO

KEY = "fib:CPython:default-python"
OTHER = "nbody:PyPy:default-python"
ITERATIONS = 240
WARMUP = 50


def execution(rng: np.random.Generator, level: float, warmup: int = WARMUP, n: int = ITERATIONS) -> list[float]:
    """A warm-up at 1.6 x the level, then noise around it."""
    t = level + rng.normal(0, level * 0.002, n)
    t[:warmup] += 0.6 * level
    return [float(v) for v in t]


def results_doc(scale: float = 1.0, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    fib = [execution(rng, 0.010 * scale) for _ in range(4)]
    fib.insert(2, [])  # execution 2 errored
    other = [execution(rng, 0.5 * scale, warmup=0) for _ in range(3)]
    other.append([0.25] * 60)  # a coarse clock: constant
    other.append([0.5] * 10)  # too short for EDM
    return {"wallclock_times": {KEY: fib, OTHER: other},
            "pexec_flags": {KEY: ["C", "C", "E", "C", "C"], OTHER: ["C"] * 5},
            "audit": {"uname": "Linux pilotbox 6.1.0 x86_64"}}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pilot")
    a, b = d / "a.json", d / "b.json"
    a.write_text(json.dumps(results_doc()))
    b.write_text(json.dumps(results_doc(scale=1.05, seed=8)))
    return a, b


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def report(argv, capsys) -> tuple[dict, str]:
    code, out, err = run(argv + ["--json"], capsys)
    assert code == 0, err
    return json.loads(out), err


def test_results_per_execution_and_per_key(files, capsys):
    doc, err = report(["pilot", str(files[0]), "--jobs", "1"], capsys)
    (item,) = doc["results"]
    assert item["machine"] == "pilotbox" and doc["settings"]["ac_limit"] == 0.1
    keys = {k["key"]: k for k in item["keys"]}
    fib = keys[KEY]
    times = results_doc()["wallclock_times"][KEY]
    means = []
    for row, t in zip(fib["executions"], times):
        if not t:
            assert row["state"] == "errored" and row["note"] == "errored (no data)"
            assert row["stable_segment"] is None and row["mean"] is None
            continue
        begin, end = edm.dominant_segment(t)
        assert row["stable_segment"] == [begin, end] and end == ITERATIONS
        assert abs(begin - WARMUP) <= 10  # the warm-up is left out (EDM places a step only roughly)
        assert math.isclose(row["mean"], sum(t[begin:end]) / (end - begin), rel_tol=1e-12)
        # The same numbers as the --readings interface gives for this execution.
        single = analyse_readings(t, ReadingsSettings())
        assert (row["q"], row["ci_width"], row["required_samples"]) == \
            (single.q, single.ci_width, single.required_samples)
        means.append(row["mean"])
    summary = fib["summary"]
    assert summary["executions"] == 5 and summary["usable"] == 4
    assert math.isclose(summary["mean"], sum(means) / 4, rel_tol=1e-12)
    # Executions are the samples: a t interval of the four means (q = 1: n // 3 = 1).
    half = stats.t.ppf(0.975, 3) * np.std(means, ddof=1) / math.sqrt(4)
    assert math.isclose(summary["ci_width"], 2 * half, rel_tol=1e-9)
    assert summary["target_met"] == (summary["ci_width"] <= summary["target_ci_width"])
    assert summary["median_stable_segment"][1] == ITERATIONS


def test_bad_executions_warn_one_line_each_and_the_rest_is_analysed(files, capsys):
    doc, err = report(["pilot", str(files[0])], capsys)
    rows = {r["pexec"]: r for k in doc["results"][0]["keys"] if k["key"] == OTHER for r in k["executions"]}
    assert rows[3]["ci_width"] == 0.0 and rows[3]["stable_segment"] == [0, 60]
    assert rows[4]["stable_segment"] == [0, 10] and rows[4]["iterations"] == 10
    # Plain noise: EDM over-segments it, and without a dominant segment Pilot uses nothing (a row says so).
    assert all(rows[i]["mean"] is not None or "no stable segment" in rows[i]["note"] for i in range(3))
    lines = [line for line in err.splitlines() if OTHER in line]
    assert len([line for line in lines if "process execution #4" in line and "same time" in line]) == 1
    assert len([line for line in lines if "process execution #5" in line and "fewer than 30" in line]) == 1
    assert all(line.startswith(f"coldrun-analyze: warning: {files[0]}: ") for line in lines)


def test_nan_and_negative_executions_are_rows_and_warnings(tmp_path, capsys):
    doc = results_doc()
    doc["wallclock_times"][KEY][0][5] = float("nan")
    doc["wallclock_times"][KEY][1][7] = -0.01
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))  # NaN as JSON's NaN literal, as Python writes it
    report_doc, err = report(["pilot", str(path)], capsys)
    fib = next(k for k in report_doc["results"][0]["keys"] if k["key"] == KEY)
    states = [r["state"] for r in fib["executions"]]
    assert states == ["invalid", "invalid", "errored", "completed", "completed"]
    assert fib["executions"][0]["note"] == "invalid data (dropped)" and fib["summary"]["usable"] == 2
    assert "process execution #1: iteration 5 has an invalid time" in err
    assert "process execution #2: iteration 7 has an invalid time" in err


def test_presets_reach_the_report(files, capsys):
    quick, _ = report(["pilot", str(files[0]), "--preset", "quick"], capsys)
    assert quick["settings"] | {} == {"ac_limit": 0.8, "ci_percent": 0.2, "ci_width": None, "confidence": 0.95,
                                      "min_samples": 30, "min_executions": 2}
    row = quick["results"][0]["keys"][0]["executions"][0]
    assert row["required_samples"] % row["q"] == 0 and row["required_samples"] >= 30
    own, _ = report(["pilot", str(files[0]), "--preset", "quick", "--min-samples", "500", "--ci-width", "1e-4"],
                    capsys)
    assert own["settings"]["min_samples"] == 500 and own["settings"]["ci_percent"] is None
    assert own["results"][0]["keys"][0]["summary"]["target_ci_width"] == 1e-4


def test_text_and_html_reports(files, tmp_path, capsys):
    code, out, _ = run(["pilot", str(files[0])], capsys)
    assert code == 0
    assert "Machine: pilotbox" in out and KEY in out and "errored (no data)" in out
    assert "Stable segment (median)" in out and "Process executions:" in out
    html_path = tmp_path / "pilot.html"
    code, _, err = run(["pilot", str(files[0]), "--format", "html", "-o", str(html_path)], capsys)
    assert code == 0 and f"Wrote {html_path}" in err
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<details>" in page and "errored (no data)" in page
    assert page.count("<table>") == 2 and "http" not in page


def test_compare_two_results_files(files, capsys):
    doc, _ = report(["compare", "--method", "welch", str(files[0]), str(files[1])], capsys)
    assert doc["file_a"] == str(files[0]) and doc["target_p"] == 0.05
    assert doc["only_in_a"] == [] and doc["only_in_b"] == []
    fib = next(k for k in doc["keys"] if k["key"] == KEY)
    sides = {}
    for name, path in (("a", files[0]), ("b", files[1])):
        single, _ = report(["pilot", str(path)], capsys)
        rows = next(k for k in single["results"][0]["keys"] if k["key"] == KEY)["executions"]
        sides[name] = [r["mean"] for r in rows if r["mean"] is not None]
    assert fib["a"]["executions"] == 4 and math.isclose(fib["a"]["mean"], np.mean(sides["a"]), rel_tol=1e-12)
    welch = stats.ttest_ind(sides["a"], sides["b"], equal_var=False)
    assert math.isclose(fib["p"], welch.pvalue, rel_tol=1e-6)
    assert fib["diff_ci"][1] < 0  # B is 5 % slower: mean(A) - mean(B) < 0
    assert math.isclose(fib["relative_change"], 0.05, abs_tol=0.005)
    # Already p < 0.05 with 4 executions: Pilot's size formula asks for no more than B has.
    assert fib["p"] < 0.05 and 0 <= fib["executions_for_target_p"] <= 4
    code, out, _ = run(["compare", "--method", "welch", str(files[0]), str(files[1])], capsys)
    assert code == 0 and "Welch" in out and KEY in out and "+5." in out
    code, out, _ = run(["compare", "--method", "welch", str(files[0]), str(files[1]), "--format", "html"], capsys)
    assert code == 0 and "<table>" in out and KEY in out


def test_reports_judge_keys_against_the_experiments_stop_target(tmp_path, capsys):
    """Issue 28 (3): a coldrun export carries its experiment file; pilot and the HTML use its [stop] target
    (5% here), as `coldrun status` does, unless an option asks for another; the HTML names unconverged keys."""
    doc = results_doc()
    doc["config"] = 'name = "x"\n[stop]\nci_percent = 0.05\nconfidence = 0.9\nmin_executions = 3\n'
    path = tmp_path / "stop.json"
    path.write_text(json.dumps(doc))
    own, _ = report(["pilot", str(path)], capsys)
    assert own["settings"]["ci_percent"] == 0.05 and own["settings"]["confidence"] == 0.9
    asked, _ = report(["pilot", str(path), "--ci-percent", "0.2"], capsys)
    assert asked["settings"]["ci_percent"] == 0.2 and asked["settings"]["confidence"] == 0.95
    out = tmp_path / "report.html"
    code, _, err = run(["table", str(path), "--format", "html", "--quality", "low", "--no-plots", "-o", str(out)],
                       capsys)
    assert code == 0, err
    page = out.read_text()
    assert "target CI width 5% of the mean" in page and "90% confidence" in page
    if not all(k["summary"]["target_met"] for item in own["results"] for k in item["keys"]):
        assert "Not converged:" in page


def test_a_stable_segment_spanning_a_level_shift_is_said(tmp_path, capsys):
    """Issue 28 (2): EDM's segment [0, 51) held a 4x jump at iteration 26 and nothing warned."""
    rng = np.random.default_rng(1)
    jump = list(0.001 + rng.normal(0, 0.00002, 51))
    jump[26:] = [4 * t for t in jump[26:]]
    steady = [list(0.001 + rng.normal(0, 0.00002, 51)) for _ in range(2)]
    path = tmp_path / "jump.json"
    path.write_text(json.dumps({"wallclock_times": {KEY: [steady[0], jump, steady[1]]}, "audit": {"uname": "Linux b 6 #1 x"}}))
    doc, err = report(["pilot", str(path)], capsys)
    rows = doc["results"][0]["keys"][0]["executions"]
    assert rows[1]["stable_segment"] == [0, 51] and "level shift at iteration 26" in rows[1]["note"]
    assert "level shift" not in rows[0]["note"] + rows[2]["note"]
    assert "process execution #2: Pilot's stable segment [0, 51) spans a level shift at iteration 26" in err
    from analysis.inputs import load_input
    from analysis.prepare import to_annotated
    annotated = to_annotated(load_input(path), warn=lambda m: None)
    legend = plots.plot_axes(plots.build_figure(annotated, KEY, 1, "b"))[2].get_legend()
    assert "WARNING: spans a level shift at iteration 26" in legend.get_texts()[-1].get_text().replace("\n", " ")


def test_compare_says_cannot_tell_where_pilot_reports_p_half():
    """Issue 28 (5): a side with one execution printed 'p 0.5'; the JSON keeps Pilot's 0.5."""
    from analysis.reports.pilot_tables import render_compare_text
    key = {"key": "k", "a": {"executions": 1, "mean": 2e-6, "variance": None},
           "b": {"executions": 3, "mean": 2.2e-6, "variance": 1e-14}, "relative_change": 0.1,
           "p": 0.5, "dof": None, "diff_ci": None, "executions_for_target_p": None, "note": ""}
    text = render_compare_text({"file_a": "a", "file_b": "b", "confidence": 0.95, "target_p": 0.05,
                                "keys": [key], "only_in_a": [], "only_in_b": []})
    row = next(line for line in text.splitlines() if line.startswith("k "))
    assert "cannot tell (n = 1)" in row and "0.5 " not in row
    assert "2.000 µs" in row and "2.200 µs" in row and "+10.0%" in row


def test_compare_lists_keys_in_one_file_only(files, tmp_path, capsys):
    doc = results_doc()
    doc["wallclock_times"]["extra:CPython:default-python"] = doc["wallclock_times"].pop(OTHER)
    doc["pexec_flags"]["extra:CPython:default-python"] = doc["pexec_flags"].pop(OTHER)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    cmp, _ = report(["compare", "--method", "welch", str(files[0]), str(path)], capsys)
    assert cmp["only_in_a"] == [OTHER] and cmp["only_in_b"] == ["extra:CPython:default-python"]
    assert [k["key"] for k in cmp["keys"]] == [KEY]


def test_html_report_has_a_pilot_section(files, tmp_path, capsys):
    out = tmp_path / "report.html"
    code, _, err = run(["table", str(files[0]), "--format", "html", "--quality", "low", "--no-plots",
                        "-o", str(out)], capsys)
    assert code == 0, err
    page = out.read_text()
    assert "Pilot: stable segments and confidence intervals" in page
    section = page[page.index("<h2>Pilot"):]
    assert KEY in section and OTHER in section and "errored (no data)" in section
    code, _, err = run(["table", str(files[0]), "--format", "html", "--quality", "low", "--no-plots",
                        "--no-pilot", "-o", str(out)], capsys)
    assert code == 0 and "Pilot:" not in out.read_text()


def test_plot_shades_pilots_stable_segment(files, tmp_path):
    from analysis.inputs import load_input
    from analysis.prepare import to_annotated

    annotated = to_annotated(load_input(files[0]), warn=lambda m: None)
    times = annotated["wallclock_times"][KEY][0]
    begin, end = edm.dominant_segment(times)
    fig = plots.build_figure(annotated, KEY, 0, "pilotbox")
    (main, zoom), _, legend = plots.plot_axes(fig)
    for ax in (main, zoom):
        (band,) = [p for p in ax.patches if p.get_gid() == "pilot-stable-segment"]
        xs = band.get_x(), band.get_x() + band.get_width()
        assert xs == (begin - 0.5, end - 0.5)
    labels = [t.get_text() for t in legend.get_legend().get_texts()]
    assert "warmup_stats\nchangepoint" in labels and labels[-1] == f"Pilot stable\nsegment [{begin}, {end})"
    short = plots.build_figure(annotated, OTHER, 4, "pilotbox")
    assert not [p for p in short.axes[0].patches if p.get_gid() == "pilot-stable-segment"]
    assert "too few for EDM" in plots.plot_axes(short)[2].get_legend().get_texts()[-1].get_text().replace("\n", " ")


def test_help_loads_no_numerics():
    code = ("import sys, analysis.cli; analysis.cli.build_parser().format_help(); "
            "print(sorted(m for m in ('numpy', 'scipy', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_readings_agree_with_subsession_functions_on_a_warmup_series():
    rng = np.random.default_rng(3)
    times = execution(rng, 0.02, n=400)
    result = analyse_readings(times)
    b, e = result.stable_segment
    kept = times[b:e]
    assert result.q == ss.optimal_subsession_size(kept) and result.n == e - b
    assert result.ci_width == ss.ci_width(kept, result.q)
