"""Text, LaTeX and HTML summary tables (analysis.reports) from warmup_stats'
own summary of the golden corpus."""

import json
import re

import pytest

from analysis.reports import SummaryFormatError, render_html, render_latex, render_text, summary_rows
from analysis.reports.html import EmbeddedPlot
from analysis.reports.rows import counts_phrase, histogram

from latex_checks import compile_once
from shared_paths import GOLDEN as SHARED_GOLDEN
GOLDEN = SHARED_GOLDEN / "warmup_stats" / "corpus_500"


@pytest.fixture(scope="module")
def summary() -> dict:
    return json.loads((GOLDEN / "summary.json").read_text())


def pairs(summary):
    for machine, vms in summary["machines"].items():
        for vm, benches in vms.items():
            for bench, data in benches.items():
                yield machine, vm, bench, data


UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
NUM = r"(\d[\d.]*(?:e[-+]\d+)?)"
PERF = re.compile(NUM + " ± " + NUM + " (s|ms|µs|ns)")
REACH = re.compile(NUM + r" \(" + NUM + ", " + NUM + r"\) (s|ms|µs|ns)")


def close(shown: str, unit: str, value: float, digits: int) -> bool:
    """A number shown in `unit` is `value` to `digits` significant digits."""
    seconds = float(shown) * UNIT_SECONDS[unit]
    return abs(seconds - value) <= 0.5001 * 10 ** (1 - digits) * abs(value)


def assert_times(row: str, d: dict) -> None:
    """The row shows the pair's steady times in a scaled unit, 4 (2 for the half-width) significant digits."""
    if d["steady_state_time_to_reach_secs"] is not None:
        m = REACH.search(row)
        assert m, row
        for shown, value in zip(m.groups()[:3], [d["steady_state_time_to_reach_secs"]] + d["steady_state_time_to_reach_secs_iqr"]):
            assert close(shown, m.group(4), value, 4), (shown, value)
    if d["steady_state_time"] is not None:
        m = PERF.search(row)
        assert m, row
        assert close(m.group(1), m.group(3), d["steady_state_time"], 4)
        assert close(m.group(2), m.group(3), d["steady_state_time_ci"], 2)
    else:
        assert "±" not in row


def line_of(text: str, bench: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.startswith(bench + " ")]
    assert len(lines) == 1, f"expected one row for {bench}"
    return lines[0]


# --- rows ---------------------------------------------------------------

def test_rows_cover_every_pair_sorted(summary):
    rows = summary_rows(summary)
    assert [(r.vm, r.bench) for r in rows] == sorted((vm, b) for _, vm, b, _ in pairs(summary))
    assert len(rows) == 7


def test_counts_sorted_by_frequency_then_name():
    assert counts_phrase({"flat": 1, "warmup": 5, "slowdown": 3, "no steady state": 0}) == \
        "5 warmup, 3 slowdown, 1 flat"
    assert counts_phrase({"flat": 4, "warmup": 4, "slowdown": 0, "no steady state": 0}) == "4 flat, 4 warmup"


def test_histogram_bins_and_median_bin():
    counts, median_bin = histogram([1, 1, 1, 2, 10, 100])
    assert sum(counts) == 6 and len(counts) == 10
    assert counts[0] == 5 and counts[9] == 1
    assert median_bin == 0
    assert histogram([7, 7, 7]) == ([3] + [0] * 9, 0)
    assert histogram([]) == ([], None)


@pytest.mark.parametrize("bad,needle", [
    ({}, "machines"),
    ({"machines": {"m": {"v": {"b": {"classification": "odd"}}}}}, "machines.m.v.b.classification"),
    ({"machines": {"m": {"v": {"b": {"classification": "flat"}}}}}, "detailed_classification"),
    ({"machines": {"m": {"v": {"b": {"classification": "warmup", "detailed_classification": {"warmup": 2},
                                      "steady_state_iteration": 3.0, "steady_state_iteration_iqr": 5}}}}},
     "steady_state_iteration_iqr"),
])
def test_bad_summary_is_reported_with_its_field(bad, needle):
    with pytest.raises(SummaryFormatError, match=re.escape(needle)):
        render_text(bad)


