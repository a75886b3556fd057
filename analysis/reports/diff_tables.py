"""Text, HTML and LaTeX tables of a diff (analysis.diff.diff_summaries).

Rows are the *after* summary's pairs. Cells are coloured by their verdict:
green better, red worse, yellow different (text output names the verdict).
Numeric cells carry the change from before (``δ=``), variation cells what
the before interval was (``was:``).
"""

from __future__ import annotations

from html import escape as html_escape

from ..diff import (BETTER, CLASSIFICATIONS, DIFFERENT, INTERSECTION, STEADY_ITER, STEADY_ITER_VAR,
                    STEADY_STATE_TIME, STEADY_STATE_TIME_VAR, VERDICT_NAMES, WORSE)
from . import formats, html, latex
from .rows import SummaryRow, class_phrase, summary_rows
from .text import aligned

FORMATS = ("text", "html", "latex")
TITLE = "Diff against previous results"
HEADERS = ("Benchmark", "VM", "Class.", "Steady iter (#)", "Steady iter variation",
           "Steady iter (s)", "Steady perf (s)", "Steady perf variation")
# Which verdict slot colours which column.
COLUMN_SLOTS = (INTERSECTION, None, CLASSIFICATIONS, STEADY_ITER, STEADY_ITER_VAR, STEADY_ITER,
                STEADY_STATE_TIME, STEADY_STATE_TIME_VAR)
CSS = {BETTER: "better", WORSE: "worse", DIFFERENT: "different"}
TEX_COLOURS = {BETTER: "lightgreen", WORSE: "lightred", DIFFERENT: "lightyellow"}


def _signed(x: float, fmt: str) -> str:
    """'+0.5' / '-0.5'; a change that rounds to zero is '+0...' (never '-0')."""
    text = fmt % abs(x)
    return ("-" if x < 0 and float(text) != 0 else "+") + text


def diff_cells(row: SummaryRow, before: SummaryRow | None) -> list[str]:
    """Plain-text content of each column (before may be missing)."""
    it = formats.steady_iter(row.steady_iter)
    it_var = formats.BLANK
    perf = formats.steady_perf(row.steady_perf, row.steady_perf_ci)
    perf_var = formats.BLANK
    if before is not None:
        if row.steady_iter and before.steady_iter:
            it += " δ=" + _signed(row.steady_iter.median - before.steady_iter.median, "%.1f")
        if before.steady_iter:
            it_var = "was: (%.1f, %.1f)" % (before.steady_iter.low, before.steady_iter.high)
        if row.steady_perf is not None and before.steady_perf is not None:
            perf += " δ=" + _signed(row.steady_perf - before.steady_perf, "%.5f")
        if before.steady_perf_ci is not None:
            perf_var = "was: ±%.6f" % before.steady_perf_ci
    return [row.bench, row.vm, class_phrase(row), it, it_var,
            formats.steady_time_to_reach(row.steady_time_to_reach), perf, perf_var]


def _pairs(diff: dict):
    """(after row, before row or None, verdicts or None) for every after pair."""
    before_rows = {(r.vm, r.bench): r for r in summary_rows(diff["before"])}
    verdicts = diff.get("diff") or {}
    for row in summary_rows(diff["after"]):
        yield row, before_rows.get((row.vm, row.bench)), verdicts.get(row.vm, {}).get(row.bench)


def _skipped_note(diff: dict) -> list[str]:
    notes = []
    only_before, only_after = (diff.get("skipped") or [[], []])[:2]
    if only_before:
        notes.append("Only in before (not compared): " + ", ".join(only_before))
    if only_after:
        notes.append("Only in after (not compared): " + ", ".join(only_after))
    return notes


def _text(diff: dict) -> str:
    table = [list(HEADERS) + ["Verdict"]]
    for row, before, v in _pairs(diff):
        cells = diff_cells(row, before)
        if v is not None:
            for i, slot in enumerate(COLUMN_SLOTS):
                if slot is not None and slot != INTERSECTION and v[slot] in CSS:
                    cells[i] += f" [{VERDICT_NAMES[v[slot]]}]"
            cells.append(VERDICT_NAMES[v[INTERSECTION]])
        else:
            cells.append("not compared")
        table.append(cells)
    lines = [TITLE, ""] + aligned(table)
    notes = _skipped_note(diff)
    if notes:
        lines += [""] + notes
    return "\n".join(lines) + "\n"


def _html(diff: dict) -> str:
    columns = tuple((f"c{i}", title, "num" if i >= 3 else "") for i, title in enumerate(HEADERS))
    pairs = list(_pairs(diff))
    by_row = {id(row): (before, v) for row, before, v in pairs}

    def cells(row: SummaryRow) -> dict[str, str]:
        before, _ = by_row[id(row)]
        content = {f"c{i}": html_escape(c) for i, c in enumerate(diff_cells(row, before))}
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
              '<span class="different">&nbsp;different&nbsp;</span>; uncoloured cells are unchanged.</p>\n'
              '<style>span.better{background:#c0f2c0} span.worse{background:#ffc0c0} '
              'span.different{background:#ffff99}</style>\n')
    body = legend + html.table([r for r, _, _ in pairs], cells=cells, columns=columns, cell_classes=classes)
    for note in _skipped_note(diff):
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
        plain = diff_cells(row, before)
        out = [latex.escape(c).replace("δ=", r"$\delta$=").replace("±", r"$\pm$") for c in plain]
        out[1] = vm_cell
        out[2] = latex.class_cell(row)
        for i in (3, 4, 5, 6, 7):
            out[i] = out[i].replace(formats.BLANK, "--") if out[i] == formats.BLANK else out[i]
        if v is not None:
            out = [_tex_cell(c, v[slot]) if slot is not None else c for c, slot in zip(out, COLUMN_SLOTS)]
        return out

    header = " & ".join(latex.escape(h) for h in HEADERS) + r"\\"
    legend = (r"\noindent\textbf{%s:} \ccell{lightgreen}{improved} \ccell{lightred}{worsened} "
              r"\ccell{lightyellow}{different}; uncoloured cells are unchanged." "\n\n" % TITLE)
    body = legend + latex.longtable([r for r, _, _ in pairs], cells=cells, spec="llllllll", header=header)
    for note in _skipped_note(diff):
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
