"""The warmup_stats golden corpus: annotate and summary against real warmup_stats + R."""

from __future__ import annotations

import json

import pytest

from analysis.pipeline import ANNOTATION_KEYS, annotate, load_results
from analysis.summary import summarise

from shared_paths import GOLDEN as SHARED_GOLDEN
CORPUS = SHARED_GOLDEN / "warmup_stats" / "corpus_500"



@pytest.fixture(scope="module")
def annotated():
    by_machine = load_results([CORPUS / "input.json.bz2"])
    assert list(by_machine) == ["oraclebox"]
    return annotate(by_machine["oraclebox"], delta="0.001", jobs=2)   # the paper's delta: warmup_stats' classes


@pytest.fixture(scope="module")
def summary(annotated):
    return summarise({"oraclebox": annotated}, seed=20240101, jobs=2)


@pytest.mark.parametrize("name", ANNOTATION_KEYS)
def test_annotations_exact(annotated, name):
    golden = json.loads((CORPUS / "annotated.json").read_text())
    # Exact equality, floats included (means and variances to the last bit).
    assert annotated[name] == golden[name]


def test_summary_exact_except_bootstrap(summary):
    golden = json.loads((CORPUS / "summary.json").read_text())
    assert summary["warmup_format_version"] == golden["warmup_format_version"]
    assert set(summary["machines"]) == set(golden["machines"])
    for vm, benches in golden["machines"]["oraclebox"].items():
        assert set(summary["machines"]["oraclebox"][vm]) == set(benches)
        for bench, fields in benches.items():
            mine = summary["machines"]["oraclebox"][vm][bench]
            assert set(mine) == set(fields)
            for field, value in fields.items():
                if field in ("steady_state_time", "steady_state_time_ci") and value is not None:
                    continue
                assert mine[field] == value, (bench, field)


def test_bootstrap_segments_are_warmup_stats_ranges(annotated):
    from analysis.classify import NO_STEADY_STATE, steady_state

    golden = json.loads((CORPUS / "bootstrap_segments.json").read_text())
    for key, info in golden.items():
        for pe in info["pexecs"]:
            p = pe["pexec"]
            cls = annotated["classifications"][key][p]
            assert cls == pe["classification"]
            if pe["segments"] is None:  # warmup_stats resamples nothing here
                assert cls == NO_STEADY_STATE
                continue
            st = steady_state(
                annotated["wallclock_times"][key][p],
                annotated["all_outliers"][key][p],
                annotated["changepoints"][key][p],
                annotated["changepoint_means"][key][p],
                annotated["changepoint_vars"][key][p],
                cls,
                annotated["classifier"]["delta"],
            )
            assert st.bootstrap_ranges == [(s["start"], s["end"]) for s in pe["segments"]]


def test_steady_perf_within_warmup_stats_spread(summary):
    by_key = json.loads((CORPUS / "summary_by_key.json").read_text())
    checked = 0
    for key, golden in by_key.items():
        bench, vm, _ = key.split(":")
        mine = summary["machines"]["oraclebox"][vm][bench]
        runs = golden.get("steady_state_time_runs")
        if golden["steady_state_time"] is None:
            assert mine["steady_state_time"] is None and mine["steady_state_time_ci"] is None
            continue
        assert runs, key
        # 21 unseeded warmup_stats runs: mean +- 4 sd (plus the print rounding).
        for field, value in (("median", mine["steady_state_time"]), ("ci", mine["steady_state_time_ci"])):
            mean, sd = runs[f"{field}_mean"], runs[f"{field}_sd"]
            assert abs(value - mean) <= 4 * sd + 1e-11, (key, field, value, mean, sd)
        checked += 1
    assert checked == 5
