"""The per-benchmark rows every table format renders.

Input is warmup_stats' summary JSON (``--output-json``, format "2"):
``{"machines": {machine: {vm: {bench: {...}}}}}``. This module turns it into
plain rows once, validating the shape, so the text, LaTeX and HTML renderers
only decide how things look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Process-execution classes, in the order warmup_stats' tables list them.
PEXEC_CLASSES = ("flat", "warmup", "slowdown", "no steady state")
# Pair classes: the four above plus the two inconsistent verdicts.
PAIR_CLASSES = PEXEC_CLASSES + ("good inconsistent", "bad inconsistent")
INCONSISTENT = ("good inconsistent", "bad inconsistent")


class SummaryFormatError(ValueError):
    """The summary dict does not have warmup_stats' summary shape."""


@dataclass(frozen=True)
class Interval:
    """A median (or bootstrap median) with its 5%-95% range."""

    median: float
    low: float
    high: float


@dataclass(frozen=True)
class SummaryRow:
    machine: str
    vm: str
    bench: str
    classification: str
    # Process-execution class -> count (only the four pexec classes).
    counts: dict[str, int]
    steady_iter: Interval | None
    steady_iter_list: list[float] = field(default_factory=list)
    steady_time_to_reach: Interval | None = None
    steady_perf: float | None = None
    steady_perf_ci: float | None = None

    @property
    def n_pexecs(self) -> int:
        return sum(self.counts.values())

    @property
    def is_inconsistent(self) -> bool:
        return self.classification in INCONSISTENT


def sorted_counts(counts: dict[str, int]) -> list[tuple[str, int]]:
    """Non-zero class counts, most frequent first (ties by class name, which is
    the order warmup_stats' stable sort over sorted JSON keys gives)."""
    return sorted(((c, n) for c, n in counts.items() if n > 0), key=lambda cn: (-cn[1], cn[0]))


def counts_phrase(counts: dict[str, int]) -> str:
    """'5 warmup, 3 slowdown' for an inconsistent pair."""
    return ", ".join(f"{n} {c}" for c, n in sorted_counts(counts))


def class_phrase(row: SummaryRow) -> str:
    """The classification in words, with counts for inconsistent pairs and for
    consistent pairs where some process executions are missing (errored)."""
    if row.is_inconsistent:
        return f"{row.classification} ({counts_phrase(row.counts)})"
    return row.classification


def _interval(where: str, median: Any, rng: Any) -> Interval | None:
    if median is None:
        return None
    if not (isinstance(rng, (list, tuple)) and len(rng) == 2):
        raise SummaryFormatError(f"{where}: expected a [p5, p95] pair, got {rng!r}")
    try:
        return Interval(float(median), float(rng[0]), float(rng[1]))
    except (TypeError, ValueError) as exc:
        raise SummaryFormatError(f"{where}: not a number ({exc})") from None


def _row(machine: str, vm: str, bench: str, d: Any) -> SummaryRow:
    where = f"machines.{machine}.{vm}.{bench}"
    if not isinstance(d, dict):
        raise SummaryFormatError(f"{where}: expected an object, got {type(d).__name__}")
    cls = d.get("classification")
    if cls not in PAIR_CLASSES:
        raise SummaryFormatError(f"{where}.classification: unknown class {cls!r}")
    detailed = d.get("detailed_classification")
    if not isinstance(detailed, dict):
        raise SummaryFormatError(f"{where}.detailed_classification: missing or not an object")
    counts = {c: int(detailed.get(c, 0) or 0) for c in PEXEC_CLASSES}
    perf = d.get("steady_state_time")
    ci = d.get("steady_state_time_ci")
    return SummaryRow(
        machine=machine,
        vm=vm,
        bench=bench,
        classification=cls,
        counts=counts,
        steady_iter=_interval(f"{where}.steady_state_iteration_iqr",
                              d.get("steady_state_iteration"), d.get("steady_state_iteration_iqr")),
        steady_iter_list=[float(x) for x in (d.get("steady_state_iteration_list") or [])],
        steady_time_to_reach=_interval(f"{where}.steady_state_time_to_reach_secs_iqr",
                                       d.get("steady_state_time_to_reach_secs"),
                                       d.get("steady_state_time_to_reach_secs_iqr")),
        steady_perf=None if perf is None else float(perf),
        steady_perf_ci=None if ci is None else float(ci),
    )


def summary_rows(summary: dict) -> list[SummaryRow]:
    """All rows, sorted by machine, VM, benchmark."""
    if not isinstance(summary, dict) or not isinstance(summary.get("machines"), dict):
        raise SummaryFormatError("not a warmup_stats summary: no 'machines' object at the top level")
    rows = []
    for machine in sorted(summary["machines"]):
        vms = summary["machines"][machine]
        if not isinstance(vms, dict):
            raise SummaryFormatError(f"machines.{machine}: expected an object of VMs")
        for vm in sorted(vms):
            benches = vms[vm]
            if not isinstance(benches, dict):
                raise SummaryFormatError(f"machines.{machine}.{vm}: expected an object of benchmarks")
            for bench in sorted(benches):
                rows.append(_row(machine, vm, bench, benches[bench]))
    return rows


def histogram(values: list[float], bins: int = 10) -> tuple[list[int], int | None]:
    """Counts of `values` in `bins` equal-width bins over their range, and the
    index of the bin holding the median (drawn highlighted, as in the paper)."""
    if not values:
        return [], None
    lo, hi = min(values), max(values)
    counts = [0] * bins
    width = (hi - lo) / bins

    def bin_of(v: float) -> int:
        if width == 0:
            return 0
        return min(int((v - lo) / width), bins - 1)

    for v in values:
        counts[bin_of(v)] += 1
    ordered = sorted(values)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return counts, bin_of(median)
