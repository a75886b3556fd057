"""Text, HTML and LaTeX tables of a diff (analysis.diff.diff_summaries).

Rows are the *after* summary's pairs. The change in steady perf time and
the change in its CI width are separate columns, each with its own word
(faster/slower, CI narrower/wider), and the verdict names what made it
better or worse, so "better" never reads as "faster" when only the interval
narrowed. Coloured cells (HTML, LaTeX): green better, red worse, yellow
different.
"""

from __future__ import annotations

from html import escape as html_escape

from analysis.summary_json import SummaryRow, bootstrap_settings, summary_rows

from ..diff import (BETTER, CLASSIFICATIONS, DIFFERENT, INTERSECTION, STEADY_ITER, STEADY_ITER_VAR,
                    STEADY_STATE_TIME, STEADY_STATE_TIME_VAR, VERDICT_NAMES, WORSE)
from . import formats, html, latex
from .rows import class_phrase
from .text import aligned

FORMATS = ("text", "html", "latex")
TITLE = "Diff against previous results"
HEADERS = ("Benchmark", "VM", "Class.", "Steady iter (#)", "Δ steady iter (#)", "Steady iter range was",
           "Steady iter (s)", "Steady perf (s)", "Δ time (s)", "Δ CI (s)", "Verdict")
# Which verdict slot colours which column.
COLUMN_SLOTS = (INTERSECTION, None, CLASSIFICATIONS, STEADY_ITER, STEADY_ITER, STEADY_ITER_VAR, STEADY_ITER,
                None, STEADY_STATE_TIME, STEADY_STATE_TIME_VAR, INTERSECTION)
# The columns that name their slot's verdict in words (the rest show values).
WORDED_COLUMNS = (2, 4, 5, 8, 9)
# What a verdict means for each slot: the cells' words, and the reasons the
# Verdict column gives for a better/worse/different pair.
SLOT_WORDS = {
    CLASSIFICATIONS: {BETTER: "classes better", WORSE: "classes worse", DIFFERENT: "classes differ"},
    STEADY_ITER: {BETTER: "steady sooner", WORSE: "steady later", DIFFERENT: "steady iter not comparable"},
    STEADY_ITER_VAR: {BETTER: "range narrower", WORSE: "range wider", DIFFERENT: "range not comparable"},
    STEADY_STATE_TIME: {BETTER: "faster", WORSE: "slower", DIFFERENT: "time not comparable"},
    STEADY_STATE_TIME_VAR: {BETTER: "CI narrower", WORSE: "CI wider", DIFFERENT: "CI not comparable"},
}
CSS = {BETTER: "better", WORSE: "worse", DIFFERENT: "different"}
TEX_COLOURS = {BETTER: "lightgreen", WORSE: "lightred", DIFFERENT: "lightyellow"}
EXPLANATION = ("Δ time is the change in the steady perf median, Δ CI the change in the half-width of its "
               "interval: a narrower interval is not a faster time.")


def verdict_phrase(verdicts: list | None) -> str:
    """'better (CI narrower)': the overall verdict and the slots behind it."""
    if verdicts is None:
        return "not compared"
    reasons = [SLOT_WORDS[slot][verdicts[slot]] for slot in SLOT_WORDS if verdicts[slot] in CSS]
    overall = VERDICT_NAMES[verdicts[INTERSECTION]]
    return f"{overall} ({', '.join(reasons)})" if reasons else overall


def _change(after: float | None, before: float | None, decimals: int) -> str:
    if after is None or before is None:
        return formats.BLANK
    return formats.signed(after - before, decimals)


