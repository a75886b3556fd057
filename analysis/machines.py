"""Keeping machines apart when one report reads results from several.

A machine is named by its results (``inputs.machine_name``: the host name in
the audit's uname). A lab of cloned machines can give two inputs the same
host name; when those inputs also hold the same benchmark key, they cannot
be one machine's results (a key runs once per machine), so each is told
apart by the directory its file is in: a lab's collect step writes
``results/<inventory host>/export.json``, and those become
``<hostname>@<inventory host>``. Inputs with the same host name and
disjoint keys stay one machine, as before (an experiment split in parts).
"""

from __future__ import annotations

from pathlib import Path

from analysis.errors import WarningSink, stderr_warning
from analysis.summary_json import FAILED_KEY, MACHINE_TABLES


def _pairs(summary: dict, machine: str) -> set[tuple[str, str]]:
    """(vm, bench) of every benchmark ``machine`` has in ``summary``, failed ones included."""
    out: set[tuple[str, str]] = set()
    for table in (summary.get("machines") or {}, summary.get(FAILED_KEY) or {}):
        for vm, benches in (table.get(machine) or {}).items():
            out.update((vm, bench) for bench in benches)
    return out


def _machines(summary: dict) -> set[str]:
    return set(summary.get("machines") or {}) | set(summary.get(FAILED_KEY) or {})


def _renamed(summary: dict, names: dict[str, str]) -> dict:
    out = dict(summary)
    for table in ("machines",) + MACHINE_TABLES:
        if isinstance(summary.get(table), dict):
            out[table] = {names.get(m, m): v for m, v in summary[table].items()}
    return out


def distinct_machines(items: list[tuple[Path, dict]], warn: WarningSink = stderr_warning
                      ) -> tuple[list[tuple[Path, dict]], list[dict[str, str]]]:
    """The summaries with clashing machines renamed, and for each input its
    renames (old name -> new name; empty when none)."""
    holders: dict[str, list[int]] = {}
    for i, (_, summary) in enumerate(items):
        for machine in _machines(summary):
            holders.setdefault(machine, []).append(i)
    renames: list[dict[str, str]] = [{} for _ in items]
    for machine, where in sorted(holders.items()):
        clashing = sorted({i for a in where for b in where if a < b
                           and _pairs(items[a][1], machine) & _pairs(items[b][1], machine)
                           for i in (a, b)})
        if not clashing:
            continue
        labels = {i: f"{machine}@{items[i][0].resolve().parent.name}" for i in clashing}
        if len(set(labels.values())) < len(labels):
            continue  # same directory name too: the merge names both files in its error
        for i, label in labels.items():
            renames[i][machine] = label
        warn(f"machine {machine!r} runs the same benchmarks in "
             f"{', '.join(str(items[i][0]) for i in clashing)}; told apart by directory as "
             f"{', '.join(labels[i] for i in clashing)}")
    renamed = [(path, _renamed(summary, renames[i]) if renames[i] else summary)
               for i, (path, summary) in enumerate(items)]
    return renamed, renames
