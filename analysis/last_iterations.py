"""A figure for a key with no steady state (issue 39 item 3): where the summary table has no steady perf
(some execution is "no steady state"), it shows this instead, marked as not a steady state.

The rule: each classified process execution (whatever its class) gives the mean of its last ``steady``
iterations (the classifier's ``--steady`` window, warmup_stats' int(0.25 x iterations); outliers left
out, as steady perf leaves them out); the key's figure is the mean of those means, with the half-width of
a t interval over them at the table's confidence (``t(1 - alpha/2, n - 1) s / sqrt(n)``; none for one
execution). Executions with no data or too short to classify are left out, as everywhere in the summary.

It is computed from the typed results (``analysis.key_results.LastIterations``) and written beside
warmup_stats' entries in the summary JSON's own coldrun table (``summary_json.LAST_ITERATIONS_KEY``), so
warmup_stats' per-benchmark shape is unchanged and every table format shows the same digits.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Sequence

from analysis import classify
from analysis.key_results import ExecutionAnnotation, KeyAnnotation, LastIterations


def figure_ranges(series: Sequence[float], e: ExecutionAnnotation, delta: str,
                  steady: int) -> list[tuple[int, int]]:
    """The iterations one classified execution's figure stands on, in order: its steady segments (warmup_stats'
    bootstrap ranges, as steady perf), or, with no steady state, its last ``steady`` (``compare``'s and
    ``plan``'s one rule; take them with ``classify.bootstrap_segments``, which leaves outliers out)."""
    assert e.classification is not None     # callers skip unclassified executions
    if e.classification == classify.NO_STEADY_STATE:
        return [(max(0, len(series) - steady), len(series))]
    return sorted(classify.steady_state(series, e.outliers, e.changepoints, e.means, e.variances,
                                        e.classification, delta).bootstrap_ranges)


def tail_mean(series: Sequence[float], outliers: Sequence[int], steady: int) -> float | None:
    """The mean of an execution's last ``steady`` iterations, outliers left out (None: none left); also
    ``compare --unsteady tail``'s value of an execution without a steady state."""
    values = classify.bootstrap_segments(series, outliers, [(max(0, len(series) - steady), len(series))])[0]
    return math.fsum(values) / len(values) if values else None


def execution_means(times: list[list[float]], annotation: KeyAnnotation, steady: int) -> list[float]:
    """Each classified execution's mean of its last ``steady`` iterations, outliers left out."""
    means = [tail_mean(series, e.outliers, steady)
             for series, e in zip(times, annotation.executions) if e.classification is not None and series]
    return [m for m in means if m is not None]


def mean_interval(means: list[float], confidence: str) -> tuple[float, float | None]:
    """The mean of ``means`` and the half-width of its t interval at ``confidence`` (None under 2 values)."""
    n = len(means)
    mean = math.fsum(means) / n
    if n < 2:
        return mean, None
    from scipy.special import stdtrit   # t's quantile function, without scipy.stats' import time

    sd = math.sqrt(math.fsum((m - mean) ** 2 for m in means) / (n - 1))
    level = float(Decimal(str(confidence)))
    return mean, float(stdtrit(n - 1, 1 - (1 - level) / 2)) * sd / math.sqrt(n)


def last_iterations(times: list[list[float]], annotation: KeyAnnotation, steady: int,
                    confidence: str) -> LastIterations | None:
    """The key's figure (module doc); None when no execution gives a mean."""
    means = execution_means(times, annotation, steady)
    if not means:
        return None
    mean, half = mean_interval(means, confidence)
    return LastIterations(mean, half, steady, len(means), str(confidence))
