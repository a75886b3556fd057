"""BCa bootstrap intervals for means and for effects (linear combinations of
independent samples' means), as TN 1855 uses them (methods.md §3.2, §3.4).

The interval is scipy's ``scipy.stats.bootstrap(method='BCa')``, formula for
formula: the bias correction from the mid-rank ``(#{θ* < θ̂} + #{θ* ≤ θ̂}) / 2B``,
scipy's multi-sample jackknife acceleration, and endpoints from
``np.percentile``'s linear interpolation. The tests check that, given the
same bootstrap distribution, the endpoints equal scipy's. Where this module
deviates from calling scipy, and why:

- the resampling: ``analysis._pelt.bootstrap_means`` (xoshiro256** in C, the
  steady-perf bootstrap's kernel) draws the resample means about 10x faster
  than numpy's fancy indexing, which a TN-sized analysis needs (12 x 4
  intervals of 5000 samples with 50,000 replications in seconds); the stream
  is seeded per (seed, sample, batch), so results do not depend on the order
  in which samples are analysed;
- the jackknife: scipy forms all n leave-one-out samples (O(n^2)); for a mean
  the jackknife differences are exact without them:
  ``(n - 1)(mean(θ₋ᵢ) - θ₋ᵢ) = xᵢ - x̄``, so the acceleration is O(n);
- a sample whose values are all equal gives ``[θ̂, θ̂]`` as Flater's bootBCa
  does (scipy returns NaN with a warning).

Where scipy differs from Flater's bootBCa (strict ``<`` for the bias
correction, type-1 quantiles) we follow scipy: the two agree to within
Monte-Carlo error, and scipy is the maintained library the project uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class BcaInterval:
    estimate: float
    low: float
    high: float
    acceleration: float
    bias_correction: float


class BcaError(ValueError):
    """The interval does not exist for these data (bootBCa: "alpha value too extreme")."""


def acceleration(samples: Sequence[np.ndarray], coefficients: Sequence[float]) -> float:
    """The jackknife acceleration of ``Σ c_j mean(sample_j)``, in O(Σ n_j).

    scipy's multi-sample rule: leaving out one value of sample j at a time,
    ``U_ji = (n_j - 1)(mean_i θ₋ᵢ - θ₋ᵢ) = c_j (x_ji - x̄_j)``; then
    ``a = Σ_j ΣU³/n_j³ / (6 (Σ_j ΣU²/n_j²)^1.5)`` (for one sample this is
    bootBCa's ``Σuu³ / (6 (Σuu²)^1.5)``). 0 when every sample is constant.
    """
    import numpy as np

    num = den = 0.0
    for values, c in zip(samples, coefficients):
        if c == 0:
            continue
        n = values.shape[0]
        d = c * (values - values.mean())
        d2 = d * d
        num += float(np.dot(d2, d)) / n**3
        den += float(d2.sum()) / n**2
    return 0.0 if den == 0 else num / (6.0 * den**1.5)


def interval(distribution: np.ndarray, estimate: float, accel: float, confidence: float) -> BcaInterval:
    """The BCa interval from a bootstrap distribution, with scipy's conventions."""
    import numpy as np
    from scipy.special import ndtr, ndtri

    low_value, high_value = float(distribution.min()), float(distribution.max())
    if low_value == high_value:
        return BcaInterval(estimate, estimate, estimate, 0.0, 0.0)
    size = distribution.shape[0]
    below = int(np.count_nonzero(distribution < estimate))
    at_or_below = int(np.count_nonzero(distribution <= estimate))
    z0 = float(ndtri((below + at_or_below) / (2.0 * size)))
    if not math.isfinite(z0):
        raise BcaError("the estimate lies outside its bootstrap distribution")
    alpha = (1.0 - confidence) / 2.0
    tails = []
    for z_alpha in (float(ndtri(alpha)), float(ndtri(1.0 - alpha))):
        shifted = z0 + z_alpha
        if accel * shifted >= 1.0:
            raise BcaError(f"confidence {confidence:g} is too extreme for these data (acceleration {accel:.3g})")
        tails.append(float(ndtr(z0 + shifted / (1.0 - accel * shifted))))
    low, high = np.percentile(distribution, [100.0 * tails[0], 100.0 * tails[1]])
    return BcaInterval(estimate, float(low), float(high), accel, z0)


def resample_means(values: np.ndarray, resamples: int, seed: int, stream: str) -> np.ndarray:
    """``resamples`` bootstrap means of ``values`` (C kernel; stream from seed and name)."""
    import numpy as np

    import analysis._pelt as _pelt
    from analysis.bootstrap import generator_state

    data = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty(resamples, dtype=np.float64)
    _pelt.bootstrap_means(data, np.array([0, data.shape[0]], dtype=np.int64), np.array([0, 1], dtype=np.int64),
                          resamples, *generator_state(seed, stream), out)
    return out
