"""Steady state before ratios: each side's warm-up (and cool-down) left out.

Per execution, each side's stable phase is Pilot's dominant EDM segment
(:func:`analysis.pilot.edm.dominant_segment`, the one segment between
changepoints longer than half the run); the iterations kept are the
intersection of x's and y's segments, so every kept ratio compares two
steady measurements. Two segments each longer than half the run always
intersect. A side with fewer than EDM's 30 readings, or with no dominant
segment (Pilot's rc 32), is kept whole and the reason is recorded: short
series (the check cases, quick runs) pass through unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from analysis.duet.pairs import PairedRuns
from analysis.pilot import edm

TOO_SHORT = f"fewer than {edm.MIN_SIZE} iterations, too short for EDM: kept whole"
NO_DOMINANT = "no EDM segment longer than half the run: kept whole"


@dataclass(frozen=True)
class SideSegment:
    begin: int
    end: int
    note: str | None  # why the side was kept whole, None when EDM found its segment


@dataclass(frozen=True)
class Trim:
    """What one execution kept: iterations [begin, end) of both sides."""

    execution: int
    iterations: int
    begin: int
    end: int
    x: SideSegment
    y: SideSegment

    def as_json(self) -> dict:
        return {
            "execution": self.execution,
            "kept": [self.begin, self.end],
            "excluded_before": self.begin,
            "excluded_after": self.iterations - self.end,
            "x_segment": [self.x.begin, self.x.end], "x_note": self.x.note,
            "y_segment": [self.y.begin, self.y.end], "y_note": self.y.note,
        }


def side_segment(times: Sequence[float]) -> SideSegment:
    if len(times) < edm.MIN_SIZE:
        return SideSegment(0, len(times), TOO_SHORT)
    segment = edm.dominant_segment(times)
    if segment is None:
        return SideSegment(0, len(times), NO_DOMINANT)
    return SideSegment(*segment, None)


def steady_state(runs: PairedRuns, cut: Mapping[int, tuple[SideSegment, SideSegment]] | None = None
                 ) -> tuple[PairedRuns, list[Trim]]:
    """``runs`` with each execution cut to the intersection of its sides' stable segments.

    ``cut``: executions already cut side by side before they were paired (by overlap): kept as they are,
    their Trim giving the sides' own segments."""
    trims = []
    for r, (xr, yr) in enumerate(zip(runs.x, runs.y)):
        if cut and r in cut:
            trims.append(Trim(r, len(xr), 0, len(xr), *cut[r]))
            continue
        xs, ys = side_segment(xr), side_segment(yr)
        trims.append(Trim(r, len(xr), max(xs.begin, ys.begin), min(xs.end, ys.end), xs, ys))
    return (PairedRuns(tuple(xr[t.begin:t.end] for xr, t in zip(runs.x, trims)),
                       tuple(yr[t.begin:t.end] for yr, t in zip(runs.y, trims))), trims)


def whole(runs: PairedRuns) -> list[Trim]:
    """The record for ``--no-steady-state``: everything kept."""
    off = "steady-state removal off"
    return [Trim(r, len(xr), 0, len(xr), SideSegment(0, len(xr), off), SideSegment(0, len(xr), off))
            for r, xr in enumerate(runs.x)]
