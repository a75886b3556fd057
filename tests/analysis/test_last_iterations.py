"""Issue 39 item 3: where the summary table has no steady perf ("-"), it shows the mean of the executions'
last iterations, marked as not a steady state, in every format (analysis.last_iterations)."""

from __future__ import annotations

import json
import math

from analysis import classify, summary, summary_json
from analysis.execution_states import COMPLETED
from analysis.key_results import AnnotatedResults, Classifier, ExecutionAnnotation, KeyAnnotation, SummarySettings
from analysis.last_iterations import last_iterations
from analysis.reports import render_html, render_latex, render_text
from analysis.reports.machine_columns import render_columns

from latex_checks import compile_once

NO_STEADY = "b:vm:default-c"
STEADY = "a:vm:default-c"
# Each execution's last 2 iterations (steady = 2); execution 2's last iteration (index 3) is an outlier.
TIMES = {NO_STEADY: [[5.0, 5.0, 1.0, 2.0], [9.0, 9.0, 3.0, 4.0], [1.0, 1.0, 2.0, 2.0], [7.0, 7.0, 7.0, 7.0]],
         STEADY: [[1.0, 1.1, 0.9, 1.0], [1.0, 1.0, 1.1, 0.9]]}
T_995_2 = 9.924843200918276   # t(0.995, 2 degrees of freedom), from a table


def _flat(series, outliers=()):
    return ExecutionAnnotation(list(outliers), [], [sum(series) / len(series)], [0.01], classify.FLAT)


def _annotated() -> AnnotatedResults:
    nss = ExecutionAnnotation([], [1], [5.0, 1.5], [0.0, 0.5], classify.NO_STEADY_STATE)
    b = TIMES[NO_STEADY]
    executions = [nss, _flat(b[1], outliers=[3]), _flat(b[2]),
                  ExecutionAnnotation([], [], [], [], None)]   # not classified: left out
    return AnnotatedResults(
        times=TIMES, states={k: [COMPLETED] * len(v) for k, v in TIMES.items()},
        classifier=Classifier(window=1, steady=2, delta="0.001"),
        annotations={NO_STEADY: KeyAnnotation(executions, [], []),
                     STEADY: KeyAnnotation([_flat(s) for s in TIMES[STEADY]], [], [])})


def _summary() -> dict:
    done = summary.summarise_annotated({"box": _annotated()}, SummarySettings(200, 1, "0.99"), warn=lambda _: None)
    return summary_json.summary_document(done)


def test_the_figure_is_the_hand_computed_mean_and_t_interval():
    # Last 2 iterations, outliers left out: [1, 2] -> 1.5; [3] (4 is an outlier) -> 3; [2, 2] -> 2.
    means = [1.5, 3.0, 2.0]
    mean = sum(means) / 3
    sd = math.sqrt(sum((m - mean) ** 2 for m in means) / 2)
    li = last_iterations(TIMES[NO_STEADY], _annotated().annotations[NO_STEADY], 2, "0.99")
    assert (li.executions, li.iterations, li.confidence) == (3, 2, "0.99")
    assert math.isclose(li.mean, 13 / 6, rel_tol=1e-12)
    assert math.isclose(li.half_width, T_995_2 * sd / math.sqrt(3), rel_tol=1e-9)   # 4.376...


def test_one_execution_has_no_interval():
    one = KeyAnnotation([_flat([1.0, 2.0, 4.0])], [], [])
    li = last_iterations([[1.0, 2.0, 4.0]], one, 2, "0.99")
    assert (li.mean, li.half_width, li.executions) == (3.0, None, 1)


def test_json_keeps_warmup_stats_entries_and_adds_its_own_table():
    doc = _summary()
    entry = doc["machines"]["box"]["vm"]["b"]
    assert entry["steady_state_time"] is None and "last_iterations" not in entry
    table = doc[summary_json.LAST_ITERATIONS_KEY]
    assert list(table["box"]["vm"]) == ["b"]   # the steady key has its steady perf, no figure
    assert math.isclose(table["box"]["vm"]["b"]["mean"], 13 / 6)
    # Read back from the JSON (a table made from a summary file) it is the same figure.
    again = summary_json.summary_rows(json.loads(json.dumps(doc)))
    assert [r.last_iterations is not None for r in again] == [False, True]


def test_every_format_shows_the_marked_figure_and_leaves_the_steady_key_alone(tmp_path):
    doc = _summary()
    steady = summary_json.summary_rows(doc)[0]
    assert steady.steady_perf is not None
    text = render_text(doc)
    row_b = next(ln for ln in text.splitlines() if ln.startswith("b "))
    row_a = next(ln for ln in text.splitlines() if ln.startswith("a "))
    assert row_b.rstrip().endswith("≈2.167 ± 4.4 s (last 2)")
    assert "≈" not in row_a and "last" not in row_a
    assert "NOT a steady state" in text and "last N iterations" in text
    assert "≈2.167 ± 4.4 s (last 2)" in render_columns(doc)
    html = render_html(doc)
    assert "last 2 iterations\">≈2.167 ± 4.4 s (last 2)</span></td>" in html
    assert html.count("≈") == 2   # the cell and the legend line
    latex = render_latex(doc)
    assert r"$\approx 2.167$ {\scriptsize$\pm 4.4$}~s {\scriptsize(last 2)}" in latex
    assert r"$\approx$mean" in latex and "≈" not in latex
    compile_once(latex, tmp_path)   # one pdflatex pass, within the page
    # Without the figure's table (warmup_stats' summary) the row is "-" as before.
    del doc[summary_json.LAST_ITERATIONS_KEY]
    assert "≈" not in render_text(doc) and "NOT a steady state" not in render_html(doc)
