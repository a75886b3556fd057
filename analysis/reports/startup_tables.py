"""Start-up results (analysis/startup.py) as text, LaTeX or JSON: one row per machine and key, the
mean start-up time with its CI half-width, as the paper's startup table gave it."""

from __future__ import annotations

import json
from dataclasses import asdict

from analysis.startup import StartupRow

from . import formats
from .text import aligned

HEADERS = ("Machine", "Benchmark", "VM", "Executions", "Start-up (mean)", "Min", "Max")


def _cells(row: StartupRow) -> tuple[str, ...]:
    if row.mean is None:
        return (row.machine, row.bench, row.vm, f"0 ({row.skipped} without data)", "-", "-", "-")
    runs = f"{row.executions}" + (f" ({row.skipped} without data)" if row.skipped else "")
    return (row.machine, row.bench, row.vm, runs, formats.steady_perf(row.mean, row.ci),
            formats.duration(row.minimum), formats.duration(row.maximum))


def render_text(rows: list[StartupRow], confidence: str) -> str:
    if not rows:
        return "No start-up keys in these results.\n"
    note = (f"Start-up time: the inner runner's clock reading minus the outer runner's, per process execution; "
            f"mean and {float(confidence):.0%} CI by bootstrap (warmup_stats' rules, as the paper's startup table).")
    return "\n".join(["Start-up times", "", *aligned([HEADERS] + [_cells(r) for r in rows]), "", note]) + "\n"


def render_latex(rows: list[StartupRow]) -> str:
    def tex(s: str) -> str:
        return s.replace("\\", "\\textbackslash{}").replace("_", "\\_").replace("&", "\\&").replace("%", "\\%")
    lines = ["\\begin{tabular}{llllrrr}", "\\hline",
             " & ".join(HEADERS) + " \\\\", "\\hline"]
    lines += [" & ".join(tex(c).replace("±", "$\\pm$") for c in _cells(r)) + " \\\\" for r in rows]
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def render_json(rows: list[StartupRow]) -> str:
    return json.dumps([dict(asdict(r), vm=r.vm) for r in rows], indent=1) + "\n"
