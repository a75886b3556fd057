"""Text, HTML and LaTeX tables of a diff (analysis.diff.diff_summaries).

Rows are the *after* summary's pairs. The verdict is about time alone,
decided by the steady perf intervals (faster / slower when they are apart,
same when they overlap); the change in the interval's width is its own
column with its own words (CI narrower / wider), so a narrower interval never
reads as a faster time. Other columns are coloured by their own slot of
warmup_stats' verdict vector (unchanged in the JSON). One colour key in every
format: green better, red worse, yellow different or not comparable.
"""

from __future__ import annotations

from html import escape as html_escape

from analysis.summary_json import SummaryRow, bootstrap_settings, classifier_deltas, summary_rows

from ..diff import (BETTER, CLASSIFICATIONS, DIFFERENT, SAME, STEADY_ITER, STEADY_ITER_VAR, STEADY_STATE_TIME,
                    STEADY_STATE_TIME_VAR, WORSE)
from . import formats, html, latex
from .provenance import equivalence_note
from .rows import class_phrase
from .text import aligned

FORMATS = ("text", "html", "latex")
TITLE = "Diff against previous results"
HEADERS = ("Benchmark", "VM", "Class.", "Steady iter (#)", "Δ steady iter (#)", "Steady iter (time)",
           "Steady perf (time)", "Δ time", "Δ CI", "Verdict (time)")
VERDICT_COLUMN = len(HEADERS) - 1
# Which verdict slot colours which column (the verdict: the time's).
COLUMN_SLOTS = (STEADY_STATE_TIME, None, CLASSIFICATIONS, STEADY_ITER, STEADY_ITER, STEADY_ITER,
                None, STEADY_STATE_TIME, STEADY_STATE_TIME_VAR, STEADY_STATE_TIME)
# The columns that name their slot's verdict in words (the rest show values).
WORDED_COLUMNS = (2, 4, 7, 8)
SLOT_WORDS = {
    CLASSIFICATIONS: {BETTER: "classes better", WORSE: "classes worse", DIFFERENT: "classes differ"},
    STEADY_ITER: {BETTER: "steady sooner", WORSE: "steady later", DIFFERENT: "steady iter not comparable"},
    STEADY_ITER_VAR: {BETTER: "range narrower", WORSE: "range wider", DIFFERENT: "range not comparable"},
    STEADY_STATE_TIME: {BETTER: "faster", WORSE: "slower", DIFFERENT: "time not comparable"},
    STEADY_STATE_TIME_VAR: {BETTER: "CI narrower", WORSE: "CI wider", DIFFERENT: "CI not comparable"},
}
CSS = {BETTER: "better", WORSE: "worse", DIFFERENT: "different"}
TEX_COLOURS = {BETTER: "lightgreen", WORSE: "lightred", DIFFERENT: "lightyellow"}
# The colour key, worded alike in HTML and LaTeX.
KEY = (("better", "better"), ("worse", "worse"), ("different", "different or not comparable"))
EXPLANATION = ("Verdict (time): faster or slower when the steady perf intervals (median ± half-width) of "
               "before and after do not overlap, same when they do. Δ time is the change in the steady perf "
               "median, Δ CI the change in the half-width of its interval: a narrower interval is not a "
               "faster time.")


def time_verdict(row: SummaryRow, before: SummaryRow | None, verdicts: list | None) -> str:
    """The verdict on time alone (module doc)."""
    if before is None or verdicts is None:
        return "not compared"
    if row.steady_perf is None and before.steady_perf is None:
        return "no data (no steady perf before or after)"
    if row.steady_perf is None or before.steady_perf is None:
        return "not comparable (no steady perf " + ("after)" if row.steady_perf is None else "before)")
    slot = verdicts[STEADY_STATE_TIME]
    if slot in (BETTER, WORSE):
        return ("faster" if slot == BETTER else "slower") + " (intervals apart)"
    if slot == SAME:
        return "same (intervals overlap)"
    return "not comparable"


def diff_cells(row: SummaryRow, before: SummaryRow | None, verdicts: list | None = None) -> list[str]:
    """Plain-text content of each column (before and verdicts may be missing)."""
    it_change = perf_change = ci_change = formats.BLANK
    if before is not None:
        if row.steady_iter and before.steady_iter:
            it_change = formats.signed(row.steady_iter.median - before.steady_iter.median, formats.ITER_DECIMALS)
        if before.steady_iter:
            it_change += " (was %s, range %s-%s)" % formats.steady_iter_parts(before.steady_iter)
        if row.steady_perf is not None and before.steady_perf is not None:
            perf_change = formats.signed_duration(row.steady_perf - before.steady_perf)
        if row.steady_perf_ci is not None and before.steady_perf_ci is not None:
            ci_change = formats.signed_duration(row.steady_perf_ci - before.steady_perf_ci, formats.SPREAD_DIGITS)
    cells = [row.bench, row.vm, class_phrase(row), formats.steady_iter(row.steady_iter), it_change,
             formats.steady_time_to_reach(row.steady_time_to_reach),
             formats.steady_perf(row.steady_perf, row.steady_perf_ci), perf_change, ci_change,
             time_verdict(row, before, verdicts)]
    if verdicts is not None:
        for i in WORDED_COLUMNS:
            slot = COLUMN_SLOTS[i]
            assert slot is not None     # every worded column has a slot
            word = SLOT_WORDS[slot].get(verdicts[slot])
            if word:
                cells[i] += " " + word
    return cells