# --- text ---------------------------------------------------------------

def test_text_has_every_row_with_scaled_units(summary):
    """Issue 28 (7): times in a unit scaled to the value with fixed significant digits (the paper's fixed
    5 decimals of seconds printed a sub-microsecond benchmark as 0.00000); iterations keep one decimal."""
    text = render_text(summary)
    assert "Machine: oraclebox" in text
    for _, vm, bench, d in pairs(summary):
        row = line_of(text, bench)
        assert vm in row
        if d["steady_state_iteration"] is not None:
            lo, hi = d["steady_state_iteration_iqr"]
            assert "%.1f (%.1f, %.1f)" % (d["steady_state_iteration"], lo, hi) in row
        assert_times(row, d)


def test_text_classes_and_inconsistent_counts(summary):
    text = render_text(summary)
    assert "good inconsistent (4 flat, 4 warmup)" in line_of(text, "binarytrees")
    assert "bad inconsistent (3 slowdown, 3 warmup, 2 no steady state)" in line_of(text, "fasta")
    assert "no steady state" in line_of(text, "json_parse")
    assert "15.5 (1.0, 200.4)" in line_of(text, "binarytrees")
    assert "429.8 ± 3.4 ms" in line_of(text, "binarytrees")
    # A flat pair has no steady iteration: blank cells, but a steady perf.
    flat = line_of(text, "fannkuch_redux")
    assert re.search(r"flat\s+-\s+-\s+93\.23 ± 0\.61 ms", flat)


# --- LaTeX --------------------------------------------------------------

MACROS = ("flatc", "warmup", "slowdown", "nosteadystate", "goodinconsistent", "badinconsistent")


def test_latex_preamble_defines_every_class_macro(summary):
    tex = render_latex(summary)
    assert tex.startswith("% One pdflatex pass suffices") and "\n\\documentclass" in tex
    for m in MACROS:
        assert r"\newcommand{\%s}" % m in tex
    assert r"\begin{longtable}" in tex and tex.rstrip().endswith(r"\end{document}")
    for heading in (r"Class.", r"Steady iter (\#)", "Steady iter (time)", "Steady perf (time)"):
        assert heading in tex


def test_latex_rows_formats_and_classes(summary):
    tex = render_latex(summary)
    lines = {ln.split(" & ")[0].replace(r"\allowbreak{}", ""): ln for ln in tex.splitlines()
             if " & " in ln and ln.endswith(r"\\")}
    assert r"fannkuch\_redux" in lines  # escaped
    macro = {"flat": r"\flatc", "warmup": r"\warmup", "slowdown": r"\slowdown",
             "no steady state": r"\nosteadystate", "good inconsistent": r"\goodinconsistent",
             "bad inconsistent": r"\badinconsistent"}
    for _, vm, bench, d in pairs(summary):
        row = lines[bench.replace("_", r"\_")]
        cells = row.split(" & ")
        assert cells[2].startswith(macro[d["classification"]])
        if d["steady_state_iteration"] is not None:
            lo, hi = d["steady_state_iteration_iqr"]
            assert r"%.1f {\scriptsize(%.1f, %.1f)}" % (d["steady_state_iteration"], lo, hi) in cells[3]
            assert r"\begin{picture}" in cells[3]  # the sparkline
            assert_times(cells[4].replace(r" {\scriptsize(", " (").replace(")}~", ") "), d | {"steady_state_time": None})
        else:
            assert cells[3] == "--"
        if d["steady_state_time"] is not None:
            plain = cells[5].replace("$", "").replace(r" {\scriptsize\pm ", " ± ").replace("}~", " ")
            assert_times(plain.replace(r"\mu s", "µs"), d | {"steady_state_time_to_reach_secs": None})
    fasta = lines["fasta"].split(" & ")[2]
    assert fasta == r"\badinconsistent \scriptsize($3$\,\slowdown, $3$\,\warmup, $2$\,\nosteadystate)"
    # The VM is named once per group.
    assert sum(r"\textbf{Graal}" in ln for ln in lines.values()) == 1


