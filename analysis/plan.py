"""Planning an experiment: how many process executions and in-process iterations reach a CI target.

Kalibera and Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM 2013), on a key's first
("dimensioning") experiment. The model, per key, on each execution's steady iterations::

    y[j, k] = mu + a[j] + e[j, k],   a ~ (0, T2^2) between executions,  e ~ (0, T1^2) within

so the grand mean of n2 executions of n1 steady iterations has variance T2^2/n2 + T1^2/(n1 n2).

- **Estimates** (:func:`variance_components`): T1^2 is the within-execution variance, made honest for
  autocorrelated iterations by batch means: each execution's steady iterations are cut into batches of
  ``b = floor(sqrt(m))`` iterations (m: the shortest execution's steady iterations, so every execution
  has at least b batches; the usual square-root rule of the batch-means method), and
  ``T1^2 = b x`` the pooled variance of the batch means (b = 1: the plain pooled variance, K&J's S1^2),
  or K&J's plain S1^2 when that is larger: batch means only ever raise T1^2 (positive autocorrelation,
  the benchmark case); a few batches are a noisy estimate, and they leave out a remainder of iterations.
  S2^2 is the sample variance of the executions' means and ``T2^2 = S2^2 - T1^2 x mean(1/m_j)``
  (K&J's ``S2^2 - T1^2/n1``; the mean of 1/m_j for executions of unequal length).
- **The plan's T2^2** (:func:`t2_median`): K&J's T2^2 is unbiased, but S2^2 is a chi-square with n-1
  degrees of freedom, skewed: its median is below its mean (0.84 of it at 5 executions), so a plan made
  from it misses its target in more than half of the experiments (bench/bench_plan.py, docs/coverage.md:
  met in 41-49% of them at 20-50 executions planned from 5). The plan takes S2^2's median-unbiased
  correction, ``(n-1) S2^2 / chi2(0.5, n-1)`` (x1.19 at 5 executions, x1.02 at 30), less T1^2 x mean(1/m_j),
  so that the planned width is about the median realised one (met in 52-59%); K&J's estimate decides
  whether T2^2 is detectable and is reported beside it.
- **T2^2 <= 0** (not detectable at this many iterations) and **few executions** (under
  :data:`FEW_EXECUTIONS`): the upper end of T2^2's interval (:func:`t2_upper`): the chi-square bound on
  the variance of the executions' means, ``(n-1) S2^2 / chi2(alpha/2, n-1)``, less T1^2 x mean(1/m_j)
  (when that is not positive, the whole bound).
- **The cheapest allocation** (:func:`allocate`): ``n1* = ceil(sqrt((c2/c1) (T1^2/T2^2)))`` with c1 the
  cost of a steady iteration and c2 what an execution costs besides its steady iterations (reboot,
  waits, start-up, warm-up); then the smallest n2 >= 2 with
  ``t(1 - alpha/2, n2 - 1) sqrt(T2^2/n2 + T1^2/(n1 n2)) <= target`` (t depends on n2: found by search);
  n2 being rounded up, n1 is then cut to the fewest iterations that still meet the target at that n2 (the
  same executions, less time; at a few executions one more changes t, and the width, by 10-20%).

The target is the CI's HALF-width (the mean +- target), as a fraction of the mean or in seconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

# Under this many executions T2^2 is poorly known: the plan for its upper bound is given too.
FEW_EXECUTIONS = 10
# Iterations per execution beyond which a plan is not worth stating as a number.
MAX_ITERATIONS = 10**9
MAX_EXECUTIONS = 10**7

_UNITS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9,
          "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_QUANTITY = re.compile(r"\s*(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)\s*([a-zµ]*)\s*")


@dataclass(frozen=True)
class Target:
    """A CI half-width: a fraction of the mean (``relative``) or seconds."""

    value: float
    relative: bool

    def seconds(self, mean: float) -> float:
        return self.value * mean if self.relative else self.value

    def label(self) -> str:
        """'±1%', '±50 µs'."""
        if self.relative:
            return f"±{self.value * 100:.3g}%"
        from analysis.reports.formats import duration

        return "±" + duration(self.value, 3)


def seconds(text: str, what: str) -> float:
    """Seconds from "0.001", "50us", "0.2ms", "90s", "2min", "1h"; ValueError naming ``what`` otherwise."""
    m = _QUANTITY.fullmatch(str(text).lower())
    if not m or m.group(2) not in ("", *_UNITS):
        raise ValueError(f"{what}: cannot read {text!r}; write seconds (0.001) or a time with a unit "
                         "(50us, 0.2ms, 90s, 2min, 1h)")
    return float(m.group(1)) * _UNITS.get(m.group(2), 1.0)


def parse_target(text: str) -> Target:
    """``--target``: "1%" (of the mean), or a time ("50us", "0.2ms", "0.001" seconds); > 0, a
    percentage under 100."""
    raw = str(text).strip()
    if raw.endswith("%"):
        try:
            value = float(raw[:-1]) / 100
        except ValueError:
            raise ValueError(f"--target: cannot read {text!r}; write a percentage of the mean such as 1%, "
                             "or a time such as 50us") from None
        if not (math.isfinite(value) and 0 < value < 1):
            raise ValueError(f"--target: {text!r} must be a percentage of the mean above 0% and under 100%")
        return Target(value, True)
    value = seconds(raw, "--target")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"--target: {text!r} must be a time above 0")
    return Target(value, False)


@dataclass(frozen=True)
class Components:
    """A key's variance components from its first experiment (module doc)."""

    executions: int          # n: executions with at least 2 steady iterations
    mean: float              # grand mean: the mean of the executions' means
    t1_sq: float             # within executions, per iteration (batch means when batch > 1)
    t2_sq: float             # between executions; <= 0: not detectable
    s2_sq: float             # sample variance of the executions' means
    plain_s1_sq: float       # the plain pooled within-execution variance (K&J's S1^2, no autocorrelation)
    inverse_n1: float        # mean of 1 / steady iterations per execution
    batch: int               # batch size b


