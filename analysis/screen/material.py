""""Material significance" (TN 1855 §5): is an effect large enough to show in
an experiment of ``n`` samples per treatment?

Each effect is set against the width of a t-interval of one treatment mean
at ``n`` samples, from the pooled within-treatment standard deviation: an
effect narrower than that width would be hidden by the interval's own
uncertainty (TN 1855: at n = 40 the effects are obscured; "hundreds of
samples" are needed). The TN's coverage study by subsampling is not done here.
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from analysis.screen.effects import Treatment

DEFAULT_SAMPLE_SIZE = 40  # TN 1855's example of a small-sample experiment


def pooled_sd(found: Sequence[Treatment]) -> float:
    import numpy as np

    dof = sum(t.values.shape[0] - 1 for t in found)
    if dof <= 0:
        return math.nan
    return math.sqrt(sum(float(np.var(t.values)) * t.values.shape[0] for t in found) / dof)


def material_significance(found: Sequence[Treatment], named_effects: dict[str, float], n: int,
                          confidence: float) -> dict:
    from scipy.stats import t as student_t

    sd = pooled_sd(found)
    width = 2.0 * float(student_t.ppf(0.5 + confidence / 2.0, n - 1)) * sd / math.sqrt(n) if n > 1 else math.inf
    magnitudes = [abs(v) for v in named_effects.values()]
    return {
        "sample_size": n,
        "pooled_sd": sd,
        "ci_width": width,
        "median_effect": statistics.median(magnitudes) if magnitudes else None,
        "max_effect": max(magnitudes) if magnitudes else None,
        "effects": {name: {"effect": value, "ratio": abs(value) / width if width > 0 else None,
                           "material": abs(value) > width}
                    for name, value in named_effects.items()},
    }
