"""The split plot's whole-plot stratum: factors needing a reboot, tested against batch-to-batch variation.

A factor whose level needs a reboot keeps one level through a batch (a whole
plot), so its effect is measured between batches, and each batch carries its
own offset (a kernel install, a boot's layout).  Its effect is therefore
tested against the spread of batch means within each combination of the
whole-plot factors' levels (a cell), not against the samples' spread: the
whole-plot stratum of R's ``aov(y ~ ... + Error(batch))``.

Each batch's mean is the mean of its treatments' means in that batch (every
treatment weighs alike, as in the effects); a whole-plot effect is a
contrast of cell means ``Σ w_c m_c`` with the weights its treatments carry,
variance ``s² Σ w_c² / k_c`` (``k_c`` batches in cell c, ``s²`` the pooled
variance of batch means within cells, ``B - C`` degrees of freedom), and a t
interval and t-test.  With one batch per cell (``B = C``) there is nothing to
test against: no interval, no p-value, and the reason.  For a balanced design
this equals the whole-plot stratum of ``aov`` (tests/analysis/test_screen_split_plot.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from analysis.screen.effects import Treatment
from analysis.screen.t_intervals import StratumTest, t_test

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class WholePlots:
    factors: tuple[int, ...]                 # indices of the whole-plot factors
    names: tuple[str, ...]
    batch_means: dict[object, float]         # batch id -> mean of its treatments' means
    batch_cell: dict[object, tuple[int, ...]]   # batch id -> its whole-plot levels
    treatments_per_batch: dict[object, int]

    @property
    def cells(self) -> int:
        return len(set(self.batch_cell.values()))

    @property
    def dof(self) -> int:
        """Degrees of freedom for batch-to-batch error."""
        return len(self.batch_means) - self.cells

    def untestable_reason(self) -> str:
        names = ", ".join(self.names)
        return (f"{names} ran in one batch per level combination ({len(self.batch_means)} batch(es) for "
                f"{self.cells} combination(s)), so its effect is completely confounded with batch-to-batch "
                f"variation: no interval or p-value; {2 * self.cells} batches (screening.batches_per_level = 2) "
                "make it testable")

    def cell_variance(self) -> float:
        """s²: pooled variance of batch means within cells."""
        by_cell: dict[tuple[int, ...], list[float]] = {}
        for b, mean in self.batch_means.items():
            by_cell.setdefault(self.batch_cell[b], []).append(mean)
        ss = sum(sum((m - sum(ms) / len(ms)) ** 2 for m in ms) for ms in by_cell.values())
        return ss / self.dof

    def batches_in(self) -> dict[tuple[int, ...], int]:
        counts: dict[tuple[int, ...], int] = {}
        for cell in self.batch_cell.values():
            counts[cell] = counts.get(cell, 0) + 1
        return counts


def whole_plots(factors: Sequence[str], found: Sequence[Treatment], whole_plot: Sequence[str]) -> WholePlots | None:
    """The whole-plot structure, or None when no factor is whole-plot or samples carry no batch."""
    if not whole_plot or any(t.batches is None for t in found):
        return None
    idx = tuple(list(factors).index(f) for f in whole_plot if f in factors)
    if not idx:
        return None
    per_batch: dict[object, list[float]] = {}
    cell: dict[object, tuple[int, ...]] = {}
    for t in found:
        assert t.batches is not None
        for b in sorted(set(t.batches.tolist()), key=str):
            per_batch.setdefault(b, []).append(float(t.values[t.batches == b].mean()))
            cell[b] = tuple(t.levels[j] for j in idx)
    means = {b: sum(v) / len(v) for b, v in per_batch.items()}
    return WholePlots(idx, tuple(factors[j] for j in idx), means, cell, {b: len(v) for b, v in per_batch.items()})


def is_whole_plot_effect(coefficients: np.ndarray, found: Sequence[Treatment], plots: WholePlots) -> bool:
    """An effect that only contrasts whole-plot cells: equal weight for every treatment within a cell."""
    weights: dict[tuple[int, ...], set[float]] = {}
    for c, t in zip(coefficients, found):
        weights.setdefault(tuple(t.levels[j] for j in plots.factors), set()).add(round(float(c), 12))
    return all(len(w) == 1 for w in weights.values()) and any(w != {0.0} for w in weights.values())


def whole_plot_test(estimate: float, coefficients: np.ndarray, found: Sequence[Treatment], plots: WholePlots,
                    confidence: float) -> StratumTest:
    if plots.dof < 1:
        return StratumTest(None, None, None, 0, plots.untestable_reason())
    cell_weight: dict[tuple[int, ...], float] = {}
    for c, t in zip(coefficients, found):
        key = tuple(t.levels[j] for j in plots.factors)
        cell_weight[key] = cell_weight.get(key, 0.0) + float(c)
    counts = plots.batches_in()
    se = math.sqrt(plots.cell_variance() * sum(w * w / counts[cell] for cell, w in cell_weight.items()))
    return t_test(estimate, se, plots.dof, confidence)





def mean_test(t: Treatment, plots: WholePlots, variance: float, dof: int, confidence: float) -> StratumTest:
    """A treatment mean's interval in a split plot, from the pooled strata rather than its own few batch means.

    Its mean averages k batches of r samples: ``var = σ²_b/k + σ²_w/(k r)``.  The batch means' pooled
    variance ``s²_wp`` estimates ``σ²_b + σ²_w/(T r)`` (T treatments a batch) and the within-batch residual
    ``s²`` estimates ``σ²_w``, so ``var = s²_wp/k + s² (1 - 1/T)/(k r)``, with the whole-plot stratum's
    degrees of freedom.  Why those: Satterthwaite's covered 93.5-94% for a nominal 95% in 2000 simulated
    split plots (2 batches per level), these 99%+; and the treatment's own k batch means, exact, leave k - 1
    (1 with two batches: a t of 12.7) and were 2.4x wider."""
    assert t.batches is not None and plots.dof >= 1 and dof >= 1
    k = len(set(t.batches.tolist()))
    r = t.values.shape[0] / k
    per_batch = sum(plots.treatments_per_batch.values()) / len(plots.treatments_per_batch)
    se = math.sqrt(plots.cell_variance() / k + variance * (1.0 - 1.0 / per_batch) / (k * r))
    return t_test(float(t.values.mean()), se, plots.dof, confidence)
