"""``coldrun-analyze compare A B`` (issue 39 item 2): per key, one sentence -- B/A with its CI over process
executions, or why there is no comparison and what would make one -- and Pilot's Welch test still reachable.

Unit tests feed made-up execution values with a known ratio to analysis.comparison; the end-to-end tests
run the CLI on a coldrun-native export (A) and a Krun results file (B) built here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from analysis import cli
from analysis.comparison import FASTER, NOT_COMPARED, SAME, SLOWER, Side, compare_key, ratio_interval
from analysis.reports.compare_report import render_text, sentence

UNAME = "Linux cmpbox 6.1.0 #1 SMP x86_64"
ITERATIONS = 100
FIB, SIEVE, NBODY, SPECTRAL = ("fib:python:default-python", "sieve:c:default-c", "nbody:c:default-c",
                               "spectral:c:default-c")


def side(values, **counts) -> Side:
    classes = counts.pop("classes", {"flat": len(values)})
    fields = {"executions": len(values), "without_data": 0, "unclassified": 0, "no_steady_state": 0, "tails": 0}
    fields.update(counts)
    return Side(list(values), classes=classes, **fields)


def log_t_interval(a, b, confidence):
    """The interval the module doc promises, computed here apart: delta method on log(mean b / mean a)."""
    a, b = np.asarray(a), np.asarray(b)
    va = a.var(ddof=1) / a.size / a.mean() ** 2
    vb = b.var(ddof=1) / b.size / b.mean() ** 2
    dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    centre = np.log(b.mean() / a.mean())
    half = stats.t.ppf(1 - (1 - confidence) / 2, dof) * np.sqrt(va + vb)
    return math.exp(centre - half), math.exp(centre + half)


A_VALUES = [1.00e-3, 1.01e-3, 0.99e-3, 1.005e-3, 0.995e-3]


def test_a_clear_slowdown_reads_as_pyperf_words_it():
    b_values = [1.37 * v for v in A_VALUES]
    c = compare_key(FIB, side(A_VALUES), side(b_values))
    assert c.verdict == SLOWER and c.reason == "" and c.notes == []
    assert math.isclose(c.interval.ratio, 1.37, rel_tol=1e-12)
    low, high = log_t_interval(A_VALUES, b_values, 0.99)
    assert math.isclose(c.interval.low, low, rel_tol=1e-9) and math.isclose(c.interval.high, high, rel_tol=1e-9)
    assert sentence(c, 0.99, "fib:python") == (
        f"fib:python: 1.000 ms → 1.370 ms: 1.37× slower (99% CI {low:.2f}×–{high:.2f}×)")
    # The same change the other way round is a speed-up by the same factor, its interval inverted.
    back = compare_key(FIB, side(b_values), side(A_VALUES))
    assert back.verdict == FASTER
    assert sentence(back, 0.99, "fib:python") == (
        f"fib:python: 1.370 ms → 1.000 ms: 1.37× faster (99% CI {low:.2f}×–{high:.2f}×)")


def test_no_significant_difference_shows_the_interval_of_b_over_a():
    b_values = [1.002e-3, 0.998e-3, 1.008e-3, 0.993e-3, 1.001e-3]
    c = compare_key(SIEVE, side(A_VALUES), side(b_values))
    assert c.verdict == SAME and c.interval.low < 1 < c.interval.high
    low, high = log_t_interval(A_VALUES, b_values, 0.99)
    assert sentence(c, 0.99, "sieve:c") == (
        f"sieve:c: 1.000 ms → 1.000 ms: no significant difference (99% CI {low:.2f}×–{high:.2f}×)")
    # At a lower confidence the same numbers give a narrower interval, as --confidence asks.
    narrower = compare_key(SIEVE, side(A_VALUES), side(b_values), confidence=0.8).interval
    assert c.interval.low < narrower.low and narrower.high < c.interval.high


def test_a_small_but_certain_change_is_not_printed_as_one():
    """1.004x with tight executions: 2 decimals would read '1.00× slower (99% CI 1.00×–1.00×)', 3 would show
    the ends alike; 4 tell them apart."""
    a = [1e-3 * (1 + d) for d in (0, 1e-4, -1e-4, 2e-4, -2e-4)]
    c = compare_key(FIB, side(a), side([1.004 * v for v in a]))
    assert c.verdict == SLOWER
    assert sentence(c, 0.99).endswith(": 1.000 ms → 1.004 ms: 1.0040× slower (99% CI 1.0037×–1.0043×)")


def test_one_execution_only_says_what_to_run():
    c = compare_key(NBODY, side([1e-3], executions=3, without_data=2), side(A_VALUES))
    assert c.verdict == NOT_COMPARED and c.interval is None
    assert sentence(c, 0.99, "nbody:c") == ("nbody:c: not compared: one execution only in A (2 without data left "
                                           "out); run ≥ 2 executions per side")
    both = compare_key(NBODY, side([1e-3]), side([2e-3]))
    assert both.reason == "one execution only in A; one execution only in B; run ≥ 2 executions per side"


def test_no_steady_state_on_one_side_says_what_would_fix_it():
    nss = side([], executions=3, no_steady_state=3, classes={"no steady state": 3})
    c = compare_key(SPECTRAL, side(A_VALUES), nss)
    assert c.verdict == NOT_COMPARED
    assert c.reason == ("no steady state in B (all 3 executions); run more iterations per execution, or compare "
                        "their last iterations with --unsteady tail")
    both = compare_key(SPECTRAL, nss, side([1e-3]))
    assert both.reason.startswith("no steady state in A") and "; one execution only in B;" in both.reason


def test_left_out_executions_and_differing_classes_are_said():
    a = side(A_VALUES, executions=6, no_steady_state=1, classes={"flat": 5, "no steady state": 1})
    c = compare_key(FIB, a, side([1.37 * v for v in A_VALUES]))
    assert c.verdict == SLOWER
    assert c.notes == ["A: 1 of 6 executions without a steady state left out",
                       "classes differ: A bad inconsistent, B flat"]
    # Flat and warmup are both good (as diff judges them): no note.
    warm = side(A_VALUES, classes={"flat": 2, "warmup": 3})
    assert compare_key(FIB, warm, side(A_VALUES)).notes == []


def test_ratio_interval_edges():
    point = ratio_interval([2.0, 2.0], [3.0, 3.0])
    assert (point.ratio, point.low, point.high, point.dof) == (1.5, 1.5, 1.5, None)
    with pytest.raises(ValueError, match="at least 2"):
        ratio_interval([1.0], [1.0, 2.0])
    c = compare_key(FIB, side([0.0, 0.0]), side(A_VALUES))
    assert c.verdict == NOT_COMPARED and "positive" in c.reason
    unbounded = ratio_interval([1e-3, 1.0], [1e-3, 2e-3], confidence=0.999999)
    assert (unbounded.low, unbounded.high) == (0.0, math.inf)
    assert "(99.9999% CI 0×–inf×)" in sentence(compare_key(FIB, side([1e-3, 1.0]), side([1e-3, 2e-3]),
                                                       confidence=0.999999), 0.999999)
    missing = compare_key(FIB, side(A_VALUES), None)
    assert missing.reason == "only in A: B has no such key"


def test_the_header_names_the_method_once():
    text = render_text([compare_key(FIB, side(A_VALUES), side(A_VALUES))], "a.json", "b.json", 0.99)
    first, *rest = text.splitlines()
    assert first.startswith("A = a.json, B = b.json. ") and "99% CI: t on log(B/A) over executions" in first
    assert not any("delta method" in line for line in rest)
    assert "compare --method welch A B" in text


# --- the command, end to end ------------------------------------------------

def _series(rng, level: float, shift_at: int | None = None) -> list[float]:
    t = level * (1 + rng.normal(0, 0.003, ITERATIONS))
    if shift_at is not None:  # a jump in the last 25 iterations: no steady state
        t[shift_at:] *= 2
    return [float(v) for v in t]


def _levels(rng, level: float, n: int) -> list[float]:
    return [level * (1 + rng.normal(0, 0.01)) for _ in range(n)]  # a per-boot offset, 1%


def native_export(rng) -> dict:
    """A: fib 5 executions at 1 ms; sieve 5 at 2 ms; nbody 1 completed, 2 errored; spectral 4 steady."""
    slots = {FIB: [_series(rng, v) for v in _levels(rng, 1e-3, 5)],
             SIEVE: [_series(rng, v) for v in _levels(rng, 2e-3, 5)],
             NBODY: [_series(rng, 5e-4), None, None],
             SPECTRAL: [_series(rng, v) for v in _levels(rng, 3e-3, 4)]}
    jobs, executions = [], []
    for key, runs in slots.items():
        for pexec, times in enumerate(runs):
            state = "completed" if times else "errored"
            jobs.append({"index": len(jobs), "key": key, "pexec": pexec, "state": state, "attempts": 1})
            executions.append({"key": key, "pexec": pexec, "state": state, "outcome": bool(times),
                               "wallclock_times": times or []})
    return {"format": "coldrun-native", "format_version": 1, "jobs": jobs, "executions": executions,
            "audit": {"uname": UNAME}}


def krun_results(rng) -> dict:
    """B: fib 1.37x slower; sieve unchanged; nbody 3 at 0.5 ms; spectral never steady."""
    times = {FIB: [_series(rng, v) for v in _levels(rng, 1.37e-3, 5)],
             SIEVE: [_series(rng, v) for v in _levels(rng, 2e-3, 5)],
             NBODY: [_series(rng, v) for v in _levels(rng, 5e-4, 3)],
             SPECTRAL: [_series(rng, 3e-3, shift_at=90) for _ in range(3)]}
    return {"wallclock_times": times, "pexec_flags": {k: ["C"] * len(v) for k, v in times.items()},
            "audit": {"uname": UNAME}}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("compare")
    rng = np.random.default_rng(39)
    a, b = d / "a_native.json", d / "b_krun.json"
    a.write_text(json.dumps(native_export(rng)))
    b.write_text(json.dumps(krun_results(rng)))
    return a, b


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_end_to_end(files, tmp_path, capsys):
    a, b = files
    out_json = tmp_path / "cmp.json"
    code, out, err = run(["compare", str(a), str(b), "--jobs", "1", "--json", str(out_json)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"A = {a}, B = {b}. ") and "99% CI" in lines[0]
    by_label = {line.split(": ")[0]: line for line in lines[1:5]}
    assert set(by_label) == {"fib:python", "sieve:c", "nbody:c", "spectral:c"}
    doc = json.loads(out_json.read_text())
    keys = {k["key"]: k for k in doc["keys"]}
    assert doc["confidence"] == 0.99 and doc["unsteady"] == "exclude" and "delta method" in doc["method"]

    fib = keys[FIB]
    assert fib["verdict"] == "slower" and fib["reason"] is None
    assert fib["a"]["used"] == 5 and fib["b"]["used"] == 5
    assert math.isclose(fib["a"]["mean"], np.mean(fib["a"]["values"]), rel_tol=1e-12)
    assert math.isclose(fib["ratio"], fib["b"]["mean"] / fib["a"]["mean"], rel_tol=1e-12)
    assert 1.30 < fib["ratio"] < 1.45 and 1 < fib["ci"][0] < fib["ratio"] < fib["ci"][1]
    low, high = log_t_interval(fib["a"]["values"], fib["b"]["values"], 0.99)
    assert math.isclose(fib["ci"][0], low, rel_tol=1e-9) and math.isclose(fib["ci"][1], high, rel_tol=1e-9)
    assert by_label["fib:python"] == fib["sentence"]
    assert f"× slower (99% CI {low:.2f}×–{high:.2f}×)" in fib["sentence"]

    assert keys[SIEVE]["verdict"] == "no significant difference"
    assert "no significant difference (99% CI" in by_label["sieve:c"]
    assert keys[NBODY]["verdict"] == "not compared" and keys[NBODY]["ci"] is None
    assert by_label["nbody:c"] == ("nbody:c: not compared: one execution only in A (2 without data left out); "
                                   "run ≥ 2 executions per side")
    spectral = keys[SPECTRAL]
    assert spectral["b"]["no_steady_state"] == 3 and spectral["b"]["classification"] == "no steady state"
    assert spectral["reason"].startswith("no steady state in B (all 3 executions)")

    # --unsteady tail: B's unsteady executions give their last 25 iterations (10 at 1x, 15 at 2x less the
    # outliers the jump makes), said so.
    code, out, _ = run(["compare", str(a), str(b), "--jobs", "1", "--unsteady", "tail", "--json"], capsys)
    tail = {k["key"]: k for k in json.loads(out)["keys"]}[SPECTRAL]
    assert code == 0 and tail["verdict"] == "slower" and 1.2 < tail["ratio"] < 1.7 and tail["b"]["tails"] == 3
    assert "B: 3 of 3 executions without a steady state, their last 25 iterations used" in tail["notes"]


def test_html_has_the_same_sentences_coloured_by_verdict(files, tmp_path, capsys):
    a, b = files
    page = tmp_path / "compare.html"
    code, _, err = run(["compare", str(a), str(b), "--jobs", "1", "--format", "html", "-o", str(page)], capsys)
    assert code == 0 and f"Wrote {page}" in err
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "t on log(B/A) over executions" in text
    assert f'<tr><td>{FIB}</td><td class="worse">' in text and "× slower (99% CI" in text
    assert f'<tr><td>{SIEVE}</td><td>' in text and f'<tr><td>{NBODY}</td><td class="different">not compared: ' in text


def test_old_welch_comparison_is_still_reachable(files, capsys):
    a, b = files
    code, out, err = run(["compare", "--method", "welch", str(a), str(b), "--jobs", "1", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    # Pilot's report, its defaults as before (its numbers: tests/analysis/pilot/test_pilot_cli_reports.py).
    assert doc["confidence"] == 0.95 and doc["target_p"] == 0.05 and doc["file_a"] == str(a)
    assert {"p", "dof", "diff_ci", "executions_for_target_p"} <= set(doc["keys"][0]) and "verdict" not in doc["keys"][0]
    code, out, _ = run(["compare", "--welch", "98.105", "0.488601", "65", "98.394", "0.552049", "65"], capsys)
    assert code == 0 and "p 0.02402285622" in out
    code, out, _ = run(["compare", "--method", "welch", str(a), str(b), "--format", "html"], capsys)
    assert code == 0 and "<table>" in out


@pytest.mark.parametrize("extra,needle", [
    (["--target-p", "0.05"], "--target-p: Pilot's Welch comparison only; add --method welch"),
    (["--preset", "quick"], "--preset: Pilot's Welch comparison only; add --method welch"),
    (["--min-samples", "30"], "--min-samples: Pilot's Welch comparison only; add --method welch"),
    (["--method", "welch", "--unsteady", "tail"], "--unsteady: not used with --method welch"),
])
def test_options_of_the_other_method_are_refused_with_a_note(files, extra, needle, capsys):
    code, out, err = run(["compare", str(files[0]), str(files[1]), *extra], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and needle in err


def test_bad_input_is_one_line_naming_the_file(files, tmp_path, capsys):
    missing = tmp_path / "none.json"
    code, _, err = run(["compare", str(files[0]), str(missing)], capsys)
    assert (code, err) == (2, f"coldrun-analyze: error: {missing}: no such file\n")
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"machines": {}}))
    code, _, err = run(["compare", str(files[0]), str(summary)], capsys)
    assert code == 2 and err.startswith(f"coldrun-analyze: error: {summary}: is a summary JSON")
    assert len(err.splitlines()) == 1
    code, _, err = run(["compare", str(files[0])], capsys)
    assert code == 2 and "compare takes two results files A B (got 1)" in err