def diff_cells(row: SummaryRow, before: SummaryRow | None, verdicts: list | None = None) -> list[str]:
    """Plain-text content of each column (before and verdicts may be missing)."""
    it_change = range_was = perf_change = ci_change = formats.BLANK
    if before is not None:
        if row.steady_iter and before.steady_iter:
            it_change = formats.signed(row.steady_iter.median - before.steady_iter.median, formats.ITER_DECIMALS)
        if before.steady_iter:
            range_was = "(%s, %s)" % formats.steady_iter_parts(before.steady_iter)[1:]
        perf_change = _change(row.steady_perf, before.steady_perf, formats.PERF_DECIMALS)
        ci_change = _change(row.steady_perf_ci, before.steady_perf_ci, formats.PERF_CI_DECIMALS)
    cells = [row.bench, row.vm, class_phrase(row), formats.steady_iter(row.steady_iter), it_change, range_was,
             formats.steady_time_to_reach(row.steady_time_to_reach),
             formats.steady_perf(row.steady_perf, row.steady_perf_ci), perf_change, ci_change,
             verdict_phrase(verdicts)]
    if verdicts is not None:
        for i in WORDED_COLUMNS:
            word = SLOT_WORDS[COLUMN_SLOTS[i]].get(verdicts[COLUMN_SLOTS[i]])
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
    """Pairs not compared, then how each side's steady perf was bootstrapped (the seeds)."""
    notes = []
    only_before, only_after = (diff.get("skipped") or [[], []])[:2]
    if only_before:
        notes.append("Only in before (not compared): " + ", ".join(only_before))
    if only_after:
        notes.append("Only in after (not compared): " + ", ".join(only_after))
    for side in ("before", "after"):
        notes.append(f"{side.capitalize()}: " + formats.bootstrap_note(bootstrap_settings(diff[side])))
    return notes


def _text(diff: dict) -> str:
    table = [list(HEADERS)] + [diff_cells(row, before, v) for row, before, v in _pairs(diff)]
    return "\n".join([TITLE, "", EXPLANATION, ""] + aligned(table) + [""] + _notes(diff)) + "\n"


def _html(diff: dict) -> str:
    columns = tuple((f"c{i}", title, "num" if 3 <= i < len(HEADERS) - 1 else "") for i, title in enumerate(HEADERS))
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

    legend = ('<p>Cells: <span class="better">&nbsp;better&nbsp;</span> '
              '<span class="worse">&nbsp;worse&nbsp;</span> '
              '<span class="different">&nbsp;different&nbsp;</span>; uncoloured cells are unchanged. '
              f'{html_escape(EXPLANATION)}</p>\n'
              '<style>span.better{background:#c0f2c0} span.worse{background:#ffc0c0} '
              'span.different{background:#ffff99}</style>\n')
    body = legend + html.table([r for r, _, _ in pairs], cells=cells, columns=columns, cell_classes=classes)
    for note in _notes(diff):
        body += f"<p>{html_escape(note)}</p>\n"
    return html.page(TITLE, body)


def _tex(text: str) -> str:
    """Escaped, with the two non-ASCII signs the cells use in math mode."""
    return latex.escape(text).replace("Δ", r"$\Delta$").replace("±", r"$\pm$")


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
        out = ["--" if c == formats.BLANK else _tex(c) for c in plain]
        out[1] = vm_cell
        word = SLOT_WORDS[CLASSIFICATIONS].get(v[CLASSIFICATIONS]) if v is not None else None
        out[2] = latex.class_cell(row) + (f" {word}" if word else "")
        if v is not None:
            out = [_tex_cell(c, v[slot]) if slot is not None else c for c, slot in zip(out, COLUMN_SLOTS)]
        return out

    header = " & ".join(_tex(h) for h in HEADERS) + r"\\"
    legend = (r"\noindent\textbf{%s:} \ccell{lightgreen}{improved} \ccell{lightred}{worsened} "
              r"\ccell{lightyellow}{different}; uncoloured cells are unchanged. %s" "\n\n"
              % (TITLE, _tex(EXPLANATION)))
    body = legend + latex.longtable([r for r, _, _ in pairs], cells=cells, spec="l" * len(HEADERS), header=header)
    for note in _notes(diff):
        body += "\n" + _tex(note) + "\n"
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
