"""Adaptive bootstrap replication (JCGM 101 §7.9.4, as Flater's bootBCa does it).

Batches of ``batch`` resamples are drawn; after each batch h (h >= 2) every
interval is also computed from each batch alone, and the Monte-Carlo error is
``u = 2 max sd(batch answers) / sqrt(h)`` over every interval's (bootstrap
mean, low, high). Drawing stops when ``u < resolution`` or ``h * batch >=
limit``; the reported intervals pool every batch. All intervals of one
analysis (treatment means and the effects built from them) share one loop,
so every effect combines the same resamples of its treatments.

``resolution=None`` draws one batch and stops (a fixed number of
replications, as TN 1855's Fig. 10 used 50,000).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Sequence

from analysis.screen.bca import BcaInterval, acceleration, interval, resample_means

if TYPE_CHECKING:
    import numpy as np

DEFAULT_BATCH = 25_000  # bootBCa's M
DEFAULT_LIMIT = 1_500_000  # bootBCa's Mlimit
DEFAULT_SEED = 1
# The default resolution: this fraction of the response's mean magnitude,
# i.e. intervals known to about three significant digits of the response.
DEFAULT_RELATIVE_RESOLUTION = 1e-3


@dataclass(frozen=True)
class Replication:
    batch: int = DEFAULT_BATCH
    limit: int = DEFAULT_LIMIT
    resolution: float | None = None
    seed: int = DEFAULT_SEED


@dataclass(frozen=True)
class Intervals:
    intervals: list[BcaInterval]
    resamples: int
    batches: int
    monte_carlo_error: float | None  # None for a single batch


def default_resolution(samples: Sequence[np.ndarray]) -> float:
    """DEFAULT_RELATIVE_RESOLUTION x the mean magnitude of the samples' means (or of their spread, if 0)."""
    import numpy as np

    scale = float(np.mean([abs(float(s.mean())) for s in samples]))
    if scale == 0.0:
        scale = float(np.mean([float(s.std()) for s in samples]))
    return DEFAULT_RELATIVE_RESOLUTION * scale


def bca_intervals(samples: Sequence[np.ndarray], names: Sequence[str], combinations: np.ndarray,
                  confidence: float, replication: Replication) -> Intervals:
    """BCa intervals of ``combinations @ [mean(s) for s in samples]``, one per row.

    ``names`` name each sample's random stream (with the seed and the batch
    number), so a sample gets the same resamples wherever it appears.
    """
    import numpy as np

    estimates = combinations @ np.array([float(s.mean()) for s in samples])
    accels = [acceleration(samples, row) for row in combinations]
    batches: list[np.ndarray] = []
    answers: list[list[tuple[float, float, float]]] = []
    error = None
    from concurrent.futures import ThreadPoolExecutor  # here: the parser reads this module's constants

    # The C resampler releases the GIL: threads draw the samples' streams in
    # parallel, and each stream depends only on (seed, name, batch).
    with ThreadPoolExecutor(max_workers=min(len(samples), os.cpu_count() or 1)) as pool:
        while True:
            h = len(batches)
            streams = [f"{name}/batch {h}" for name in names]
            means = np.vstack(list(pool.map(resample_means, samples, repeat(replication.batch),
                                            repeat(replication.seed), streams)))
            combined = combinations @ means
            batches.append(combined)
            if replication.resolution is None:
                break
            answers.append([_answer(row, est, a, confidence) for row, est, a in zip(combined, estimates, accels)])
            h += 1
            if h >= 2:
                spread = np.std(np.array(answers), axis=0, ddof=1)
                error = 2.0 * float(spread.max()) / math.sqrt(h)
                # error == 0: every interval is degenerate (constant data), nothing to refine.
                if error < replication.resolution or error == 0.0 or h * replication.batch >= replication.limit:
                    break
    pooled = np.hstack(batches)
    found = [interval(row, float(est), a, confidence) for row, est, a in zip(pooled, estimates, accels)]
    return Intervals(found, int(pooled.shape[1]), len(batches), error)


def _answer(distribution: np.ndarray, estimate: float, accel: float, confidence: float) -> tuple[float, float, float]:
    found = interval(distribution, estimate, accel, confidence)
    return float(distribution.mean()), found.low, found.high