def test_latex_sparkline_marks_median_bin_red(summary):
    tex = render_latex(summary)
    row = next(ln for ln in tex.splitlines() if ln.startswith("binarytrees &"))
    assert row.count(r"\color{red}") == 1


def test_latex_without_preamble_is_only_tables(summary):
    tex = render_latex(summary, with_preamble=False)
    assert r"\documentclass" not in tex and r"\begin{longtable}" in tex


def test_latex_compiles_in_one_pass_within_a_papers_text_width(summary, tmp_path):
    """Issue 28 (11, 12): no overfull box at the preamble's A4 text width, and no second pass."""
    compile_once(render_latex(summary), tmp_path, "table")


def test_long_names_fit_a_narrow_column(tmp_path):
    """Issue 28 (11): 'spectralnorm' ran 0.8 pt out of its column in the demo's table (one word, unbroken)."""
    row = {"classification": "flat", "detailed_classification": {"flat": 2},
           "steady_state_iteration": None, "steady_state_iteration_iqr": None,
           "steady_state_time_to_reach_secs": None, "steady_state_time_to_reach_secs_iqr": None,
           "steady_state_time": 0.01314, "steady_state_time_ci": 0.0032}
    s = {"machines": {"m": {"c": {"spectralnorm": row, "averyveryverylongbenchmarkname": row}}}}
    compile_once(render_latex(s), tmp_path, "names")


def test_a_sub_microsecond_time_is_legible_everywhere():
    """Issue 28 (7): 3.12e-7 ± 1.9e-5 s was '0.00000 ± 0.000019'."""
    s = {"machines": {"m": {"v": {"tiny": {
        "classification": "flat", "detailed_classification": {"flat": 2},
        "steady_state_iteration": None, "steady_state_iteration_iqr": None,
        "steady_state_time_to_reach_secs": None, "steady_state_time_to_reach_secs_iqr": None,
        "steady_state_time": 3.12e-7, "steady_state_time_ci": 1.9e-5}}}}}
    assert "0.3120 ± 19 µs" in render_text(s)
    assert "0.3120 ± 19 µs" in render_html(s)
    assert r"$0.3120$ {\scriptsize$\pm 19$}~$\mu$s" in render_latex(s)


# --- HTML ---------------------------------------------------------------

def test_html_is_self_contained(summary):
    page = render_html(summary, [EmbeddedPlot("oraclebox", "richards", "Graal", 0, b"\x89PNG\r\n\x1a\nfake")])
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert not re.search(r"(src|href)\s*=\s*[\"']?https?://", page, re.I)
    assert "<link" not in page.lower()
    assert "<style>" in page


def test_html_rows_histograms_and_plots(summary):
    import base64
    png = b"\x89PNG\r\n\x1a\n-not-really-a-png-"
    page = render_html(summary, [EmbeddedPlot("oraclebox", "deltablue", "Graal", 3, png)])
    for _, vm, bench, d in pairs(summary):
        m = re.search(r'<tr id="%s-%s">(.*?)</tr>' % (bench, vm), page)
        assert m, bench
        row = m.group(1)
        if d["steady_state_iteration"] is not None:
            assert '<svg class="hist"' in row
            assert "%.1f" % d["steady_state_iteration"] in row
        else:
            assert '<svg class="hist"' not in row
        assert_times(re.sub(r"<[^>]+>", "", row), d)
    assert "data:image/png;base64," + base64.b64encode(png).decode() in page
    assert "deltablue, Graal, oraclebox, Proc. exec. #4" in page
    assert "good inconsistent (4 flat, 4 warmup)" in page


def test_html_escapes_names():
    s = {"machines": {"m<1>": {"vm&x": {"b<script>": {
        "classification": "flat", "detailed_classification": {"flat": 2},
        "steady_state_iteration": None, "steady_state_iteration_iqr": None,
        "steady_state_time_to_reach_secs": None, "steady_state_time_to_reach_secs_iqr": None,
        "steady_state_time": 1.0, "steady_state_time_ci": 0.1}}}}}
    page = render_html(s)
    assert "<script>" not in page and "b&lt;script&gt;" in page
