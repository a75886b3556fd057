"""Student t intervals for screening means and within-batch effects: the intervals that cover at small n.

With the default one sample per execution, a treatment holds ``executions``
samples (2 in configs/screening.toml), where BCa covers 73% at n = 2 and 86%
at n = 3 for a nominal 95% (bench/bench_coverage.py), as a bootstrap cannot
see the tails of three values.  So effects get t intervals at every n (they
cover on normal and lognormal data from n = 2 to 100, where BCa falls to 92%
on lognormal data even at 100), and treatment means below ``BCA_MIN_SAMPLES``
per treatment:

- an effect (a contrast ``Σ c_t m_t`` of treatment means): ``s² Σ c_t²/n_t``
  with ``s²`` the residual variance of ``y ~ treatment + batch`` (statsmodels
  OLS; without batches, the pooled within-treatment variance), so batch
  offsets, which within-batch contrasts cancel, do not widen it;
- a treatment mean: in a split plot with whole-plot degrees of freedom, the
  pooled strata (``analysis.screen.split_plot.mean_test``); else its own
  spread, over its batch means where it ran in two or more batches (samples
  in one batch share its offset), or over its samples (n - 1 degrees of
  freedom).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from analysis.screen.effects import Treatment

if TYPE_CHECKING:
    import numpy as np

# At and above this many samples in every treatment, treatment means get BCa (TN 1855's method);
# below, t intervals (bench/bench_coverage.py: BCa under-covers by more than 1.5 points there).
BCA_MIN_SAMPLES = 100


@dataclass(frozen=True)
class StratumTest:
    low: float | None
    high: float | None
    p: float | None
    dof: int
    why: str | None       # why there is no interval


def t_test(estimate: float, se: float, dof: int, confidence: float) -> StratumTest:
    """A t interval and two-sided p-value of ``estimate`` with standard error ``se``."""
    from scipy.stats import t as student_t

    if dof < 1:
        return StratumTest(None, None, None, 0, "no degrees of freedom left for the error")
    if se == 0.0:
        return StratumTest(estimate, estimate, None if estimate == 0 else 0.0, dof, None)
    half = float(student_t.ppf(0.5 + confidence / 2.0, dof)) * se
    p = float(2.0 * student_t.sf(abs(estimate) / se, dof))
    return StratumTest(estimate - half, estimate + half, p, dof, None)


def residual_variance(found: Sequence[Treatment]) -> tuple[float, int]:
    """(s², degrees of freedom) of ``y ~ treatment (+ batch)``, statsmodels OLS."""
    import numpy as np
    import pandas as pd
    from statsmodels.formula.api import ols

    frame = pd.DataFrame({"y": np.concatenate([t.values for t in found]),
                          "t": np.concatenate([np.full(t.values.shape[0], i) for i, t in enumerate(found)])})
    formula = "y ~ C(t)"
    if all(t.batches is not None for t in found):
        frame["b"] = np.concatenate([t.batches.astype(str) for t in found])   # type: ignore[union-attr]
        if frame["b"].nunique() > 1:
            formula += " + C(b)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # batches nest in whole-plot cells: rank-deficient on purpose
        fit = ols(formula, data=frame).fit()
    dof = int(round(fit.df_resid))
    return (float(fit.ssr) / dof if dof > 0 else math.nan), dof


def contrast_test(estimate: float, coefficients: np.ndarray, found: Sequence[Treatment], variance: float, dof: int,
                  confidence: float) -> StratumTest:
    se = math.sqrt(variance * sum(float(c) ** 2 / t.values.shape[0] for c, t in zip(coefficients, found)))
    return t_test(estimate, se, dof, confidence)


def mean_test(t: Treatment, confidence: float) -> StratumTest:
    import numpy as np

    values = t.values
    if t.batches is not None and len(set(t.batches.tolist())) > 1:
        values = np.array([float(t.values[t.batches == b].mean()) for b in sorted(set(t.batches.tolist()), key=str)])
    if values.shape[0] < 2:
        return StratumTest(None, None, None, 0, "one sample: no spread to make an interval from")
    se = float(values.std(ddof=1)) / math.sqrt(values.shape[0])
    return t_test(float(t.values.mean()), se, values.shape[0] - 1, confidence)
