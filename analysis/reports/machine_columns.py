"""Several machines side by side: the paper's Table 1 shape, and how their environments differ.

Rows are (benchmark, VM); each machine has a group of columns (class, steady
iteration, steady performance), so the same key run on different machines
reads across one line. The environment comparison puts what each input
records about its machine (``provenance``) next to each other and shows the
entries whose values differ.
"""

from __future__ import annotations

from typing import Sequence

from analysis.execution_states import execution_number
from analysis.summary_json import SummaryRow, bootstrap_settings

from . import formats
from .provenance import NOT_RECORDED, Provenance
from .rows import FAILED_HEADERS, by_machine, class_phrase, failed_summary, last_note, perf_text
from .text import aligned

# The audit entry that differs at every boot (supervisor.platforms.audit.VOLATILE; the analysis never imports
# the supervisor).
VOLATILE = "volatile"

GROUP = ("Class.", "Steady iter (#)", "Steady perf (s)")


def _group_cells(row: SummaryRow | None) -> tuple[str, ...]:
    if row is None:
        return ("not run",) + (formats.BLANK,) * (len(GROUP) - 1)
    return (class_phrase(row), formats.steady_iter(row.steady_iter),
            perf_text(row))


def _grouped(machines: list[str], rows: list[list[str]]) -> list[str]:
    """``rows`` aligned under a header line naming each machine over its column group."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    first = 2  # Benchmark, VM
    names = []
    for n, machine in enumerate(machines):
        cols = widths[first + n * len(GROUP): first + (n + 1) * len(GROUP)]
        span = sum(cols) + 2 * (len(cols) - 1)
        names.append(machine.ljust(span, " ") if len(machine) <= span else machine)
    lead = "  ".join(" " * w for w in widths[:first])
    return [(lead + "  " + "  ".join(names)).rstrip()] + aligned(rows)


def render_columns(summary: dict, environments: Sequence[tuple[str, Provenance]] = ()) -> str:
    """The text table with a column group per machine, then each machine's
    executions without data, then the environment comparison."""
    machines = by_machine(summary)
    if not machines:
        return "No benchmarks in this summary.\n"
    names = [m for m, _, _ in machines]
    cells: dict[tuple[str, str], dict[str, SummaryRow]] = {}
    for machine, mine, _ in machines:
        for r in mine:
            cells.setdefault((r.bench, r.vm), {})[machine] = r
    header = ["Benchmark", "VM"] + [c for _ in names for c in GROUP]
    body = [[bench, vm] + [c for m in names for c in _group_cells(cells[(bench, vm)].get(m))]
            for bench, vm in sorted(cells)]
    out = [f"Machines: {', '.join(names)}", ""]
    if body:
        out += _grouped(names, [header] + body)
    for machine, _, no_data in machines:
        if no_data:
            out += ["", f"{machine}: {failed_summary(no_data)}.", ""]
            out += aligned([FAILED_HEADERS] + [(f.bench, f.vm, execution_number(f.index), f.label)
                                               for f in no_data])
    if len(environments) > 1:
        out += [""] + environment_comparison(environments)
    out += ["", formats.bootstrap_note(bootstrap_settings(summary))] + last_note(summary)
    return "\n".join(out) + "\n"


def _entries(p: Provenance) -> dict[str, str]:
    """What can differ between machines: the audit's volatile part (boot id,
    kernel log tail) differs at every boot, so it is left out."""
    entries = {"uname": p.kernel, "experiment": p.experiment, "dates": p.dates,
               "supervisor version": p.supervisor_versions}
    entries.update({f"audit {name}": value for name, value in p.audit if name != VOLATILE})
    return entries


def environment_comparison(environments: Sequence[tuple[str, Provenance]]) -> list[str]:
    """Lines: a table of the entries whose values differ between machines (a
    column per machine), then the names of the entries every machine shares."""
    labels = [label for label, _ in environments]
    entries = [_entries(p) for _, p in environments]
    names = sorted(set().union(*entries), key=lambda n: (not n.startswith(("uname", "experiment", "dates",
                                                                              "supervisor")), n))
    differ = [n for n in names if len({e.get(n, NOT_RECORDED) for e in entries}) > 1]
    same = [n for n in names if n not in differ]
    out = [f"Execution environment: {len(differ)} entr{'y differs' if len(differ) == 1 else 'ies differ'} "
           f"between {', '.join(labels)}"]
    if differ:
        out += [""] + aligned([["Entry"] + labels] + [[n] + [e.get(n, NOT_RECORDED) for e in entries]
                                                       for n in differ])
    if same:
        out += ["", f"Same on every machine: {', '.join(same)}"]
    return out
