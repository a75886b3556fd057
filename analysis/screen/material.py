""""Material significance" (TN 1855 §5): is an effect large enough to show in
an experiment of ``n`` samples per treatment?

Each effect is set against the width of a t-interval of one treatment mean
at ``n`` samples, from the pooled within-treatment standard deviation: an
effect narrower than that width would be hidden by the interval's own
uncertainty (TN 1855: at n = 40 the effects are obscured; "hundreds of
samples" are needed).

Coverage by subsampling (TN 1855 §5, which drew 15,000 subsamples of the
5000 bash-user values of one treatment): from the treatment with the most
samples, ``subsamples`` random subsets of ``n`` values (without replacement,
seeded) each get a t-interval and a BCa interval (``bca_resamples``
replications, one batch); coverage is the share that contains the
treatment's full-sample mean, beside the nominal level. Left out (with the
reason) when that treatment has fewer than ``2 n`` samples.
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from analysis.screen.effects import Treatment

DEFAULT_SAMPLE_SIZE = 40  # TN 1855's example of a small-sample experiment
DEFAULT_SUBSAMPLES = 1000
DEFAULT_BCA_RESAMPLES = 2000


def pooled_sd(found: Sequence[Treatment]) -> float:
    import numpy as np

    dof = sum(t.values.shape[0] - 1 for t in found)
    if dof <= 0:
        return math.nan
    return math.sqrt(sum(float(np.var(t.values)) * t.values.shape[0] for t in found) / dof)


def coverage(found: Sequence[Treatment], n: int, confidence: float, seed: int,
             subsamples: int = DEFAULT_SUBSAMPLES, bca_resamples: int = DEFAULT_BCA_RESAMPLES) -> dict:
    """Coverage of nominal t and BCa intervals of n-sample means (module doc)."""
    import numpy as np
    from scipy.stats import t as student_t

    from analysis.screen.bca import BcaError, acceleration, interval, resample_means

    largest = max(range(len(found)), key=lambda i: found[i].values.shape[0])
    values = found[largest].values
    out: dict = {"treatment": list(found[largest].levels), "subsamples": subsamples, "sample_size": n,
                 "nominal": confidence}
    if values.shape[0] < 2 * n:
        return dict(out, t_coverage=None, bca_coverage=None, t_width_median=None,
                    reason=f"the largest treatment holds {values.shape[0]} samples, fewer than 2 x {n}")
    truth = float(values.mean())
    rng = np.random.default_rng(seed)
    picks = np.stack([rng.choice(values, size=n, replace=False) for _ in range(subsamples)])
    means, sds = picks.mean(axis=1), picks.std(axis=1, ddof=1)
    half = float(student_t.ppf(0.5 + confidence / 2.0, n - 1)) * sds / math.sqrt(n)
    t_cover = float(np.mean((means - half <= truth) & (truth <= means + half)))
    hits = 0
    for i, pick in enumerate(picks):
        try:
            found_iv = interval(resample_means(pick, bca_resamples, seed, f"coverage/{i}"), float(means[i]),
                                acceleration([pick], [1.0]), confidence)
        except BcaError:
            continue  # counts as a miss: no interval
        hits += found_iv.low <= truth <= found_iv.high
    return dict(out, t_coverage=t_cover, bca_coverage=hits / subsamples, t_width_median=float(np.median(2 * half)),
                reason=None)


def material_significance(found: Sequence[Treatment], named_effects: dict[str, float], n: int,
                          confidence: float, seed: int = 1) -> dict:
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
        "coverage": coverage(found, n, confidence, seed),
        "effects": {name: {"effect": value, "ratio": abs(value) / width if width > 0 else None,
                           "material": abs(value) > width}
                    for name, value in named_effects.items()},
    }
