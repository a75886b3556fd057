"""The ``table`` command's Plan section (issue 39 item 4): one line per key under the text and HTML tables,
"±1% needs about 14 executions × 2000 iterations, ~2 h 10 min" (``analysis.plan.plan_line``), from the
rows ``analysis.plan_command.table_plan`` makes of what the table analysed."""

from __future__ import annotations

from html import escape
from typing import Sequence

from .text import aligned

HEADERS = ("Benchmark", "VM", "Plan", "Note")


def heading(target: str, level: str) -> str:
    """What the section plans for, and how to leave it out."""
    return (f"Plan: executions × iterations (warm-up included) for a CI half-width of {target} of the steady mean "
            f"at {level} confidence, at the least total time (Kalibera & Jones; `coldrun-analyze plan` gives "
            "the details; `table --plan-target none` leaves this out)")


def render_text(rows: Sequence, target: str, level: str, hows: Sequence[str]) -> str:
    """The section as text: the heading, how executions were costed, a line per key (per machine)."""
    machines = sorted({r.machine for r in rows})
    out = [heading(target, level)] + [f"  execution cost, {how}" for how in hows]
    for machine in machines:
        mine = [r for r in rows if r.machine == machine]
        out += [""] + ([f"Machine: {machine}", ""] if len(machines) > 1 else [])
        out += aligned([HEADERS] + [(r.bench, r.vm, r.line, r.notes) for r in mine])
    return "\n".join(out) + "\n"


def html_section(rows: Sequence, target: str, level: str, hows: Sequence[str]) -> str:
    """The section as HTML: the heading, how executions were costed, a table row per key."""
    several = len({r.machine for r in rows}) > 1
    head = ("<th>Machine</th>" if several else "") + "".join(f"<th>{escape(h)}</th>" for h in HEADERS)
    body = "\n".join("<tr>" + (f"<td>{escape(r.machine)}</td>" if several else "")
                     + f"<td>{escape(r.bench)}</td><td>{escape(r.vm)}</td><td>{escape(r.line)}</td>"
                     + f"<td>{escape(r.notes)}</td></tr>"
                     for r in rows)
    costs = "".join(f"<li>execution cost, {escape(how)}</li>" for how in hows)
    return (f'<section class="plan">\n<h2>Plan</h2>\n<p>{escape(heading(target, level))}</p>\n<ul>{costs}</ul>\n'
            f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n</section>\n")