def batch_size(shortest: int) -> int:
    """floor(sqrt(m)) for executions of at least m steady iterations (at least 1)."""
    return max(1, math.isqrt(max(1, shortest)))


def variance_components(executions: Sequence[Sequence[float]], batch: int | None = None) -> Components:
    """K&J's estimates from each execution's steady iterations (each at least 2; at least 2 executions).
    ``batch``: the batch size (default :func:`batch_size` of the shortest execution; 1: K&J's plain S1^2)."""
    import numpy as np

    series = [np.asarray(e, dtype=np.float64) for e in executions]
    if len(series) < 2 or min(s.size for s in series) < 2:
        raise ValueError("needs at least 2 executions of at least 2 steady iterations each")
    b = batch_size(min(s.size for s in series)) if batch is None else int(batch)
    means = np.array([s.mean() for s in series])
    within_ss = sum(float(((s - s.mean()) ** 2).sum()) for s in series)
    plain = within_ss / sum(s.size - 1 for s in series)
    if b <= 1:
        t1_sq = plain
    else:
        sums, dfs = 0.0, 0
        for s in series:
            k = s.size // b
            if k < 2:
                continue
            bm = s[: k * b].reshape(k, b).mean(axis=1)
            sums += float(((bm - bm.mean()) ** 2).sum()) * b
            dfs += k - 1
        t1_sq = max(sums / dfs, plain) if dfs else plain
    s2_sq = float(means.var(ddof=1))
    inverse_n1 = float(np.mean([1.0 / s.size for s in series]))
    return Components(len(series), float(means.mean()), t1_sq, s2_sq - t1_sq * inverse_n1, s2_sq, plain,
                      inverse_n1, b)


def t2_upper(c: Components, confidence: float) -> float:
    """The upper end of T2^2's ``confidence`` interval (module doc)."""
    bound = _mean_variance_bound(c, (1 - confidence) / 2)
    less = bound - c.t1_sq * c.inverse_n1
    return less if less > 0 else bound


def t2_median(c: Components) -> float:
    """T2^2 from the median-unbiased estimate of the variance of the executions' means,
    ``(n-1) S2^2 / chi2(0.5, n-1)``, less T1^2 x mean(1/m_j): what the plan is made for (module doc)."""
    return _mean_variance_bound(c, 0.5) - c.t1_sq * c.inverse_n1


def _mean_variance_bound(c: Components, quantile: float) -> float:
    from scipy.special import gammaincinv   # chi2's quantile (as scipy.stats computes it), without its import time

    df = c.executions - 1
    return df * c.s2_sq / (2.0 * float(gammaincinv(df / 2.0, quantile)))


def t_quantile(confidence: float, dof: int) -> float:
    """t(1 - alpha/2, dof): the two-sided interval's quantile at ``confidence``."""
    from scipy.special import stdtrit   # t's quantile function, without scipy.stats' import time

    return float(stdtrit(dof, 1 - (1 - confidence) / 2))


def cheapest_iterations(c1: float, c2: float, t1_sq: float, t2_sq: float) -> int:
    """K&J's n1* = ceil(sqrt((c2/c1) (T1^2/T2^2))), at least 1 and at most MAX_ITERATIONS."""
    if t1_sq <= 0:
        return 1
    if t2_sq <= 0 or c1 <= 0:
        return MAX_ITERATIONS
    return int(min(MAX_ITERATIONS, max(1, math.ceil(math.sqrt((c2 / c1) * (t1_sq / t2_sq))))))


def half_width(t1_sq: float, t2_sq: float, n1: int, n2: int, confidence: float) -> float:
    """t(1 - alpha/2, n2 - 1) sqrt(T2^2/n2 + T1^2/(n1 n2))."""
    return t_quantile(confidence, n2 - 1) * math.sqrt((max(t2_sq, 0.0) + t1_sq / n1) / n2)


