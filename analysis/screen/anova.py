"""ANOVA of a screening table (statsmodels ``ols`` + ``anova_lm``), only where
the design is balanced: every combination of the factors' levels present,
each with the same number of samples. Otherwise the sums of squares depend
on the order of terms and TN 1855's block plots are the better reading, so
the reason is given instead of a table.

Model: every factor's main effect and every 2-factor interaction (factors
as categorical). TN 1855 mentions ANOVA but does not use it.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Sequence

from analysis.screen.effects import Treatment


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


def anova(factors: Sequence[str], found: Sequence[Treatment]) -> dict:
    why = balanced(factors, found)
    if why is not None:
        return {"balanced": False, "reason": why, "terms": None}
    import numpy as np
    import pandas as pd
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    # Plain column names, so any factor name is safe inside a formula.
    columns = [f"f{j}" for j in range(len(factors))]
    frame = pd.DataFrame({
        "y": np.concatenate([t.values for t in found]),
        **{col: np.concatenate([np.full(t.values.shape[0], t.levels[j]) for t in found])
           for j, col in enumerate(columns)},
    })
    terms = [f"C({c})" for c in columns] + [f"C({a}):C({b})" for a, b in combinations(columns, 2)]
    table = anova_lm(ols("y ~ " + " + ".join(terms), data=frame).fit(), typ=2)
    names = dict(zip(terms, list(factors) + [f"{a}:{b}" for a, b in combinations(factors, 2)]))
    names["Residual"] = "residual"
    out = {}
    for term, row in table.iterrows():
        f_value, p_value = row.get("F"), row.get("PR(>F)")
        out[names.get(term, term)] = {
            "df": float(row["df"]), "sum_sq": float(row["sum_sq"]),
            "F": None if f_value is None or not math.isfinite(f_value) else float(f_value),
            "p": None if p_value is None or not math.isfinite(p_value) else float(p_value),
        }
    return {"balanced": True, "reason": None, "terms": out}
