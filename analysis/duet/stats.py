"""The duet statistics (methods.md §2.2), the sequential baseline and the shuffle control.

- s_ri = x_ri / y_ri per synchronised iteration; gms_r, their geometric mean
  per execution; ggms, the geometric mean of the gms_r, is the estimate.
- CI: percentile bootstrap over the R values gms_r (resampled with
  replacement, ggms* recomputed), ``scipy.stats.bootstrap(method="percentile")``.
  Its ends are ``scipy.stats.quantile`` (linear interpolation, type 7) of the
  B resampled ggms*; as B grows they tend to the exact percentile interval of
  the bootstrap distribution, [F^-1(a/2), F^-1(1 - a/2)] with F^-1(q) = the
  smallest ggms* whose cumulative probability is >= q (tested against all 27
  ordered resamples of R = 3: at 99 % its ends are the smallest and largest
  atoms, each of probability 1/27 > 0.5 %).
  Relative width = (high - low) / ggms.
- Sequential baseline (the paper's "standard procedure", a CI of the
  difference of means): the executions' mean times of x and of y as two
  independent samples, the same percentile bootstrap of mean(x) - mean(y)
  (each side resampled on its own). Bootstrap rather than Welch t so that both
  CIs come from one method over R per-execution values: for small R a Welch
  t interval is wider than a percentile bootstrap (at R = 10 and 99 %, a t
  quantile of at least 2.88 with <= 18 dof, against the bootstrap's roughly
  z sqrt(9/10) = 2.44), which would inflate the reduction by up to ~18 % from
  the method rather than from pairing. Relative width = width / (mean of y's
  execution means).
- Reduction = sequential relative width / duet relative width (Table 1);
  None when the duet CI has zero width.
- Shuffle control (RQ2): y's executions re-paired with x's by a seeded random
  derangement, shuffled gms_r = gm(x_r) / gm(y_pi(r)), same bootstrap. Why not
  a re-pairing of iterations *within* an execution: the geometric mean of
  x_i / y_pi(i) is (prod x / prod y)^(1/I) for every permutation pi, so such
  a shuffle changes no gms_r at all. Re-pairing executions breaks both the
  iteration-level and the execution-level shared interference; the ggms is
  unchanged (the same product), only the spread shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence, cast

import numpy as np
from scipy import stats

from analysis.duet.pairs import PairedRuns
from analysis.errors import AnalysisError

DEFAULT_CONFIDENCE = 0.99
DEFAULT_RESAMPLES = 10000
# Below this many executions the paper's percentile bootstrap covers more than 1.5 points under its level
# (A/A at 99%: 3 executions 75-77%, 10: 94.5-96.7%, 20: 97.3-98.0%, 30: 97.9-98.6%; bench/bench_coverage.py):
# the report marks it and gives the t interval of the executions' log gms beside it, which covers at any count.
PERCENTILE_MIN_EXECUTIONS = 30


@dataclass(frozen=True)
class DuetInterval:
    low: float
    high: float
    relative_width: float  # (high - low) / the reference it is relative to


@dataclass(frozen=True)
class DuetResult:
    gms: list[float]
    ggms: float
    ci: DuetInterval
    t_ci: DuetInterval    # exp of a Student t interval of the mean of log gms (R - 1 df)
    sequential_difference: float  # mean of x's execution means - mean of y's
    sequential_ci: DuetInterval  # relative to the mean of y's execution means
    reduction: float | None
    shuffle_pairing: list[int]  # x's execution r was paired with y's execution shuffle_pairing[r]
    shuffle_gms: list[float]
    shuffle_ci: DuetInterval
    seed: int
    confidence: float
    resamples: int
    notes: list[str] = field(default_factory=list)


def execution_gms(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Geometric mean of one execution's paired ratios x_i / y_i."""
    return float(stats.gmean(np.asarray(x, dtype=float) / np.asarray(y, dtype=float)))


def all_gms(runs: PairedRuns) -> np.ndarray:
    return np.array([execution_gms(xr, yr) for xr, yr in zip(runs.x, runs.y)])


def ggms(gms: np.ndarray) -> float:
    return float(stats.gmean(gms))