def executions_needed(t1_sq: float, t2_sq: float, n1: int, target: float, confidence: float) -> int | None:
    """The smallest n2 >= 2 whose half-width is at most ``target`` (None: more than MAX_EXECUTIONS)."""
    from scipy.special import ndtri   # the normal quantile

    per_execution = max(t2_sq, 0.0) + t1_sq / n1
    if per_execution <= 0:
        return 2
    if target <= 0:
        return None
    z = float(ndtri(1 - (1 - confidence) / 2))
    low = max(2, math.ceil(z * z * per_execution / target ** 2))   # t > z: never fewer than this

    def enough(n2: int) -> bool:
        return half_width(t1_sq, t2_sq, n1, n2, confidence) <= target

    high = low
    while not enough(high):
        low, high = high + 1, high * 2
        if high > MAX_EXECUTIONS:
            return None
    while low < high:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid + 1
    return high


@dataclass(frozen=True)
class Allocation:
    n1: int                  # steady iterations per execution
    n2: int | None           # executions (None: beyond MAX_EXECUTIONS)
    t2_sq: float             # the T2^2 it was planned for
    half_width: float | None  # the planned half-width (seconds)


def fewest_iterations(t1_sq: float, t2_sq: float, n2: int, target: float, confidence: float) -> int | None:
    """The fewest steady iterations per execution meeting ``target`` with ``n2`` executions (None: none do)."""
    if t1_sq <= 0:
        return 1 if half_width(0.0, t2_sq, 1, n2, confidence) <= target else None
    room = (target / t_quantile(confidence, n2 - 1)) ** 2 * n2 - max(t2_sq, 0.0)
    if room <= 0 or t1_sq / room > MAX_ITERATIONS:
        return None
    fewest = max(1, math.ceil(t1_sq / room))
    while fewest > 1 and half_width(t1_sq, t2_sq, fewest - 1, n2, confidence) <= target:
        fewest -= 1   # the division's rounding, either way
    while half_width(t1_sq, t2_sq, fewest, n2, confidence) > target:
        fewest += 1
    return fewest


def allocate(t1_sq: float, t2_sq: float, c1: float, c2: float, target: float, confidence: float,
             trim: bool = True) -> Allocation:
    """K&J's cheapest n1, then the smallest n2 meeting ``target`` (a half-width in seconds); ``trim``: then
    the fewest iterations that still meet it at that n2 (n2 is rounded up: the slack is time saved).
    T2^2 <= 0 (no between-execution variance): n1* is unbounded; the cheapest (n2, fewest n1) is searched
    instead, from n2 = 2 up, "as few executions as the t quantile allows, as long as needed"."""
    if t2_sq <= 0:
        return _cheapest_without_t2(t1_sq, c1, c2, target, confidence)
    n1 = cheapest_iterations(c1, c2, t1_sq, t2_sq)
    n2 = executions_needed(t1_sq, t2_sq, n1, target, confidence)
    if n2 is None:
        return Allocation(n1, None, t2_sq, None)
    if trim:
        n1 = min(n1, fewest_iterations(t1_sq, t2_sq, n2, target, confidence) or n1)
    return Allocation(n1, n2, t2_sq, half_width(t1_sq, t2_sq, n1, n2, confidence))


def _cheapest_without_t2(t1_sq: float, c1: float, c2: float, target: float, confidence: float) -> Allocation:
    best: tuple[float, int, int] | None = None
    for n2 in range(2, 100_000):
        if best is not None and (n2 * c2 >= best[0] or best[2] == 1):
            break
        n1 = fewest_iterations(t1_sq, 0.0, n2, target, confidence)
        if n1 is not None and (best is None or n2 * (c2 + n1 * c1) < best[0]):
            best = (n2 * (c2 + n1 * c1), n2, n1)
    if best is None:
        return Allocation(MAX_ITERATIONS, None, 0.0, None)
    return Allocation(best[2], best[1], 0.0, half_width(t1_sq, 0.0, best[2], best[1], confidence))


def human_time(seconds: float) -> str:
    """'~40 s', '~12 min', '~2 h 10 min', '~3 d 4 h'."""
    if seconds < 59.5:
        return f"~{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"~{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"~{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(round(seconds / 3600), 24)
    return f"~{days} d" + (f" {hours} h" if hours else "")


def plan_line(target: Target, executions: int | None, iterations: int | None, seconds: float | None) -> str:
    """One line for reports: '±1% needs about 14 executions × 2000 iterations, ~2 h 10 min'."""
    if executions is None or iterations is None or seconds is None:
        return f"{target.label()} is out of reach (more than {MAX_EXECUTIONS} executions)"
    return (f"{target.label()} needs about {executions} executions × {iterations} iterations, "
            f"{human_time(seconds)}")
