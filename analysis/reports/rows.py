"""What every table format says about the summary's rows: class phrases, the
failed-executions line, per-machine grouping, histograms.

The rows themselves (``SummaryRow``, ``FailedRow``, their shape checked) are
read from warmup_stats' summary JSON by ``analysis.summary_json``, so the
text, LaTeX and HTML renderers only decide how things look.
"""

from __future__ import annotations

from analysis.summary_json import FailedRow, SummaryRow, failed_rows, summary_rows

from . import formats

# Columns of the list of process executions without data, in every format.
FAILED_HEADERS = ("Benchmark", "VM", "Process execution", "State")

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
    phrase = row.classification
    if row.is_inconsistent:
        phrase = f"{row.classification} ({counts_phrase(row.counts)})"
    if row.failed:
        phrase += "; " + failed_phrase(row.failed)
    return phrase


def perf_text(row: SummaryRow) -> str:
    """Steady perf, or where there is none the marked figure of the last iterations (or '-')."""
    if row.steady_perf is None and row.last_iterations is not None:
        return formats.last_iterations(row.last_iterations)
    return formats.steady_perf(row.steady_perf, row.steady_perf_ci)


def last_note(summary: dict) -> list[str]:
    """The legend line of the marked figures, when the summary's table shows any."""
    note = formats.last_iterations_note([r.last_iterations for r in summary_rows(summary)
                                         if r.steady_perf is None and r.last_iterations is not None])
    return [] if note is None else [note]


def failed_phrase(failed: dict[str, int]) -> str:
    """'2 errored (no data), 1 timed out (no data)'."""
    return ", ".join(f"{n} {name}" for name, n in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0])))


def by_machine(summary: dict) -> list[tuple[str, list[SummaryRow], list[FailedRow]]]:
    """(machine, its benchmark rows, its executions without data) for every
    machine with either, sorted."""
    rows, failed = summary_rows(summary), failed_rows(summary)
    names = sorted({r.machine for r in rows} | {r.machine for r in failed})
    return [(m, [r for r in rows if r.machine == m], [f for f in failed if f.machine == m]) for m in names]


def failed_summary(rows: list[FailedRow]) -> str:
    """'3 process executions without data, not classified: 2 errored (no data), ...'."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.label] = counts.get(r.label, 0) + 1
    return f"{len(rows)} process execution(s) without data, not classified: {failed_phrase(counts)}"


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