def percentile_ci(samples: tuple[np.ndarray, ...], statistic, *, confidence: float, resamples: int,
                  rng: np.random.Generator, method: str = "percentile") -> tuple[float, float]:
    """Percentile (or ``method``: scipy's "BCa", "basic") bootstrap CI of ``statistic(*samples, axis=-1)``,
    each sample resampled on its own."""
    options = dict(n_resamples=resamples, confidence_level=confidence, method=method, vectorized=True)
    try:
        result = stats.bootstrap(samples, statistic, rng=rng, **options)
    except TypeError:  # scipy < 1.15 (pyproject allows 1.10) names it random_state
        result = stats.bootstrap(samples, statistic, random_state=rng, **options)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _geometric_mean(g: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.gmean(g, axis=axis)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def ratio_ci(gms: np.ndarray, *, confidence: float, resamples: int, rng: np.random.Generator) -> DuetInterval:
    low, high = percentile_ci((gms,), _geometric_mean, confidence=confidence, resamples=resamples, rng=rng)
    return DuetInterval(low, high, (high - low) / ggms(gms))


def log_t_ci(gms: np.ndarray, *, confidence: float) -> DuetInterval:
    """exp of the t interval of mean(log gms): the geometric mean's interval when execution gms are lognormal-ish."""
    logs = np.log(gms)
    half = float(stats.t.ppf(0.5 + confidence / 2.0, logs.shape[0] - 1) * logs.std(ddof=1) / np.sqrt(logs.shape[0]))
    centre = float(logs.mean())
    low, high = float(np.exp(centre - half)), float(np.exp(centre + half))
    return DuetInterval(low, high, (high - low) / ggms(gms))


def sequential_ci(runs: PairedRuns, *, confidence: float, resamples: int,
                  rng: np.random.Generator) -> tuple[float, DuetInterval]:
    """(difference of means, its CI relative to y's mean), the executions' mean times as independent samples."""
    x_means = np.array([np.mean(xr) for xr in runs.x])
    y_means = np.array([np.mean(yr) for yr in runs.y])
    low, high = percentile_ci((x_means, y_means), _mean_difference, confidence=confidence,
                              resamples=resamples, rng=rng)
    return float(np.mean(x_means) - np.mean(y_means)), DuetInterval(low, high, (high - low) / float(np.mean(y_means)))


def derangement(n: int, rng: np.random.Generator) -> list[int]:
    """A uniformly random permutation of range(n) with no fixed point (n >= 2), by rejection (~e tries)."""
    while True:
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return [int(p) for p in perm]


def shuffled_gms(runs: PairedRuns, pairing: list[int]) -> np.ndarray:
    """gms of x's execution r against y's execution pairing[r]: gm(x_r) / gm(y_pairing[r])."""
    return np.array([float(stats.gmean(runs.x[r]) / stats.gmean(runs.y[p])) for r, p in enumerate(pairing)])


def new_seed() -> int:
    """A fresh seed to report, so an unseeded run can be repeated."""
    return cast(int, np.random.SeedSequence().entropy) % 2**63     # a fresh SeedSequence's entropy is an int


def analyse(runs: PairedRuns, *, confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES,
            seed: int | None = None) -> DuetResult:
    """Every statistic of the duet report on (already steady) paired runs."""
    if runs.executions < 2:
        raise AnalysisError(f"a bootstrap CI needs at least 2 executions, got {runs.executions}")
    if not 0 < confidence < 1:
        raise AnalysisError(f"confidence must be between 0 and 1 (exclusive), not {confidence}")
    if resamples < 1:
        raise AnalysisError(f"resamples must be at least 1, not {resamples}")
    if seed is not None and seed < 0:
        raise AnalysisError(f"the seed must not be negative, not {seed}")
    seed = new_seed() if seed is None else seed
    # The duet and shuffle bootstraps share one stream: the same resample
    # indices, so their widths differ by the data, not by bootstrap noise.
    boot_seed, sequential_seed, shuffle_seed = np.random.SeedSequence(seed).spawn(3)
    options: dict[str, Any] = dict(confidence=confidence, resamples=resamples)
    gms = all_gms(runs)
    ci = ratio_ci(gms, rng=np.random.default_rng(boot_seed), **options)
    difference, seq = sequential_ci(runs, rng=np.random.default_rng(sequential_seed), **options)
    pairing = derangement(runs.executions, np.random.default_rng(shuffle_seed))
    shuffle_gms = shuffled_gms(runs, pairing)
    shuffle = ratio_ci(shuffle_gms, rng=np.random.default_rng(boot_seed), **options)
    notes = []
    if runs.executions < PERCENTILE_MIN_EXECUTIONS:
        notes.append(f"CI unreliable: {runs.executions} executions, under {PERCENTILE_MIN_EXECUTIONS}: the percentile "
                     "bootstrap over so few execution gms covers well under its level (bench/bench_coverage.py); "
                     "t_ci, the t interval of their logs, covers")
    if ci.relative_width > 0:
        reduction = seq.relative_width / ci.relative_width
    else:
        reduction = None
        notes.append("the duet CI has zero width (every gms equal): no finite reduction")
    return DuetResult(gms=[float(g) for g in gms], ggms=ggms(gms), ci=ci,
                      t_ci=log_t_ci(gms, confidence=confidence), sequential_difference=difference,
                      sequential_ci=seq, reduction=reduction, shuffle_pairing=pairing,
                      shuffle_gms=[float(g) for g in shuffle_gms], shuffle_ci=shuffle, seed=seed,
                      confidence=confidence, resamples=resamples, notes=notes)
