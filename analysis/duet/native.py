"""Paired runs from a coldrun native export of a [duet] experiment.

Each pair execution has two slots, sides ``a`` and ``b``, with the same
``pair_id`` ("A/B#pexec").  When its iterations met at a barrier, ``a[i]`` and
``b[i]`` pair by position: x = a's times, y = b's.  A pair execution whose
records say it ran without one (``pair.barrier`` null: [duet] barrier = false)
pairs by overlap instead (``overlap``: each side's iteration_start_ns /
iteration_end_ns; a pair kept when it overlaps by > 40% of both).  Only pair
executions whose job completed are used (a failed one may keep one side's
data, which has nothing to pair with), and an unsynchronised one with no
overlapping iterations; what was left out is reported per pair, as is the pairing.

With ``steady_state``, an overlap-paired execution is cut to each side's own
stable segment before pairing (``analysis.duet.steady.side_segment`` on the
side's whole series, which is a time series; the paired list, with its gaps
and an iteration that may pair twice, is not); ``ExportedPair.cut`` holds
those segments, and the report takes the paired list as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.duet.overlap import overlap_pairs
from analysis.duet.pairs import PairedRuns, paired_runs
from analysis.duet.steady import SideSegment, side_segment
from analysis.errors import AnalysisError

POSITION, OVERLAP = "position", "overlap"
NO_OVERLAP = "no iterations overlapping by > 40% (run without a barrier)"


@dataclass(frozen=True)
class ExportedPair:
    """One pair of keys: its completed pair executions as x (side a) / y (side b), and what was left out."""

    pair: str          # the pair's job key, "A/B"
    a: str
    b: str
    pexecs: tuple[int, ...]
    runs: PairedRuns
    left_out: dict[int, str]     # pexec -> why it was left out: its state, when not completed
    pairing: str = POSITION      # "position" (barrier), "overlap" (none), or "position+overlap" when mixed
    overlap: dict[int, tuple[int, int, int]] | None = None   # pexec -> (pairs kept, a's, b's iterations)
    cut: dict[int, tuple[SideSegment, SideSegment]] | None = None   # run index -> sides' segments, cut before pairing


def exported_pairs(bundle: Any, path: str | Path, *, steady_state: bool = False) -> list[ExportedPair]:
    """Every pair in a native export, in the order the export first names it; AnalysisError for a bundle
    without pair executions or one whose pair executions are not whole."""
    if not isinstance(bundle, dict) or not isinstance(bundle.get("executions"), list):
        raise AnalysisError(f"{path}: not a coldrun native export (no 'executions' list)")
    sides: dict[str, dict[str, dict]] = {}
    for i, slot in enumerate(bundle["executions"]):
        if not isinstance(slot, dict) or "pair_id" not in slot:
            continue
        pair_id, side = slot.get("pair_id"), slot.get("side")
        if not isinstance(pair_id, str) or "#" not in pair_id or side not in ("a", "b"):
            raise AnalysisError(f"{path}: executions[{i}]: pair_id {pair_id!r} / side {side!r} is not a pair "
                                f"execution's side (\"A/B#pexec\", a or b)")
        if side in sides.setdefault(pair_id, {}):
            raise AnalysisError(f"{path}: executions[{i}]: pair execution {pair_id} has two sides {side}")
        sides[pair_id][side] = slot
    if not sides:
        raise AnalysisError(f"{path}: no pair executions: the export is not of a [duet] experiment "
                            f"(use --pairs FILE for paired times from elsewhere)")
    by_pair: dict[str, dict[int, tuple[dict, dict] | str]] = {}
    for pair_id, found in sides.items():
        pair, _, pexec_text = pair_id.rpartition("#")
        if set(found) != {"a", "b"} or not pexec_text.isdigit():
            raise AnalysisError(f"{path}: pair execution {pair_id} has only side(s) {', '.join(sorted(found))}; "
                                f"a native export has both")
        a, b = found["a"], found["b"]
        state = a.get("state")
        by_pair.setdefault(pair, {})[int(pexec_text)] = (a, b) if state == "completed" else str(state)
    return [_pair(pair, executions, path, steady_state) for pair, executions in by_pair.items()]


def _pair(pair: str, executions: dict[int, tuple[dict, dict] | str], path: str | Path,
          steady_state: bool) -> ExportedPair:
    a_key, _, b_key = pair.partition("/")
    left_out = {p: e for p, e in sorted(executions.items()) if isinstance(e, str)}
    pexecs: list[int]
    xs, ys, pexecs, used, overlap, cut = [], [], [], set(), {}, {}
    for pexec, sides in sorted(executions.items()):
        if isinstance(sides, str):
            continue
        a, b = sides
        # the loader checked each side's record (its wallclock_times a list of numbers)
        x: Any = a.get("wallclock_times")
        y: Any = b.get("wallclock_times")
        if _synchronised(a) and _synchronised(b):
            used.add(POSITION)
        else:
            used.add(OVERLAP)
            where = f"{path}: pair execution {pair}#{pexec}"
            try:     # A and B in overlap's errors are sides a and b
                kept = overlap_pairs(_intervals(a, f"{where} side a"), _intervals(b, f"{where} side b"))
            except ValueError as e:
                raise AnalysisError(f"{where}: {e}") from None
            if steady_state:     # each side's warm-up judged on its own series, then only steady pairs kept
                xs_seg, ys_seg = side_segment(x), side_segment(y)
                kept = [(i, j) for i, j in kept
                        if xs_seg.begin <= i < xs_seg.end and ys_seg.begin <= j < ys_seg.end]
                cut[len(pexecs)] = (xs_seg, ys_seg)
            overlap[pexec] = (len(kept), len(x), len(y))
            if not kept:
                left_out[pexec] = NO_OVERLAP
                cut.pop(len(pexecs), None)
                continue
            x, y = [x[i] for i, _ in kept], [y[j] for _, j in kept]
        xs.append(x)
        ys.append(y)
        pexecs.append(pexec)
    if not pexecs:
        raise AnalysisError(f"{path}: pair {pair}: no completed pair execution to analyse"
                            + (f" ({NO_OVERLAP})" if NO_OVERLAP in left_out.values() else ""))
    runs = paired_runs({"x": xs, "y": ys}, f"{path}: pair {pair} (x = side a, y = side b; executions {pexecs})")
    return ExportedPair(pair, a_key, b_key, tuple(pexecs), runs, dict(sorted(left_out.items())),
                        "+".join(sorted(used, key=(POSITION, OVERLAP).index)), overlap or None, cut or None)


def _synchronised(slot: dict) -> bool:
    """Whether the side met its partner at a barrier (records before barrier = false always did)."""
    pair = slot.get("pair")
    return not (isinstance(pair, dict) and "barrier" in pair and pair["barrier"] is None)


def _intervals(slot: dict, where: str) -> list[tuple[int, int]]:
    """(start, end) ns of each iteration, one clock for both sides; AnalysisError when the timeline is unusable."""
    starts, ends = slot.get("iteration_start_ns"), slot.get("iteration_end_ns")
    times = slot.get("wallclock_times")
    if not (isinstance(starts, list) and isinstance(ends, list) and isinstance(times, list)
            and len(starts) == len(ends) == len(times)
            and all(isinstance(t, int) and not isinstance(t, bool) for t in starts + ends)):
        raise AnalysisError(f"{where}: ran without a barrier, so it is paired by overlap, which needs "
                            f"iteration_start_ns and iteration_end_ns: integer lists as long as wallclock_times")
    return list(zip(starts, ends))
