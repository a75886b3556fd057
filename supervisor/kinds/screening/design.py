"""A [screening] table's treatments: the design matrix from pyDOE3, less the excluded treatments.

pyDOE3 (with numpy and scipy) is in the ``analysis`` extra, not in the
supervisor's own dependencies: it is imported here only, and only when a
screening experiment is planned (``coldrun check``/``start``).  The plan is
then stored in the state dir (kinds/screening/state.py), so no boot imports it.

A treatment is a tuple of level indices, one per factor in file order.
Full factorial rows come in TN 1855's Table 3 order: the first factor varies
slowest, the last fastest (pyDOE3's ``fullfact`` varies the first column
fastest, so it is run on the reversed factor list and the columns flipped back).

A fractional or Plackett-Burman design's alias structure is computed from
its rows (the generators' product), words up to three factors, by
``contracts.aliases`` (the analysis names alias sets the same way).  A
Plackett-Burman design whose run count is not a power of two aliases
effects partially (correlations between 0 and 1), which equality of
contrasts does not show: ``check`` says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from contracts.aliases import design_aliases

from supervisor.errors import ColdrunError
from supervisor.kinds.screening.table import Screening, level_text

Treatment = tuple[int, ...]


@dataclass(frozen=True)
class Design:
    name: str                      # "full factorial", "fractional factorial (resolution 4)", ...
    rows: list[Treatment]          # every row of the design, in design order (the treatment numbers)
    kept: list[int]                # the rows that run (not excluded), in design order
    warnings: list[str]            # balance broken by the exclusions, one line each
    aliases: list[list[str]] = field(default_factory=list)   # a fractional design's alias sets (contracts.aliases)


def design_matrix(sc: Screening) -> tuple[str, list[Treatment]]:
    """The design's rows as level indices, and its name."""
    try:
        import pyDOE3    # the analysis extra (with numpy and scipy, ~1.5 s to import): only when a design is planned
    except ImportError:
        raise ColdrunError("screening: designs come from pyDOE3, which is not installed; "
                           "pip install 'coldrun[analysis]'") from None
    counts = [len(f.levels) for f in sc.factors.values()]
    if sc.design == "full":
        matrix = pyDOE3.fullfact(counts[::-1])[:, ::-1]
        return "full factorial", [tuple(int(v) for v in row) for row in matrix]
    n = len(counts)
    if sc.design == "plackett-burman":
        matrix, name = pyDOE3.pbdesign(n), "Plackett-Burman"
    elif sc.resolution is not None:
        try:
            matrix = pyDOE3.fracfact_by_res(n, sc.resolution)
        except ValueError as e:
            raise ColdrunError(f"screening.resolution: no 2-level fractional design of resolution "
                               f"{sc.resolution} for {n} factors ({e}); lower the resolution") from None
        name = f"fractional factorial (resolution {sc.resolution})"
    else:
        words = (sc.generators or "").split()
        if len(words) != n:
            raise ColdrunError(f"screening.generators: {len(words)} words for {n} factors; give one word per "
                               f"factor in order, e.g. \"a b ab\"")
        try:
            matrix = pyDOE3.fracfact(sc.generators)
        except Exception as e:     # pyDOE3 raises assorted errors for a malformed generator string
            raise ColdrunError(f"screening.generators: {sc.generators!r} is not a pyDOE3 generator string "
                               f"({e}); use letters a, b, ... and products like ab") from None
        name = f"fractional factorial (generators {sc.generators})"
    # -1 is the first (reference) level, +1 the second.
    return name, [tuple(int(v > 0) for v in row) for row in matrix]


def excluded(sc: Screening, row: Treatment) -> bool:
    names = sc.names()
    for entry in sc.exclude:
        if all(sc.factors[f].texts()[row[names.index(f)]] == level_text(v) for f, v in entry.items()):
            return True
    return False


def balance_warnings(sc: Screening, rows: list[Treatment], kept: list[int]) -> list[str]:
    """Factors whose levels no longer appear equally often: their main effects mix with the others'."""
    if len(kept) == len(rows):
        return []
    lines = [f"screening.exclude removes {len(rows) - len(kept)} of {len(rows)} treatments; the design is no "
             f"longer balanced where a factor's levels appear unequally, and its main effects are then "
             f"confounded with the other factors' (TN 1855 analyses such designs abridged)"]
    for i, (name, f) in enumerate(sc.factors.items()):
        full = Counter(rows[r][i] for r in range(len(rows)))
        now = Counter(rows[r][i] for r in kept)
        if any(now[lv] * full[0] != full[lv] * now[0] for lv in range(len(f.levels))):
            spread = ", ".join(f"{t}: {now[lv]}" for lv, t in enumerate(f.texts()))
            lines.append(f"  {name}: treatments per level now {spread}")
    return lines


def build_design(sc: Screening) -> Design:
    name, rows = design_matrix(sc)
    kept = [i for i, row in enumerate(rows) if not excluded(sc, row)]
    if not kept:
        raise ColdrunError(f"screening.exclude: removes all {len(rows)} treatments of the {name} design, so "
                           f"nothing would run; remove an exclusion")
    aliases = [] if sc.design == "full" else design_aliases(sc.names(), rows)
    return Design(name, rows, kept, balance_warnings(sc, rows, kept), aliases)
