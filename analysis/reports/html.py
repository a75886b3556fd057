"""One self-contained HTML page: the summary table, a small steady-iteration
histogram per pair (inline SVG) and the run-sequence plots (base64 PNG).

Nothing is fetched from the network: CSS is inline, drawings are SVG, images
are data: URIs. (warmup_stats' HTML loaded Google Charts; this page does not.)
"""

from __future__ import annotations

import base64
from html import escape
from typing import Sequence

from . import formats
from .rows import (FAILED_HEADERS, FailedRow, SummaryRow, bootstrap_settings, by_machine, class_phrase,
                   failed_summary, histogram)

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border-bottom: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; vertical-align: middle; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.better { background: #c0f2c0; } td.worse { background: #ffc0c0; } td.different { background: #ffff99; }
.range { color: #666; font-size: 85%; }
svg.cls { vertical-align: middle; margin-right: 0.4em; }
svg.hist { vertical-align: middle; margin-right: 0.5em; }
figure { display: inline-block; margin: 0.5em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 85%; color: #444; }
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


def summary_cells(row: SummaryRow) -> dict[str, str]:
    """The HTML content of each column for one pair."""
    return {
        "bench": escape(row.bench),
        "vm": escape(row.vm),
        "class": class_symbol(row.classification) + escape(class_phrase(row)),
        "steady_iter": (histogram_svg(row.steady_iter_list) if row.steady_iter else "")
        + _with_range(formats.steady_iter(row.steady_iter)),
        "steady_time": _with_range(formats.steady_time_to_reach(row.steady_time_to_reach)),
        "steady_perf": escape(formats.steady_perf(row.steady_perf, row.steady_perf_ci)),
    }


COLUMNS = (("bench", "Benchmark", ""), ("vm", "VM", ""), ("class", "Class.", ""),
           ("steady_iter", "Steady iter (#)", "num"), ("steady_time", "Steady iter (s)", "num"),
           ("steady_perf", "Steady perf (s)", "num"))


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


def failed_table(rows: list[FailedRow]) -> str:
    """The process executions without data: counted, then one row each."""
    head = "".join(f"<th>{escape(title)}</th>" for title in FAILED_HEADERS)
    body = "\n".join(f'<tr class="no-data"><td>{escape(r.bench)}</td><td>{escape(r.vm)}</td>'
                     f'<td class="num">{r.index}</td><td>{escape(r.label)}</td></tr>' for r in rows)
    return (f"<p>{escape(failed_summary(rows))}.</p>\n<table>\n<thead><tr>{head}</tr></thead>\n"
            f"<tbody>\n{body}\n</tbody>\n</table>\n")


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n{body}</body>\n</html>\n")


def plots_section(plots: dict[str, bytes]) -> str:
    figures = []
    for label in sorted(plots):
        data = base64.b64encode(plots[label]).decode("ascii")
        figures.append(f'<figure><img alt="{escape(label)}" src="data:image/png;base64,{data}">'
                       f"<figcaption>{escape(label)}</figcaption></figure>")
    return "<h2>Run-sequence plots</h2>\n" + "\n".join(figures) + "\n"


def bootstrap_footer(summary: dict) -> str:
    """How steady perf was bootstrapped (the seed), under the tables."""
    return f'<p class="bootstrap">{escape(formats.bootstrap_note(bootstrap_settings(summary)))}</p>\n'


def render_html(summary: dict, plots: dict[str, bytes] | None = None,
                title: str = "Benchmark summary", sections: Sequence[str] = ()) -> str:
    """Summary table per machine, then further ``sections`` (HTML fragments, e.g. Pilot's),
    then the plots (label -> PNG bytes), if any."""
    machines = by_machine(summary)
    body = []
    for machine, mine, no_data in machines:
        body.append(f"<h2>Machine: {escape(machine)}</h2>\n")
        if mine:
            body.append(table(mine))
        if no_data:
            body.append(failed_table(no_data))
    if not machines:
        body.append("<p>No benchmarks in this summary.</p>\n")
    body.append(bootstrap_footer(summary))
    body.extend(sections)
    if plots:
        body.append(plots_section(plots))
    return page(title, "".join(body))
