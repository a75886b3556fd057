"""The C reference is EDM as methods.md states it, beyond what the goldens cover.

Pilot's golden rows all use min_size 30 and the linear penalty; here a
literal Python transcription of methods.md §1 (a) (medians of sorted
slices, fresh for every candidate, O(n^3 log n), so short series only)
checks the C reference on small min_size, every penalty degree and tied
values, where the first-maximum rule and the penalty matter most.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis.pilot import edm


def median(values: list[float]) -> float:
    v = sorted(values)
    k = (len(v) - 1) // 2
    return v[k] if len(v) % 2 else (v[k] + v[k + 1]) / 2


def literal_edm(z: list[float], min_size: int, percent: float, degree: int) -> list[int]:
    n = len(z)
    prev, number, F = [0] * (n + 1), [0] * (n + 1), [0.0] * (n + 1)
    G = {0: lambda k: 0.0, 1: lambda k: 1.0, 2: lambda k: 2 * float(k) + 1}[degree]
    for s in range(2 * min_size, n + 1):
        for t in range(min_size, s - min_size + 1):
            p = prev[t]
            d = median(z[p:t]) - median(z[t:s])
            tmp = F[t] + ((t - p) * (s - t) / float((s - p) * (s - p))) * (d * d)
            if tmp > F[s]:
                F[s], prev[s], number[s] = tmp, t, number[t] + 1
        q = prev[s]
        if q and F[s] - F[q] < percent * G(number[q]) * F[q]:
            number[s], F[s], prev[s] = number[q], F[q], prev[q]
    out, at = [], n
    while at:
        if prev[at]:
            out.append(prev[at])
        at = prev[at]
    return sorted(out)


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_reference_is_the_literal_algorithm(degree):
    rng = np.random.default_rng(7 + degree)
    found = 0
    for k in range(120):
        n = int(rng.integers(12, 100))
        x = [float(v) for v in (rng.integers(0, 3, n) if k % 2 else np.round(rng.normal(0, 1, n), 1))]
        min_size = int(rng.choice([2, 3, 5]))
        percent = float(rng.choice([0.1, 0.25, 0.5]))
        want = literal_edm(x, min_size, percent, degree)
        assert edm.changepoints(x, min_size=min_size, percent=percent, degree=degree,
                                algorithm="reference") == want, f"series {k}: n={n} min_size={min_size}"
        found += len(want)
    assert found >= 120
