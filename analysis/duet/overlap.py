"""Pairing iterations of runs made without a barrier, by how much they overlap in time.

asynchronous-duet's rule (methods.md §2.4): sweep both sides' iterations in
start order with two pointers; every A/B pair whose intervals overlap by more
than 0 is a candidate; a candidate is kept when the overlap exceeds
``share`` (0.4) of *both* iteration times, so each measurement shares most of
its time with the one it is compared to. Intervals are half open: [0, 4) and
[4, 8) touch but do not overlap.

methods.md's check counts (1, 2, 3; 6 for two runs) are the candidates: in the
third case A{[0,4],[4,8]} / B{[0,5],[5,10]} the candidate A[4,8]/B[0,5]
overlaps by 1, under 0.4 x 4, so 2 pairs are kept. Pure Python, no numpy: the
supervisor may use it.
"""

from __future__ import annotations

from typing import Sequence

Interval = tuple[float, float]  # (start, end) of one iteration, same clock for both sides
OVERLAP_SHARE = 0.4


def _check(side: str, intervals: Sequence[Interval]) -> None:
    for i, (start, end) in enumerate(intervals):
        if not end > start:
            raise ValueError(f"{side}[{i}]: end {end} is not after start {start}")
        if i and start < intervals[i - 1][1]:
            raise ValueError(f"{side}[{i}] starts at {start}, before {side}[{i - 1}] ends; "
                             "one side's iterations must be sequential")


def overlapping(a: Sequence[Interval], b: Sequence[Interval]) -> list[tuple[int, int, float]]:
    """Every (i, j, overlap) with a[i] and b[j] overlapping by more than 0, in start order.

    Each side's iterations must be sequential (each starts no earlier than the
    previous one ends), which is what lets the sweep advance whichever
    pointer's interval ends first: it can overlap nothing further on.
    """
    _check("A", a)
    _check("B", b)
    found = []
    i = j = 0
    while i < len(a) and j < len(b):
        overlap = min(a[i][1], b[j][1]) - max(a[i][0], b[j][0])
        if overlap > 0:
            found.append((i, j, overlap))
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return found


def overlap_pairs(a: Sequence[Interval], b: Sequence[Interval],
                  share: float = OVERLAP_SHARE) -> list[tuple[int, int]]:
    """(i, j) of the candidates whose overlap exceeds ``share`` of both a[i]'s and b[j]'s time."""
    if not 0 <= share < 1:
        raise ValueError(f"share must be in [0, 1), not {share}")
    return [(i, j) for i, j, overlap in overlapping(a, b)
            if overlap > share * (a[i][1] - a[i][0]) and overlap > share * (b[j][1] - b[j][0])]

