"""The O(n^2) EDM path gives exactly the changepoints of EDM as written.

Thousands of seeded series in the shapes where a faster median or a
reordered sum would show: many equal values (ties in every median, equal
statistics whose first maximum must win), integers, timer readings quantised
to a clock tick, steps, constants, signed zeros, warm-ups and plain noise;
n from 60 to 600, min_size 5 and 30, percent 0.1 / 0.25 / 0.5, all three
penalty degrees.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis.pilot import edm

SERIES_PER_SHAPE = 400


def ties(rng, n):
    return rng.integers(0, rng.integers(2, 6), n).astype(float)


def integers(rng, n):
    return rng.integers(-1000, 1000, n).astype(float)


def quantised_timer(rng, n):
    tick = rng.choice([1e-6, 1e-3, 4e-3])  # a clock's resolution, in seconds
    level = np.where(np.arange(n) < rng.integers(0, n // 2), 0.012, 0.010)
    return np.round((level + rng.normal(0, 0.0005, n)) / tick) * tick


def steps(rng, n):
    cuts = np.sort(rng.integers(0, n, rng.integers(1, 5)))
    levels = rng.choice([1.1, 5.1, 2.0, 3.0], len(cuts) + 1)
    x = levels[np.searchsorted(cuts, np.arange(n), side="right")]
    return x + (rng.normal(0, 0.3, n) if rng.random() < 0.5 else 0.0)


def constants(rng, n):
    x = np.full(n, rng.choice([0.0, 3.14, 1e9]))
    if rng.random() < 0.5:
        x[rng.integers(0, n)] += 1.0  # one spike
    return x


def signed_zeros(rng, n):
    return rng.choice([0.0, -0.0, 1.0], n, p=[0.45, 0.45, 0.1])


def warmup(rng, n):
    i = np.arange(n)
    return 1.0 + 2.0 * np.exp(-i / rng.uniform(5, 60)) + rng.normal(0, 0.05, n)


def noise(rng, n):
    return rng.standard_t(3, n) if rng.random() < 0.5 else rng.normal(0, 1, n)


SHAPES = [ties, integers, quantised_timer, steps, constants, signed_zeros, warmup, noise]


@pytest.mark.parametrize("shape", SHAPES, ids=[s.__name__ for s in SHAPES])
def test_fast_equals_reference(shape):
    rng = np.random.default_rng(20260412 + SHAPES.index(shape))
    found = 0
    for k in range(SERIES_PER_SHAPE):
        # Mostly short series (the reference is O(n^2 log n)), some up to 600.
        n = 60 + int(540 * rng.random() ** 3)
        x = shape(rng, n)
        params = dict(min_size=int(rng.choice([5, 30])), percent=float(rng.choice([0.1, 0.25, 0.5])),
                      degree=int(rng.choice([0, 1, 2])))
        fast = edm.changepoints(x, **params)
        reference = edm.changepoints(x, algorithm="reference", **params)
        assert fast == reference, f"{shape.__name__} series {k}: n={n} {params}"
        found += len(fast)
    # The comparison means something only where changepoints are found.
    if shape is not constants:
        assert found >= SERIES_PER_SHAPE, f"only {found} changepoints in {SERIES_PER_SHAPE} series"
