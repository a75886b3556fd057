"""Treatments and the effects a screening analysis estimates, as linear
combinations of treatment means (so one bootstrap of the treatments serves
every effect).

- Main effect of factor f at level l: the mean over the treatments at f = l of
  their means, minus the same at f = 0 (TN 1855's refactored means).
- Interaction of a pair of 2-level factors A, B (column order): half the
  difference of B's simple effects at A = 1 and at A = 0, each cell (a, b)
  the mean over its treatments; symmetric in A and B, and the classical
  2-level interaction effect, on the main effects' scale.

An effect whose reference cells hold no treatment (after exclusions) is left
out and named in ``notes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from analysis.errors import AnalysisError

if TYPE_CHECKING:
    import numpy as np

    from analysis.screen.table import ScreenTable


@dataclass(frozen=True)
class Treatment:
    levels: tuple[int, ...]
    values: np.ndarray
    batches: np.ndarray | None = None   # each sample's batch (whole plot); None: not known


@dataclass(frozen=True)
class Effect:
    kind: str  # "main" or "interaction"
    factors: tuple[str, ...]  # (f,) or (A, B)
    level: int | None  # the main effect's level; None for an interaction
    coefficients: np.ndarray  # one per treatment

    @property
    def name(self) -> str:
        return f"{self.factors[0]}={self.level}" if self.kind == "main" else ":".join(self.factors)


def parse_exclusion(text: str, factors: Sequence[str], source: str,
                    level_names: dict[str, list[str]] | None = None) -> dict[int, int]:
    """``"fp=0,prf=2"`` -> {factor index: level}: the treatments matching every assignment.

    A level is its number, or (native exports) its name as the experiment wrote it.
    """
    wanted: dict[int, int] = {}
    level_names = level_names or {}
    for part in text.split(","):
        name, sep, level = part.partition("=")
        name = name.strip()
        if not sep or not name:
            raise AnalysisError(f"--exclude {text!r}: expected FACTOR=LEVEL[,FACTOR=LEVEL...]")
        if name not in factors:
            raise AnalysisError(f"--exclude {text!r}: unknown factor {name!r} in {source} "
                                f"(factors: {', '.join(factors)})")
        level = level.strip()
        names = level_names.get(name, [])
        if level in names:
            wanted[list(factors).index(name)] = names.index(level)
            continue
        try:
            wanted[list(factors).index(name)] = int(level)
        except ValueError:
            known = f" or one of {names}" if names else ""
            raise AnalysisError(f"--exclude {text!r}: level {level!r} is not a whole number{known}") from None
    return wanted


def treatments(table: ScreenTable, exclusions: Sequence[dict[int, int]] = ()) -> list[Treatment]:
    """The treatments present, in level order (the first column slowest), less the excluded ones."""
    import numpy as np

    keys, inverse = np.unique(table.levels, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(keys.shape[0] + 1))
    out = []
    for t, key in enumerate(keys):
        levels = tuple(int(v) for v in key)
        if any(all(levels[j] == lvl for j, lvl in rule.items()) for rule in exclusions):
            continue
        rows = order[bounds[t]:bounds[t + 1]]
        out.append(Treatment(levels, table.response[rows], None if table.batches is None else table.batches[rows]))
    if not out:
        raise AnalysisError(f"{table.source}: the exclusions remove every treatment")
    return out


def _cell_mean(coefficients: np.ndarray, members: list[int], weight: float) -> None:
    for t in members:
        coefficients[t] += weight / len(members)


def effects(factors: Sequence[str], found: Sequence[Treatment]) -> tuple[list[Effect], list[str]]:
    """Every main effect (levels other than 0) and every 2-level pair's interaction, and notes."""
    import numpy as np

    notes: list[str] = []
    out: list[Effect] = []
    levels = np.array([t.levels for t in found])
    size = len(found)
    for j, factor in enumerate(factors):
        reference = np.flatnonzero(levels[:, j] == 0).tolist()
        for level in sorted(set(levels[:, j].tolist()) - {0}):
            if not reference:
                notes.append(f"main effect {factor}={level}: no treatment left at {factor}=0")
                continue
            c = np.zeros(size)
            _cell_mean(c, np.flatnonzero(levels[:, j] == level).tolist(), 1.0)
            _cell_mean(c, reference, -1.0)
            out.append(Effect("main", (factor,), level, c))
    two_level = [j for j in range(len(factors)) if set(levels[:, j].tolist()) == {0, 1}]
    for x, a in enumerate(two_level):
        for b in two_level[x + 1:]:
            cells = {(u, v): np.flatnonzero((levels[:, a] == u) & (levels[:, b] == v)).tolist()
                     for u in (0, 1) for v in (0, 1)}
            empty = [cell for cell, members in cells.items() if not members]
            if empty:
                notes.append(f"interaction {factors[a]}:{factors[b]}: no treatment at "
                             + ", ".join(f"{factors[a]}={u}/{factors[b]}={v}" for u, v in empty))
                continue
            c = np.zeros(size)
            for (u, v), members in cells.items():
                _cell_mean(c, members, 0.5 if u == v else -0.5)
            out.append(Effect("interaction", (factors[a], factors[b]), None, c))
    return out, notes


def alias_sets(found_effects: Sequence[Effect]) -> list[tuple[str, list[Effect]]]:
    """Effects the treatments cannot tell apart (equal contrasts up to sign, ``contracts.aliases``), main effects
    first: each set is one estimate, that of its first member, named by all members (``C=1 = A:B``, with
    ``-A:B`` where the sign flips)."""
    from contracts.aliases import alias_groups

    by_name = {e.name: e for e in found_effects}
    groups = alias_groups({e.name: e.coefficients.tolist() for e in found_effects})
    return [(" = ".join(group), [by_name[name if name in by_name else name[1:]] for name in group]) for group in groups]


def half_normal(names: Sequence[str], values: Sequence[float]) -> list[dict]:
    """Half-normal plot points: |effect| ascending against Φ⁻¹(0.5 + 0.5 (i - 0.5) / m)."""
    from scipy.special import ndtri

    ranked = sorted(zip(names, values), key=lambda p: abs(p[1]))
    m = len(ranked)
    return [{"effect": name, "abs_effect": abs(value), "quantile": float(ndtri(0.5 + 0.5 * (i + 0.5) / m))}
            for i, (name, value) in enumerate(ranked)]
