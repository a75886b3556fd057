"""Paired runs from a coldrun native export of a [duet] experiment.

Each pair execution has two slots, sides ``a`` and ``b``, with the same
``pair_id`` ("A/B#pexec"); its iterations met at a barrier, so ``a[i]`` and
``b[i]`` pair by position: x = a's times, y = b's.  Only pair executions
whose job completed are used (a failed one may keep one side's data, which
has nothing to pair with); the count left out is reported per pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.duet.pairs import PairedRuns, paired_runs
from analysis.errors import AnalysisError


@dataclass(frozen=True)
class ExportedPair:
    """One pair of keys: its completed pair executions as x (side a) / y (side b), and what was left out."""

    pair: str          # the pair's job key, "A/B"
    a: str
    b: str
    pexecs: tuple[int, ...]
    runs: PairedRuns
    left_out: dict[int, str]     # pexec -> the pair execution's state, for those not completed


def exported_pairs(bundle: Any, path: str | Path) -> list[ExportedPair]:
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
    return [_pair(pair, executions, path) for pair, executions in by_pair.items()]


def _pair(pair: str, executions: dict[int, tuple[dict, dict] | str], path: str | Path) -> ExportedPair:
    a_key, _, b_key = pair.partition("/")
    done = {p: e for p, e in sorted(executions.items()) if not isinstance(e, str)}
    left_out = {p: e for p, e in sorted(executions.items()) if isinstance(e, str)}
    if not done:
        raise AnalysisError(f"{path}: pair {pair}: no completed pair execution to analyse")
    document = {"x": [a.get("wallclock_times") for a, _ in done.values()],
                "y": [b.get("wallclock_times") for _, b in done.values()]}
    runs = paired_runs(document, f"{path}: pair {pair} (x = side a, y = side b; executions {list(done)})")
    return ExportedPair(pair, a_key, b_key, tuple(done), runs, left_out)
