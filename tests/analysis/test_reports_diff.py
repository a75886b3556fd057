"""warmup_stats' diff (analysis.diff): every verdict branch on crafted pairs."""

import copy
import json

import pytest

from analysis.diff import (BETTER, CLASSIFICATIONS, DIFFERENT, INTERSECTION, SAME, STEADY_ITER,
                           STEADY_ITER_VAR, STEADY_STATE_TIME, STEADY_STATE_TIME_VAR, WORSE, DiffError,
                           ci_narrowing, classification_verdict, diff_summaries, interval_narrowing,
                           intervals_differ, pair_verdicts)
from analysis.reports.diff_tables import render_diff

from latex_checks import compile_once
from shared_paths import GOLDEN as SHARED_GOLDEN
GOLDEN = SHARED_GOLDEN / "warmup_stats" / "corpus_500"


def pair(flat=0, warmup=0, slowdown=0, nss=0, *, iters=None, perf=None, ci=None):
    """A summary entry; `iters` is the steady iteration list of non-flat pairs."""
    counts = {"flat": flat, "warmup": warmup, "slowdown": slowdown, "no steady state": nss}
    kinds = [c for c, n in counts.items() if n]
    cls = kinds[0] if len(kinds) == 1 else (
        "good inconsistent" if set(kinds) <= {"flat", "warmup"} else "bad inconsistent")
    d = {"classification": cls, "detailed_classification": counts,
         "steady_state_iteration": None, "steady_state_iteration_iqr": None,
         "steady_state_iteration_list": [], "steady_state_time_to_reach_secs": None,
         "steady_state_time_to_reach_secs_iqr": None, "steady_state_time": perf, "steady_state_time_ci": ci}
    if iters:
        s = sorted(iters)
        d.update(steady_state_iteration=float(s[len(s) // 2]), steady_state_iteration_iqr=[float(s[0]), float(s[-1])],
                 steady_state_iteration_list=list(iters), steady_state_time_to_reach_secs=1.0,
                 steady_state_time_to_reach_secs_iqr=[0.5, 2.0])
    return d


def counts(flat=0, warmup=0, slowdown=0, nss=0):
    return {"flat": flat, "warmup": warmup, "slowdown": slowdown, "no steady state": nss}


# --- helpers ---------------------------------------------------------------

def test_interval_helpers():
    assert intervals_differ((1, 2), (3, 4)) and intervals_differ((3, 4), (1, 2))
    assert not intervals_differ((1, 3), (3, 4))
    assert not intervals_differ((7.000000000000001, 7.0), (7.0, 7.0))  # rounding-inverted range
    assert interval_narrowing((0, 10), (0, 5)) == BETTER
    assert interval_narrowing((0, 5), (0, 10)) == WORSE
    assert interval_narrowing((0, 5), (3, 8)) == SAME
    assert interval_narrowing((2, 2), (3, 3)) == SAME
    assert interval_narrowing((2, 2), (3, 4)) == WORSE
    assert ci_narrowing(0.001, 0.00105) == SAME  # below the 0.0001 s tolerance
    assert ci_narrowing(0.001, 0.0005 - 0.0001) == BETTER
    assert ci_narrowing(0.001, 0.002) == WORSE


# --- classifications -------------------------------------------------------

@pytest.mark.parametrize("before,after,expected", [
    (counts(warmup=8), counts(warmup=8), SAME),
    (counts(warmup=8), counts(nss=8), WORSE),            # intervals apart, more NSS
    (counts(nss=8), counts(flat=8), BETTER),             # intervals apart, more flat
    (counts(slowdown=8), counts(nss=8), DIFFERENT),      # apart, neither side grew
    (counts(flat=8), counts(warmup=8), SAME),            # apart, but only warmup<->flat moved
    (counts(warmup=7, nss=1), counts(warmup=8), BETTER),  # overlap, lost every NSS
    (counts(warmup=7, nss=1), counts(warmup=6, nss=2), SAME),
])
def test_classification_branches(before, after, expected):
    assert classification_verdict(before, after) == expected


# --- numeric cases -----------------------------------------------------------

def test_case1_both_all_flat():
    v = pair_verdicts(pair(flat=8, perf=1.0, ci=0.01), pair(flat=8, perf=1.005, ci=0.0005))
    assert v[STEADY_ITER] == SAME and v[STEADY_STATE_TIME] == SAME
    assert v[STEADY_STATE_TIME_VAR] == BETTER and v[STEADY_ITER_VAR] is None
    assert v[INTERSECTION] == BETTER
    v = pair_verdicts(pair(flat=8, perf=1.0, ci=0.01), pair(flat=8, perf=0.5, ci=0.01))
    assert v[STEADY_STATE_TIME] == BETTER and v[STEADY_STATE_TIME_VAR] is None
    v = pair_verdicts(pair(flat=8, perf=1.0, ci=0.01), pair(flat=8, perf=2.0, ci=0.01))
    assert v[STEADY_STATE_TIME] == WORSE and v[INTERSECTION] == WORSE
    v = pair_verdicts(pair(flat=8, perf=None, ci=None), pair(flat=8, perf=2.0, ci=0.01))
    assert v[STEADY_STATE_TIME] == DIFFERENT and v[INTERSECTION] == DIFFERENT


def test_case2_one_all_flat():
    # Before all flat, after warms up well past iteration 1: steady iter worse.
    v = pair_verdicts(pair(flat=8, perf=1.0, ci=0.01), pair(warmup=8, iters=[20, 25, 30], perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == WORSE and v[STEADY_STATE_TIME] == SAME
    # After all flat, before's range reached iteration 1: same.
    v = pair_verdicts(pair(flat=4, warmup=4, iters=[1, 1, 5, 9], perf=1.0, ci=0.01), pair(flat=8, perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == SAME
    # After all flat, before needed 20+ iterations: better.
    v = pair_verdicts(pair(warmup=8, iters=[20, 30], perf=1.0, ci=0.01), pair(flat=8, perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == BETTER and v[INTERSECTION] == BETTER
    # A no-steady-state execution on the non-flat side: both numbers differ.
    v = pair_verdicts(pair(flat=8, perf=1.0, ci=0.01), pair(flat=6, nss=2))
    assert v[STEADY_ITER] == DIFFERENT and v[STEADY_STATE_TIME] == DIFFERENT


def test_case3_nss_leaves_numbers_empty():
    v = pair_verdicts(pair(warmup=6, nss=2), pair(warmup=8, iters=[3, 4], perf=1.0, ci=0.1))
    assert v[STEADY_ITER:INTERSECTION] == [None, None, None, None]
    assert v[CLASSIFICATIONS] == BETTER and v[INTERSECTION] == BETTER


def test_case4_ranges_and_cis():
    base = pair(warmup=8, iters=[10, 20, 30], perf=1.0, ci=0.01)
    v = pair_verdicts(base, pair(warmup=8, iters=[15, 20, 25], perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == SAME and v[STEADY_ITER_VAR] == BETTER
    assert v[STEADY_STATE_TIME] == SAME and v[STEADY_STATE_TIME_VAR] == SAME
    assert v[INTERSECTION] == BETTER  # narrowing counts
    v = pair_verdicts(base, pair(warmup=8, iters=[1, 2, 3], perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == BETTER and v[STEADY_ITER_VAR] == BETTER
    v = pair_verdicts(base, pair(warmup=8, iters=[50, 100, 200], perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == WORSE and v[STEADY_ITER_VAR] == WORSE and v[INTERSECTION] == WORSE
    # Identical steady iterations: compared as a point, variation SAME.
    v = pair_verdicts(base, pair(warmup=8, iters=[40, 40, 40], perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == WORSE and v[STEADY_ITER_VAR] == SAME
    v = pair_verdicts(base, pair(warmup=8, iters=[20, 20, 20], perf=1.0, ci=0.01))
    assert v[STEADY_ITER] == SAME
    # Steady perf apart: slower is worse, CI variation still reported.
    v = pair_verdicts(base, pair(warmup=8, iters=[10, 20, 30], perf=1.5, ci=0.05))
    assert v[STEADY_STATE_TIME] == WORSE and v[STEADY_STATE_TIME_VAR] == WORSE
    # Mixed better and worse: different.
    v = pair_verdicts(base, pair(warmup=8, iters=[1, 2, 3], perf=1.5, ci=0.01))
    assert v[STEADY_ITER] == BETTER and v[STEADY_STATE_TIME] == WORSE and v[INTERSECTION] == DIFFERENT


def test_unchanged_pair_is_same_everywhere():
    p = pair(warmup=8, iters=[10, 20, 30], perf=1.0, ci=0.01)
    assert pair_verdicts(p, copy.deepcopy(p)) == [SAME] * 6


# --- whole summaries ---------------------------------------------------------

def summary(machine="box", **vms):
    return {"warmup_format_version": "2", "machines": {machine: vms}}


def test_golden_summary_against_itself_is_all_same():
    s = json.loads((GOLDEN / "summary.json").read_text())
    d = diff_summaries(s, s)
    verdicts = d["diff"]["Graal"]
    assert len(verdicts) == 7
    assert all(v[INTERSECTION] == SAME and v[CLASSIFICATIONS] == SAME for v in verdicts.values())
    assert verdicts["json_parse"][STEADY_ITER] is None  # all no steady state
    assert d["skipped"] == [[], []] and d["before"] == s and d["after"] == s


def test_skipped_pairs_and_vm_renaming():
    b = summary(A={"x": pair(flat=8, perf=1.0, ci=0.1), "only_before": pair(flat=2, perf=1.0, ci=0.1)})
    a = summary(B={"x": pair(flat=8, perf=1.0, ci=0.1), "only_after": pair(flat=2, perf=1.0, ci=0.1)})
    d = diff_summaries(b, a, vms=("A", "B"))
    assert list(d["diff"]) == ["A vs. B"] and list(d["diff"]["A vs. B"]) == ["x"]
    assert d["skipped"] == [["only_before:A vs. B"], ["only_after:A vs. B"]]
    assert "A" in b["machines"]["box"]  # inputs untouched
    with pytest.raises(DiffError, match="VM 'C' not found"):
        diff_summaries(b, a, vms=("C", "B"))


def test_different_machines_rejected():
    with pytest.raises(DiffError, match="same machine"):
        diff_summaries(summary("one", V={}), summary("two", V={}))
    with pytest.raises(DiffError, match="no 'machines'"):
        diff_summaries({}, summary())


# --- rendering ---------------------------------------------------------------

@pytest.fixture
def mixed_diff():
    b = summary(V={"better": pair(warmup=8, iters=[20, 30], perf=1.0, ci=0.01),
                   "worse": pair(flat=8, perf=1.0, ci=0.01),
                   "different": pair(slowdown=8, iters=[5, 6], perf=1.0, ci=0.01),
                   "same": pair(flat=8, perf=1.0, ci=0.01),
                   "narrower": pair(flat=8, perf=1.0, ci=0.01)})
    a = summary(V={"better": pair(flat=8, perf=0.5, ci=0.01),
                   "worse": pair(flat=8, perf=2.0, ci=0.01),
                   "different": pair(nss=8),
                   "same": pair(flat=8, perf=1.0, ci=0.01),
                   "narrower": pair(flat=8, perf=1.0, ci=0.002)})
    return diff_summaries(b, a)


def text_rows(text: str) -> dict[str, dict[str, str]]:
    """Benchmark -> {header: cell} of the text diff (columns cut at the dashes' positions)."""
    lines = text.splitlines()
    rule = next(i for i, ln in enumerate(lines) if ln.startswith("---"))
    spans, pos = [], 0
    for dashes in lines[rule].split("  "):
        spans.append((pos, pos + len(dashes)))
        pos += len(dashes) + 2
    headers = [lines[rule - 1][a:b].strip() for a, b in spans]
    rows = {}
    for ln in lines[rule + 1:]:
        if not ln.strip():
            break
        cells = [ln[a:b].strip() for a, b in spans[:-1]] + [ln[spans[-1][0]:].strip()]
        rows[cells[0]] = dict(zip(headers, cells))
    return rows


def test_render_diff_text(mixed_diff):
    rows = text_rows(render_diff(mixed_diff, "text"))
    assert rows["better"]["Δ time"] == "-500.0 ms faster"
    assert rows["better"]["Verdict (time)"] == "faster (intervals apart)"
    assert rows["worse"]["Δ time"] == "+1.000 s slower" and rows["worse"]["Verdict (time)"] == "slower (intervals apart)"
    # Issue 28 (1): no steady perf after: not "different (classes differ)", and never "same".
    assert rows["different"]["Verdict (time)"] == "not comparable (no steady perf after)"
    assert rows["different"]["Class."].endswith("classes differ")
    assert rows["same"]["Verdict (time)"] == "same (intervals overlap)" and rows["same"]["Δ time"] == "+0 s"
    assert rows["same"]["Δ CI"] == "+0 s"


def test_render_diff_verdict_is_time_alone_decided_by_the_intervals():
    """Issue 28 (1): 0.28 ms slower with a narrower interval was 'better (steady sooner, CI narrower)'."""
    b = summary(V={"fib": pair(warmup=8, iters=[20, 30], perf=0.01000, ci=0.00012),
                   "none": pair(nss=8)})
    a = summary(V={"fib": pair(warmup=8, iters=[2, 3], perf=0.01028, ci=0.00001),
                   "none": pair(nss=8)})
    rows = text_rows(render_diff(diff_summaries(b, a), "text"))
    assert rows["fib"]["Verdict (time)"] == "slower (intervals apart)"
    assert rows["fib"]["Δ time"] == "+280.0 µs slower"
    assert rows["fib"]["Δ CI"] == "-110 µs CI narrower"
    assert rows["none"]["Verdict (time)"] == "no data (no steady perf before or after)"


def test_render_diff_keeps_a_narrower_interval_apart_from_a_faster_time(mixed_diff):
    """Only the CI narrowed: the time column and the verdict say no change, the CI column says narrower."""
    rows = text_rows(render_diff(mixed_diff, "text"))
    row = rows["narrower"]
    assert row["Δ time"] == "+0 s"
    assert row["Δ CI"] == "-8.0 ms CI narrower"
    assert row["Verdict (time)"] == "same (intervals overlap)"
    assert "faster" not in " ".join(row.values())
    page = render_diff(mixed_diff, "html")
    import re
    html_row = re.search(r'<tr id="narrower-V">(.*?)</tr>', page).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html_row)
    assert cells[7] == "+0 s" and cells[8] == "-8.0 ms CI narrower"
    assert '<td class="num better">-8.0 ms CI narrower</td>' in html_row
    assert "faster" not in html_row


def test_render_diff_footer_names_both_seeds(mixed_diff):
    diff = copy.deepcopy(mixed_diff)
    diff["before"]["bootstrap"] = {"seed": 5, "resamples": 1000, "confidence": "0.99"}
    text = render_diff(diff, "text")
    assert "; 99% interval, 1000 resamples, seed 5." in text.split("Before: Steady perf")[1].splitlines()[0]
    assert "; settings not recorded" in text.split("After: Steady perf")[1].splitlines()[0]
    assert r"99\% interval, 1000 resamples, seed 5." in render_diff(diff, "latex")


def test_render_diff_html_colours(mixed_diff):
    page = render_diff(mixed_diff, "html")
    assert "<script" not in page and "http" not in page
    import re
    row = re.search(r'<tr id="worse-V">(.*?)</tr>', page).group(1)
    assert 'class="worse"' in row  # the benchmark name cell
    assert 'class="num worse"' in row
    row = re.search(r'<tr id="same-V">(.*?)</tr>', page).group(1)
    assert "better" not in row and "worse" not in row and "different" not in row


def test_render_diff_latex_colours(mixed_diff):
    tex = render_diff(mixed_diff, "latex")
    assert r"\colorbox{lightgreen}{better}" in tex
    assert r"\colorbox{lightred}{worse}" in tex
    assert r"\colorbox{lightyellow}{different or not comparable}" in tex
    assert r"\ccell{lightred}{" in tex   # the cells themselves
    # Issue 28 (11): the key's words are the HTML's.
    assert '<span class="different">&nbsp;different or not comparable&nbsp;</span>' in render_diff(mixed_diff, "html")
    assert r"\newcommand{\ccell}" in tex


def test_render_diff_change_signs():
    from analysis.reports.formats import signed
    assert signed(-0.5, 1) == "-0.5"
    assert signed(0.25, 2) == "+0.25"
    assert signed(-0.000001, 5) == "+0.00000"


def test_render_diff_rejects_unknown_format(mixed_diff):
    with pytest.raises(ValueError, match="unknown diff format"):
        render_diff(mixed_diff, "pdf")


def test_render_diff_latex_compiles_in_one_pass_within_a_papers_text_width(mixed_diff, tmp_path):
    """Issue 28 (11): the diff ran 576 pt off the page; the golden summary against itself too."""
    compile_once(render_diff(mixed_diff, "latex"), tmp_path, "diff")
    golden = json.loads((GOLDEN / "summary.json").read_text())
    compile_once(render_diff(diff_summaries(golden, golden), "latex"), tmp_path, "golden")
