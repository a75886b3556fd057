"""Sison–Glaz simultaneous confidence intervals for multinomial proportions.

warmup_stats' diff compares the class counts of a benchmark before and after
with R's ``MultinomialCI::multinomialCI(counts, alpha)``, which follows
Sison & Glaz (1995) as coded by May & Johnson (2000): the multinomial is
represented as independent Poisson cells conditioned on their sum; the
probability that every cell stays within ``x_i ± c`` is approximated with an
Edgeworth expansion of the sum of the truncated Poisson variables, and the
smallest integer ``c`` reaching ``1 - alpha`` is interpolated (``delta``)
between ``c - 1`` and ``c``.

The returned intervals are ``[x_i/n - c/n, x_i/n + c/n + 2*delta/n]``
clipped to [0, 1], with ``c`` the last integer *below* the target coverage;
this asymmetric form is what MultinomialCI returns.

Kept rather than statsmodels' ``multinomial_proportions_confint(method="sison-glaz")``
because statsmodels differs from R: by 0.0057 at ``[10, 0, 0, 0]`` and by 0.93
at ``[29, 1, 0, 0]`` (alpha 0.01), where this module matches R's
MultinomialCI 1.2 within 2e-8 (tests/fixtures/multinomial_ci holds R's numbers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import poisson

# warmup_stats' diff significance level (bin/diff_results ALPHA).
DIFF_ALPHA = 0.01


def _truncated_moments(c: int, lam: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per cell: mean, variance, 3rd and 4th central moments and probability
    mass of a Poisson(lam) variable truncated to [lam-c, lam+c]."""
    upper = lam + c
    lower = np.maximum(lam - c, 0.0)
    mass = poisson.cdf(upper, lam) - poisson.cdf(lower - 1, lam)
    # Factorial moments E[X(X-1)...(X-r+1)] of the truncated variable:
    # lam^r * P(lower-r <= X <= upper-r) / P(lower <= X <= upper).
    r = np.arange(1, 5)[:, None]
    inner = poisson.cdf(upper - r, lam) - poisson.cdf(lower - r - 1, lam)
    m1, f2, f3, f4 = lam**r * inner / mass
    var = f2 + m1 - m1**2
    mu3 = f3 + f2 * (3 - 3 * m1) + (m1 - 3 * m1**2 + 2 * m1**3)
    mu4 = (f4 + f3 * (6 - 4 * m1) + f2 * (7 - 12 * m1 + 6 * m1**2)
           + m1 - 4 * m1**2 + 6 * m1**3 - 3 * m1**4)
    return m1, var, mu3, mu4, mass


def coverage(c: int, counts: Sequence[float]) -> float:
    """Edgeworth approximation of P(all cells within counts[i] ± c | sum = n)."""
    lam = np.asarray(counts, dtype=np.float64)
    n = float(lam.sum())
    mean, var, mu3, mu4, mass = _truncated_moments(c, lam)
    s_mean = float(mean.sum())
    s_var = float(var.sum())
    s_mu3 = float(mu3.sum())
    s_excess = float((mu4 - 3 * var**2).sum())  # fourth cumulant
    prob_cells = float(np.prod(mass))
    # 1 / P(N = n) for N ~ Poisson(n): conditions the cells on their sum.
    inv_prob_sum = 1.0 / float(poisson.cdf(n, n) - poisson.cdf(n - 1, n))
    if s_var <= 0.0:
        # Every cell is empty: nothing can vary, the intervals trivially hold.
        return 1.0
    z = (n - s_mean) / math.sqrt(s_var)
    g1 = s_mu3 / s_var**1.5
    g2 = s_excess / s_var**2
    poly = (1 + g1 * (z**3 - 3 * z) / 6 + g2 * (z**4 - 6 * z**2 + 3) / 24
            + g1**2 * (z**6 - 15 * z**4 + 45 * z**2 - 15) / 72)
    density = poly * math.exp(-z * z / 2) / (math.sqrt(2) * math.gamma(0.5))
    return inv_prob_sum * prob_cells * density / math.sqrt(s_var)


def sison_glaz(counts: Sequence[float], alpha: float = DIFF_ALPHA) -> list[tuple[float, float]]:
    """Simultaneous (1 - alpha) intervals, one (lower, upper) per category.

    Same algorithm and return values as R's MultinomialCI::multinomialCI.
    """
    if not counts:
        raise ValueError("sison_glaz needs at least one category")
    if any(x < 0 for x in counts):
        raise ValueError(f"counts must be non-negative, got {list(counts)}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    n = sum(counts)
    if n <= 0:
        raise ValueError("counts sum to zero: no observations")
    target = 1.0 - alpha
    prev = 0.0
    found = 0
    current = 0.0
    # Scan c = 1..n for the first c whose coverage crosses the target.
    for c in range(1, int(n) + 1):
        current = coverage(c, counts)
        if current > target and prev < target:
            found = c
            break
        prev = current
    if found == 0:
        # The target was never crossed (R would return NaNs here); the only
        # honest interval is the whole of [0, 1].
        return [(0.0, 1.0) for _ in counts]
    delta = (target - prev) / (current - prev)
    c_below = found - 1
    out = []
    for x in counts:
        p = x / n
        out.append((float(max(0.0, p - c_below / n)),
                    float(min(1.0, p + c_below / n + 2 * delta / n))))
    return out
