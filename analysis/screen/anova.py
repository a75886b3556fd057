"""ANOVA of a screening table (statsmodels ``ols`` + ``anova_lm``), only where
the design is balanced: every combination of the factors' levels present,
each with the same number of samples. Otherwise the sums of squares depend
on the order of terms and TN 1855's block plots are the better reading, so
the reason is given instead of a table.

Model: every factor's main effect and every 2-factor interaction (factors
as categorical). TN 1855 mentions ANOVA but does not use it.

A split plot (``analysis.screen.split_plot``: factors needing a reboot, and
each sample's batch) has two strata, as R's ``aov(y ~ ... + Error(batch))``:
the whole-plot factors and their interactions are tested on the batch means
against the batches' spread within their cells (``residual (between
batches)``; with one batch per cell it has no degrees of freedom, so no F or
p); every other term is tested within batches, after the batches
(sequential sums of squares, equal to R's in a balanced design).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import TYPE_CHECKING, Any, Sequence

from analysis.screen.effects import Treatment

if TYPE_CHECKING:
    from analysis.screen.split_plot import WholePlots

WITHIN = "within batches"
BETWEEN = "between batches"


def balanced(factors: Sequence[str], found: Sequence[Treatment]) -> str | None:
    """None when balanced, else why not."""
    for j, factor in enumerate(factors):
        if len({t.levels[j] for t in found}) < 2:
            return f"factor {factor!r} has one level among these treatments"
    counts = {t.values.shape[0] for t in found}
    if len(counts) != 1:
        return f"treatments hold different numbers of samples ({min(counts)} to {max(counts)})"
    full = math.prod(len({t.levels[j] for t in found}) for j in range(len(factors)))
    if len(found) != full:
        return f"{len(found)} of the {full} level combinations present (not a full factorial)"
    if next(iter(counts)) < 2:
        return "one sample per treatment leaves no residual"
    return None


def _table(frame, columns: dict[str, str], terms: Sequence[tuple[str, ...]], typ: int) -> tuple[list, Any]:
    """(name, row) per term of ``anova_lm`` on ``y`` with these terms, and the fit."""
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    formula = {":".join(f"C({columns[f]})" for f in term): ":".join(term) for term in terms}
    fit = ols("y ~ " + " + ".join(formula), data=frame).fit()
    table = anova_lm(fit, typ=typ)
    return [(formula.get(str(term), "residual" if term == "Residual" else None), row)
            for term, row in table.iterrows()], fit


def _row(row, stratum: str) -> dict:
    f_value, p_value = row.get("F"), row.get("PR(>F)")
    return {"df": float(row["df"]), "sum_sq": float(row["sum_sq"]),
            "F": None if f_value is None or not math.isfinite(f_value) else float(f_value),
            "p": None if p_value is None or not math.isfinite(p_value) else float(p_value), "stratum": stratum}


def anova(factors: list[str], found: Sequence[Treatment], plots: WholePlots | None = None) -> dict:
    why = balanced(factors, found)
    if why is not None:
        return {"balanced": False, "reason": why, "terms": None}
    import numpy as np
    import pandas as pd

    # Plain column names, so any factor name is safe inside a formula.
    columns = {f: f"f{j}" for j, f in enumerate(factors)}
    frame = pd.DataFrame({
        "y": np.concatenate([t.values for t in found]),
        **{columns[f]: np.concatenate([np.full(t.values.shape[0], t.levels[j]) for t in found])
           for j, f in enumerate(factors)},
    })
    terms: list[tuple[str, ...]] = [(f,) for f in factors] + list(combinations(factors, 2))
    out: dict[str, dict] = {}
    if plots is None:
        for name, row in _table(frame, columns, terms, typ=2)[0]:
            out[name] = _row(row, "between samples")
        return {"balanced": True, "reason": None, "terms": out}
    whole = [term for term in terms if all(f in plots.names for f in term)]
    batch_frame = pd.DataFrame({
        "y": list(plots.batch_means.values()),
        **{columns[f]: [plots.batch_cell[b][k] for b in plots.batch_means] for k, f in enumerate(plots.names)}})
    per_batch = frame.shape[0] / len(plots.batch_means)   # sums of squares on the samples' scale, as aov's
    if plots.dof < 1:     # nothing to test against (statsmodels refuses an F-test without residual)
        for term in whole:
            out[":".join(term)] = {"df": float(math.prod(len({t.levels[factors.index(f)] for t in found}) - 1
                                                         for f in term)),
                                   "sum_sq": None, "F": None, "p": None, "stratum": BETWEEN}
    else:
        for name, row in _table(batch_frame, columns, whole, typ=2)[0]:
            entry = _row(row, BETWEEN)
            entry["sum_sq"] *= per_batch
            out["residual (between batches)" if name == "residual" else name] = entry
    # Within batches: each sample less its batch's mean (the projection that removes the batch stratum), fitted
    # on every term so that an interaction with a whole-plot factor keeps its one contrast; whole-plot terms have
    # nothing left there, and the residual gives up one degree of freedom per batch rather than per cell.
    from scipy.stats import f as f_dist

    batch = np.concatenate([t.batches.astype(str) for t in found])     # type: ignore[union-attr]
    frame["y"] = frame["y"] - frame.groupby(batch)["y"].transform("mean")
    table, fit = _table(frame, columns, whole + [t for t in terms if t not in whole], typ=1)
    rows = [(name, row) for name, row in table
            if name is not None and name != "residual" and tuple(name.split(":")) not in whole]
    residual_df = frame.shape[0] - len(plots.batch_means) - sum(float(row["df"]) for _, row in rows)
    residual_ms = float(fit.ssr) / residual_df if residual_df > 0 else math.nan
    for name, row in rows:
        f_value = float(row["sum_sq"]) / float(row["df"]) / residual_ms
        out[name] = {"df": float(row["df"]), "sum_sq": float(row["sum_sq"]), "F": f_value,
                     "p": float(f_dist.sf(f_value, float(row["df"]), residual_df)), "stratum": WITHIN}
    out["residual"] = {"df": float(residual_df), "sum_sq": float(fit.ssr), "F": None, "p": None, "stratum": WITHIN}
    return {"balanced": True, "reason": None if plots.dof else plots.untestable_reason(), "terms": out}