def _pairs(diff: dict):
    """(after row, before row or None, verdicts or None) for every after pair."""
    before_rows = {(r.vm, r.bench): r for r in summary_rows(diff["before"])}
    verdicts = diff.get("diff") or {}
    for row in summary_rows(diff["after"]):
        yield row, before_rows.get((row.vm, row.bench)), verdicts.get(row.vm, {}).get(row.bench)


def _notes(diff: dict) -> list[str]:
    """Pairs not compared, then how each side's steady perf was bootstrapped (the seeds), then the equivalence
    rule(s) of the classes."""
    notes = []
    only_before, only_after = (diff.get("skipped") or [[], []])[:2]
    if only_before:
        notes.append("Only in before (not compared): " + ", ".join(only_before))
    if only_after:
        notes.append("Only in after (not compared): " + ", ".join(only_after))
    for side in ("before", "after"):
        notes.append(f"{side.capitalize()}: " + formats.bootstrap_note(bootstrap_settings(diff[side])))
    notes.append(equivalence_note(classifier_deltas(diff["before"]) + classifier_deltas(diff["after"])))
    return notes


def _text(diff: dict) -> str:
    table = [list(HEADERS)] + [diff_cells(row, before, v) for row, before, v in _pairs(diff)]
    return "\n".join([TITLE, "", EXPLANATION, ""] + aligned(table) + [""] + _notes(diff)) + "\n"


def _html(diff: dict) -> str:
    columns = tuple((f"c{i}", title, "num" if 3 <= i < VERDICT_COLUMN else "") for i, title in enumerate(HEADERS))
    pairs = list(_pairs(diff))
    by_row = {id(row): (before, v) for row, before, v in pairs}

    def cells(row: SummaryRow) -> dict[str, str]:
        before, v = by_row[id(row)]
        content = {f"c{i}": html_escape(c) for i, c in enumerate(diff_cells(row, before, v))}
        content["c2"] = html.class_symbol(row.classification) + content["c2"]
        return content

    def classes(row: SummaryRow) -> dict[str, str]:
        _, v = by_row[id(row)]
        if v is None:
            return {}
        return {f"c{i}": CSS[v[slot]] for i, slot in enumerate(COLUMN_SLOTS)
                if slot is not None and v[slot] in CSS}

    key = " ".join(f'<span class="{css}">&nbsp;{words}&nbsp;</span>' for css, words in KEY)
    legend = (f'<p>Colours: {key}; uncoloured cells are unchanged. {html_escape(EXPLANATION)}</p>\n'
              '<style>span.better{background:#c0f2c0} span.worse{background:#ffc0c0} '
              'span.different{background:#ffff99}</style>\n')
    body = legend + html.table([r for r, _, _ in pairs], cells=cells, columns=columns, cell_classes=classes)
    for note in _notes(diff):
        body += f"<p>{html_escape(note)}</p>\n"
    return html.page(TITLE, body)


def _tex_cell(text: str, verdict) -> str:
    if verdict in TEX_COLOURS and text:
        return r"\ccell{%s}{%s}" % (TEX_COLOURS[verdict], text)
    return text


def _latex(diff: dict) -> str:
    pairs = list(_pairs(diff))
    by_row = {id(row): (before, v) for row, before, v in pairs}

    def cells(row: SummaryRow, vm_cell: str) -> list[str]:
        before, v = by_row[id(row)]
        plain = diff_cells(row, before, v)
        out = ["--" if c == formats.BLANK else latex.escape(c) for c in plain]
        out[0], out[1] = latex.name(row.bench), vm_cell
        word = SLOT_WORDS[CLASSIFICATIONS].get(v[CLASSIFICATIONS]) if v is not None else None
        out[2] = latex.class_cell(row) + (f" {word}" if word else "")
        if v is not None:
            out = [_tex_cell(c, v[slot]) if slot is not None else c for c, slot in zip(out, COLUMN_SLOTS)]
        return out

    header = " & ".join(latex.escape(h) for h in HEADERS) + r"\\"
    # \colorbox, not \ccell: \cellcolor outside a table colours the table's first cell instead.
    key = " ".join(r"\colorbox{%s}{%s}" % (TEX_COLOURS[v], words)
                   for v, (_, words) in zip((BETTER, WORSE, DIFFERENT), KEY))
    legend = (r"\noindent\textbf{%s.} Colours: %s; uncoloured cells are unchanged. %s" "\n\n"
              % (TITLE, key, latex.escape(EXPLANATION)))
    # Ten columns at a paper's text width: small type, narrow gaps, wrapping cells.
    spec = latex.column_spec([0.1, 0.08, 0.13, 0.09, 0.12, 0.1, 0.11, 0.08, 0.08, 0.11], numeric={3, 4, 5, 6, 7, 8})
    table = latex.longtable([r for r, _, _ in pairs], cells=cells, spec=spec, header=header)
    body = legend + "{\\footnotesize\\setlength{\\tabcolsep}{2pt}\n" + table + "}\n"
    for note in _notes(diff):
        body += "\n" + latex.escape(note) + "\n"
    return latex.PREAMBLE + latex.SYMBOL_KEY + body + "\\end{document}\n"


def render_diff(diff: dict, fmt: str = "text") -> str:
    """Render a diff_summaries() result as 'text', 'html' or 'latex'."""
    if fmt == "text":
        return _text(diff)
    if fmt == "html":
        return _html(diff)
    if fmt == "latex":
        return _latex(diff)
    raise ValueError(f"unknown diff format {fmt!r} (choose from {', '.join(FORMATS)})")
