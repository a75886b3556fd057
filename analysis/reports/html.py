"""One self-contained HTML page: the summary table, a small steady-iteration
histogram per pair (inline SVG) and the run-sequence plots (base64 PNG).

Nothing is fetched from the network: CSS is inline, drawings are SVG, images
are data: URIs. (warmup_stats' HTML loaded Google Charts; this page does not.)
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from html import escape
from typing import Sequence

from analysis.execution_states import execution_number
from analysis.summary_json import PAIR_CLASSES, FailedRow, SummaryRow, bootstrap_settings

from . import formats
from .provenance import NOT_RECORDED, Provenance, coldrun_version
from .rows import FAILED_HEADERS, by_machine, class_phrase, failed_summary, histogram, last_note, perf_text


@dataclass(frozen=True)
class EmbeddedPlot:
    """One process execution's run-sequence plot (PNG) in the report."""

    machine: str
    bench: str
    vm: str
    pexec: int  # 0-based, as in the data
    png: bytes


def anchor(machine: str, bench: str, vm: str, pexec: int) -> str:
    """The id a table row links to for one execution: its plot, or its failed row."""
    return "exec-" + re.sub(r"[^A-Za-z0-9_.-]", "_", f"{machine}-{bench}-{vm}-{pexec + 1}")


def execution_caption(bench: str, vm: str, machine: str, pexec: int) -> str:
    """Names an execution as the plot titles do (analysis.plots)."""
    return f"{bench}, {vm}, {machine}, Proc. exec. {execution_number(pexec)}"

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border-bottom: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; vertical-align: middle; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.better { background: #c0f2c0; } td.worse { background: #ffc0c0; } td.different { background: #ffff99; }
.range { color: #666; font-size: 85%; }
.approx { font-style: italic; color: #555; }
svg.cls { vertical-align: middle; margin-right: 0.4em; }
svg.hist { vertical-align: middle; margin-right: 0.5em; }
div.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 1em; }
figure { margin: 0; }
figure img { width: 100%; border: 1px solid #ddd; }
figure.natural img { width: auto; max-width: 100%; }
figure.no-data div { border: 1px dashed #b00; color: #b00; padding: 1em; }
figcaption { font-size: 85%; color: #444; }
:target { outline: 3px solid #fc0; }
dl.about { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; margin: 0 0 1em 0; }
dl.about dt { font-weight: bold; } dl.about dd { margin: 0; }
ul.legend { list-style: none; padding: 0; columns: 3; } ul.legend li { margin: 0.2em 0; }
td.plots a { margin-right: 0.4em; }
"""

# Polylines 24x12 that echo the LaTeX class macros.
_CLASS_PATHS = {
    "flat": [("M0 6 L24 6", "#222")],
    "warmup": [("M0 1 Q3 11 10 11 L24 11", "#222")],
    "slowdown": [("M0 11 Q3 2 10 2 L24 2", "#222")],
    "no steady state": [("M0 11 L6 2 L12 11 L18 2 L24 11", "#222")],
    "good inconsistent": [("M0 1 Q3 10 10 10 L24 10", "#080"), ("M0 4 L24 4", "#080")],
    "bad inconsistent": [("M0 11 Q3 2 10 2 L24 2", "#b00"), ("M0 11 L6 5 L12 11 L18 5 L24 11", "#b00")],
}


def class_symbol(cls: str) -> str:
    paths = "".join(f'<path d="{d}" stroke="{c}" fill="none" stroke-width="1.5"/>'
                    for d, c in _CLASS_PATHS[cls])
    return (f'<svg class="cls" width="24" height="12" viewBox="0 0 24 12" role="img" '
            f'aria-label="{escape(cls)}">{paths}</svg>')


def histogram_svg(values: list[float], width: int = 60, height: int = 16) -> str:
    """Inline SVG bar chart of steady iterations; the median's bin is red."""
    counts, median_bin = histogram(values)
    if not counts or max(counts) == 0:
        return ""
    bar = width / len(counts)
    top = max(counts)
    bars = []
    for i, n in enumerate(counts):
        if n == 0:
            continue
        h = height * n / top
        colour = "#d00" if i == median_bin else "#555"
        bars.append(f'<rect x="{i * bar:.1f}" y="{height - h:.1f}" width="{bar * 0.8:.1f}" '
                    f'height="{h:.1f}" fill="{colour}"/>')
    title = f"steady iterations of {len(values)} process executions: {min(values):g} to {max(values):g}"
    return (f'<svg class="hist" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f'<title>{escape(title)}</title>{"".join(bars)}</svg>')


def _with_range(text: str) -> str:
    """'1.0 (2.0, 3.0)' -> the range in a lighter span."""
    if " (" not in text:
        return escape(text)
    head, tail = text.split(" (", 1)
    return f'{escape(head)} <span class="range">({escape(tail)}</span>'


def _perf(row: SummaryRow) -> str:
    """Steady perf; the figure of a key without one in italics, its meaning on hover (and under the table)."""
    if row.steady_perf is None and row.last_iterations is not None:
        return (f'<span class="approx" title="not a steady state: the mean of each execution\'s last '
                f'{row.last_iterations.iterations} iterations">{escape(perf_text(row))}</span>')
    return escape(perf_text(row))


def summary_cells(row: SummaryRow) -> dict[str, str]:
    """The HTML content of each column for one pair."""
    return {
        "bench": escape(row.bench),
        "vm": escape(row.vm),
        "class": class_symbol(row.classification) + escape(class_phrase(row)),
        "steady_iter": (histogram_svg(row.steady_iter_list) if row.steady_iter else "")
        + _with_range(formats.steady_iter(row.steady_iter)),
        "steady_time": _with_range(formats.steady_time_to_reach(row.steady_time_to_reach)),
        "steady_perf": _perf(row),
    }


COLUMNS = (("bench", "Benchmark", ""), ("vm", "VM", ""), ("class", "Class.", ""),
           ("steady_iter", "Steady iter (#)", "num"), ("steady_time", "Steady iter (time)", "num"),
           ("steady_perf", "Steady perf (time)", "num"))


def table(rows: list[SummaryRow], cells=summary_cells, columns=COLUMNS,
          cell_classes=None) -> str:
    """An HTML table; `cell_classes(row) -> {column: css class}` adds colouring."""
    head = "".join(f"<th>{escape(title)}</th>" for _, title, _ in columns)
    body = []
    for row in rows:
        content = cells(row)
        extra = cell_classes(row) if cell_classes else {}
        tds = []
        for name, _, css in columns:
            classes = " ".join(c for c in (css, extra.get(name, "")) if c)
            attr = f' class="{classes}"' if classes else ""
            tds.append(f"<td{attr}>{content[name]}</td>")
        body.append(f'<tr id="{escape(row.bench)}-{escape(row.vm)}">{"".join(tds)}</tr>')
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>\n"


FAILED_REASON_HEADER = "How it failed"


def failed_table(rows: list[FailedRow], reasons: dict[tuple[str, str, str, int], str] | None = None) -> str:
    """The process executions without data: counted, then one row each saying
    how it failed (the state, and the record's reason when the input has one)."""
    reasons = reasons or {}
    head = "".join(f"<th>{escape(title)}</th>" for title in FAILED_HEADERS + (FAILED_REASON_HEADER,))
    body = "\n".join(
        f'<tr class="no-data" id="{anchor(r.machine, r.bench, r.vm, r.index)}"><td>{escape(r.bench)}</td>'
        f'<td>{escape(r.vm)}</td><td class="num">{execution_number(r.index)}</td><td>{escape(r.label)}</td>'
        f'<td>{escape(reasons.get((r.machine, r.vm, r.bench, r.index), NOT_RECORDED))}</td></tr>'
        for r in rows)
    return (f"<p>{escape(failed_summary(rows))}.</p>\n<table>\n<thead><tr>{head}</tr></thead>\n"
            f"<tbody>\n{body}\n</tbody>\n</table>\n")


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n{body}</body>\n</html>\n")


def plots_section(plots: Sequence[EmbeddedPlot]) -> str:
    """The plots in a grid, each with the anchor its table row links to."""
    figures = []
    for p in sorted(plots, key=lambda p: (p.machine, p.bench, p.vm, p.pexec)):
        data = base64.b64encode(p.png).decode("ascii")
        caption = escape(execution_caption(p.bench, p.vm, p.machine, p.pexec))
        figures.append(f'<figure id="{anchor(p.machine, p.bench, p.vm, p.pexec)}"><img alt="{caption}" '
                       f'src="data:image/png;base64,{data}"><figcaption>{caption}</figcaption></figure>')
    return '<h2>Run-sequence plots</h2>\n<div class="plots">\n' + "\n".join(figures) + "\n</div>\n"


def bootstrap_footer(summary: dict) -> str:
    """How steady perf was bootstrapped (the seed), under the tables."""
    return "".join(f'<p class="bootstrap">{escape(line)}</p>\n'
                   for line in [formats.bootstrap_note(bootstrap_settings(summary))] + last_note(summary))


def _about(pairs: Sequence[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in pairs)
    return f'<dl class="about">{items}</dl>\n'


def provenance_section(provenances: Sequence[Provenance], parameters: Sequence[tuple[str, str]],
                       summary: dict) -> str:
    """What a reader needs to trust the numbers: software, machine, experiment,
    platform audit, environment differences and the analysis settings."""
    out = ['<section class="provenance">\n', _about([("coldrun (analysis)", coldrun_version())])]
    for p in provenances:
        out.append(f"<h3>Input: {escape(p.source)}</h3>\n")
        rows = [("Machine", p.machine), ("Kernel (uname)", p.kernel), ("Experiment", p.experiment),
                ("Executions ran", p.dates), ("coldrun (supervisor)", p.supervisor_versions)]
        if p.audit:
            rows += [(f"Audit: {k}", v) for k, v in p.audit]
        else:
            rows.append(("Platform audit", NOT_RECORDED))
        if p.environment_differences is None:
            rows.append(("Execution environments", NOT_RECORDED))
        else:
            rows.append(("Execution environments",
                         "; ".join(p.environment_differences) or "no differences between executions"))
        out.append(_about(rows))
    settings = formats.bootstrap_note(bootstrap_settings(summary))
    out.append("<h3>Analysis parameters</h3>\n" + _about(list(parameters) + [("bootstrap", settings)]))
    out.append("</section>\n")
    return "".join(out)


HISTOGRAM_KEY = ("Steady iter (#): the small bar chart is a histogram of the process executions' steady "
                 "iterations (10 equal bins from the smallest to the largest), the median's bin red; then the "
                 "median (5th, 95th percentile). Times are in the unit shown beside them.")


def legend() -> str:
    """What each class glyph and the steady-iteration histogram in the tables mean."""
    items = "".join(f"<li>{class_symbol(c)}{escape(c)}</li>" for c in PAIR_CLASSES)
    example = histogram_svg([1, 2, 2, 3, 3, 3, 4, 9])
    return (f'<h3>Classes</h3>\n<ul class="legend">{items}</ul>\n'
            f'<p class="key">{example}{escape(HISTOGRAM_KEY)}</p>\n')


def _plot_links(row: SummaryRow, plotted: set[tuple[str, str, str, int]],
                failed: set[tuple[str, str, str, int]]) -> str:
    """Links from a row to each of its executions: its plot, or its failed row."""
    mine = sorted(i for m, b, v, i in plotted | failed if (m, b, v) == (row.machine, row.bench, row.vm))
    return "".join(f'<a href="#{anchor(row.machine, row.bench, row.vm, i)}">{execution_number(i)}</a>'
                   for i in mine)


LINKED_COLUMNS = COLUMNS + (("plots", "Executions", "plots"),)


def render_html(summary: dict, plots: Sequence[EmbeddedPlot] | None = None,
                title: str = "Benchmark summary", sections: Sequence[str] = (),
                provenances: Sequence[Provenance] = (), parameters: Sequence[tuple[str, str]] = (),
                failure_reasons: dict[tuple[str, str, str, int], str] | None = None,
                notes: Sequence[str] = ()) -> str:
    """Where the numbers come from (``provenances``, one per input, and the
    analysis ``parameters``), the class legend, the summary table per machine
    with each row linking to its executions, the failed executions, further
    ``sections`` (HTML fragments, e.g. Pilot's), then the plots in a grid; ``notes``: lines under the
    tables (the flagged executions)."""
    machines = by_machine(summary)
    plots = list(plots or [])
    plotted = {(p.machine, p.bench, p.vm, p.pexec) for p in plots}
    body = [provenance_section(provenances, parameters, summary), legend()]
    for machine, mine, no_data in machines:
        failed = {(f.machine, f.bench, f.vm, f.index) for f in no_data}

        # failed bound now (B023): cells is only called within this iteration, by table() below
        def cells(row: SummaryRow, failed: set[tuple[str, str, str, int]] = failed) -> dict[str, str]:
            return {**summary_cells(row), "plots": _plot_links(row, plotted, failed)}

        body.append(f"<h2>Machine: {escape(machine)}</h2>\n")
        if mine:
            body.append(table(mine, cells=cells, columns=LINKED_COLUMNS))
        if no_data:
            body.append(failed_table(no_data, failure_reasons))
    if not machines:
        body.append("<p>No benchmarks in this summary.</p>\n")
    if notes:     # the flagged executions, under the tables
        items = "".join(f"<li>{escape(n.strip())}</li>" for n in notes[1:])
        body.append(f'<section class="flagged"><p>{escape(notes[0])}</p><ul>{items}</ul></section>\n')
    body.append(bootstrap_footer(summary))
    body.extend(sections)
    if plots:
        body.append(plots_section(plots))
    return page(title, "".join(body))
