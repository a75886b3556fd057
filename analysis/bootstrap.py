"""Steady-state performance bootstrap, as warmup_stats' ``bootstrapper.py``.

Rules kept from warmup_stats:

- ``B`` = 100000 resamples ("high" quality, default) or 10000 ("low").
- Every process execution gets the same number of resamples,
  ``floor(B / n_executions) + 1`` (so 8 executions -> 12501 each, 100008 in
  all), whatever its length: executions weigh equally.
- One resample of an execution draws, *within each of its steady segments*
  separately, ``len(segment)`` values with replacement, and takes the mean of
  everything drawn (never mixing segments or executions).
- The means are sorted; the reported value is the median (middle element,
  or the fsum-mean of the two middle ones); the interval comes from
  ``exclude = (1 - Decimal(confidence)) / 2``,
  ``lower_index = int((exclude * L).quantize(Decimal('1.0'), ROUND_DOWN))``,
  ``upper_index = int(((1 - exclude) * L).quantize(Decimal('1.0'), ROUND_UP))``,
  ``lower = means[lower_index]``, ``upper = means[upper_index - 1]``, and the
  reported CI is the symmetric half-width ``fsum([upper - median, median - lower]) / 2``.
- warmup_stats passes both numbers through ``str()`` of Python 2 (12
  significant digits) and ``float()`` back; :func:`py2_str_round` does the same
  so summaries print identically.

Differences, on purpose: the generator is seeded (``seed``, by default
:data:`DEFAULT_SEED`; warmup_stats' ``random`` was unseeded, so its own runs
differ, and so would one analysis' text and HTML tables) and is xoshiro256** in C
(``analysis._pelt.bootstrap_means``); each resample is summed in double
rather than with ``math.fsum`` (~1e-16 relative, far below the spread).
The generator state for a benchmark is derived from the seed *and* the
benchmark's key, so results do not depend on the order or the process in
which benchmarks are analysed.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_UP, Decimal
from typing import TYPE_CHECKING, Sequence

import analysis._pelt as _pelt

if TYPE_CHECKING:
    import numpy as np

RESAMPLES_HIGH = 100000
RESAMPLES_LOW = 10000
CONFIDENCE_LEVEL = "0.99"
# The seed used when none is given: every output of one analysis then shows
# the same steady perf numbers, and reruns reproduce them. Recorded in the
# summary JSON and printed under every table. None means fresh entropy.
DEFAULT_SEED = 1


@dataclass(frozen=True)
class BootstrapResult:
    median: float
    ci: float
    resamples_per_execution: int
    total_resamples: int


def py2_str_round(value: float) -> float:
    """``float(str(value))`` under Python 2: 12 significant digits."""
    return float("%.12g" % value)


def resamples_per_execution(total: int, n_executions: int) -> int:
    """warmup_stats: ``int(math.floor(B / n)) + 1``."""
    return int(math.floor(total / n_executions)) + 1


def generator_state(seed: int | None, key: str) -> tuple[int, int, int, int]:
    """Four non-zero-in-total 64-bit words for xoshiro256**, from (seed, key)."""
    import numpy as np  # here, not at module level: the CLI's parser reads this module's constants

    key_words = [int.from_bytes(hashlib.sha256(key.encode()).digest()[i : i + 4], "little") for i in range(0, 16, 4)]
    entropy = None if seed is None else [int(seed) & 0xFFFFFFFFFFFFFFFF, *key_words]
    ss = np.random.SeedSequence(entropy)
    words = [int(w) for w in ss.generate_state(4, np.uint64)]
    if not any(words):
        words[0] = 1
    return words[0], words[1], words[2], words[3]


def confidence_indices(length: int, confidence: str = CONFIDENCE_LEVEL) -> tuple[int, int]:
    """(lower_index, upper_index) with warmup_stats' Decimal quantize rules."""
    level = Decimal(confidence)
    exclude = (1 - level) / 2
    lower = int((exclude * length).quantize(Decimal("1.0"), rounding=ROUND_DOWN))
    upper = int(((1 - exclude) * length).quantize(Decimal("1.0"), rounding=ROUND_UP))
    return lower, upper


def summarise_means(means: np.ndarray, confidence: str = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """Median and symmetric CI half-width of resample means (warmup_stats' rules)."""
    import numpy as np

    length = int(means.shape[0])
    if length % 2 == 0:
        mid = [length // 2 - 1, length // 2]
    else:
        mid = [length // 2]
    lower_index, upper_index = confidence_indices(length, confidence)
    kth = sorted(set(mid + [lower_index, upper_index - 1]))
    part = np.partition(means, kth)
    median = math.fsum(float(part[i]) for i in mid) / float(len(mid))
    lower, upper = float(part[lower_index]), float(part[upper_index - 1])
    ci = math.fsum([upper - median, median - lower]) / 2.0
    return median, ci


def bootstrap_steady_perf(
    executions: Sequence[Sequence[Sequence[float]]],
    resamples: int = RESAMPLES_HIGH,
    seed: int | None = DEFAULT_SEED,
    key: str = "",
    confidence: str = CONFIDENCE_LEVEL,
) -> BootstrapResult:
    """Bootstrap steady performance: ``executions[e][s]`` = values of steady segment s of execution e."""
    import numpy as np

    if not executions:
        raise ValueError("nothing to bootstrap: no executions with a steady state")
    if resamples < 1:
        raise ValueError("the number of resamples must be at least 1")
    values: list[np.ndarray] = []
    seg_offsets = [0]
    exec_offsets = [0]
    for segments in executions:
        total = 0
        for seg in segments:
            arr = np.asarray(seg, dtype=np.float64)
            values.append(arr)
            seg_offsets.append(seg_offsets[-1] + arr.shape[0])
            total += arr.shape[0]
        if total == 0:
            raise ValueError("an execution has no steady values to resample")
        exec_offsets.append(exec_offsets[-1] + len(segments))
    flat = np.ascontiguousarray(np.concatenate(values) if values else np.empty(0))
    n_each = resamples_per_execution(resamples, len(executions))
    means = np.empty(n_each * len(executions), dtype=np.float64)
    k0, k1, k2, k3 = generator_state(seed, key)
    _pelt.bootstrap_means(
        flat,
        np.asarray(seg_offsets, dtype=np.int64),
        np.asarray(exec_offsets, dtype=np.int64),
        n_each,
        k0,
        k1,
        k2,
        k3,
        means,
    )
    median, ci = summarise_means(means, confidence)
    return BootstrapResult(median, ci, n_each, int(means.shape[0]))
