"""Block plots (Filliben; NIST e-Handbook §1.3.3.3), as TN 1855 reads them.

For a primary factor, each box is one combination of the other factors'
levels and holds the mean of each of the primary factor's levels there. The
factor counts as significant when its levels are in the same order in every
complete box (one holding all its levels). The chance of that under no
effect is ``1 / (k!)^(N-1)`` for k levels and N complete boxes, which for a
2-level factor is TN 1855's ``1 / 2^(N-1)``. Boxes missing a level (excluded
treatments, or a fractional design, where no two treatments differ in one
factor alone) are shown but not counted: an exclusion stays local.

``consistent`` is ``None`` ("cannot tell") with fewer than two complete
boxes: one box always orders its levels one way (chance 1), and none orders
nothing, so neither is evidence for or against the factor.
"""

from __future__ import annotations

import math
from typing import Sequence

from analysis.screen.effects import Treatment

# Fewer complete boxes than this cannot show an ordering that chance would not.
MIN_COMPLETE_BOXES = 2


def block_plot(factors: Sequence[str], found: Sequence[Treatment], primary: int) -> dict:
    levels = sorted({t.levels[primary] for t in found})
    boxes: dict[tuple[int, ...], dict[int, Treatment]] = {}
    for t in found:
        others = t.levels[:primary] + t.levels[primary + 1:]
        boxes.setdefault(others, {})[t.levels[primary]] = t
    other_names = [f for j, f in enumerate(factors) if j != primary]
    out_boxes = []
    orders = []
    for others in sorted(boxes):
        box = boxes[others]
        means = {level: float(box[level].values.mean()) for level in levels if level in box}
        complete = len(means) == len(levels)
        # Ties keep level order, so equal means read as the same ordering every time.
        order = sorted(means, key=lambda level: (means[level], level)) if complete else None
        if order is not None:
            orders.append(tuple(order))
        out_boxes.append({
            "others": dict(zip(other_names, others)),
            "means": {str(level): mean for level, mean in means.items()},
            "n": {str(level): int(box[level].values.shape[0]) for level in means},
            "complete": complete,
            "order": order,
        })
    # A factor left with one level (exclusions) orders nothing.
    complete_boxes = len(orders) if len(levels) > 1 else 0
    consistent = None if complete_boxes < MIN_COMPLETE_BOXES else len(set(orders)) == 1
    chance = (1.0 / math.factorial(len(levels)) ** (complete_boxes - 1)) if complete_boxes else None
    return {
        "levels": levels,
        "boxes": out_boxes,
        "complete_boxes": complete_boxes,
        "consistent": consistent,
        "ordering": list(orders[0]) if orders and len(set(orders)) == 1 else None,
        "why": None if consistent is not None else (
            f"{complete_boxes} complete box(es): a box holding every level of {factors[primary]} at one "
            "setting of the other factors is needed twice to see an ordering repeat"),
        "chance": chance,
    }


def block_plots(factors: Sequence[str], found: Sequence[Treatment], whole_plot: Sequence[str] = ()) -> dict:
    """A block plot for every factor as the primary one (one factor alone has a single box).

    A whole-plot factor (one needing a reboot) is compared between batches in every box alike, so its boxes
    share the batches' offsets and are not independent: its ordering is shown, but not judged."""
    out = {factor: block_plot(factors, found, j) for j, factor in enumerate(factors)}
    for factor in whole_plot:
        if factor in out:
            out[factor].update(consistent=None, chance=None, why=(
                f"{factor} needs a reboot: every box compares the same batches, so the boxes are not independent "
                "and the chance of a consistent ordering does not apply; its whole-plot test does"))
    return out
