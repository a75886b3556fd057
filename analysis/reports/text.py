"""Plain-text summary table for the terminal."""

from __future__ import annotations

from typing import Sequence

from analysis.execution_states import execution_number
from analysis.summary_json import SummaryRow, bootstrap_settings

from . import formats
from .rows import FAILED_HEADERS, by_machine, class_phrase, failed_summary, last_note, perf_text

HEADERS = ("Benchmark", "VM", "Class.", "Steady iter (#)", "Steady iter (time)", "Steady perf (time)")


def _cells(row: SummaryRow) -> tuple[str, ...]:
    return (
        row.bench,
        row.vm,
        class_phrase(row),
        formats.steady_iter(row.steady_iter),
        formats.steady_time_to_reach(row.steady_time_to_reach),
        perf_text(row),
    )


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as left-aligned columns, the first row a header underlined with dashes."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def render_text(summary: dict) -> str:
    """One aligned table per machine; inconsistent pairs show their class counts;
    process executions without data follow in their own table."""
    machines = by_machine(summary)
    if not machines:
        return "No benchmarks in this summary.\n"
    out: list[str] = []
    for machine, mine, no_data in machines:
        if out:
            out.append("")
        out.append(f"Machine: {machine}")
        out.append("")
        if mine:
            out.extend(aligned([HEADERS] + [_cells(r) for r in mine]))
        if no_data:
            if mine:
                out.append("")
            out.append(failed_summary(no_data) + ".")
            out.append("")
            out.extend(aligned([FAILED_HEADERS]
                               + [(f.bench, f.vm, execution_number(f.index), f.label) for f in no_data]))
    out += ["", formats.bootstrap_note(bootstrap_settings(summary))] + last_note(summary)
    return "\n".join(out) + "\n"
