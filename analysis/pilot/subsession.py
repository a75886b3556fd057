"""Pilot's subsession statistics, exactly as libpilot computes them.

Source: ascar-io/pilot-bench d8bf8a5 ``lib/priv_include/libpilotcpp.h`` (the
functions are the same in the fork 097624d); ../shared/reference/methods.md
§1 (b), (c). Checked against Pilot's own outputs in
../shared/golden/pilot/golden_*.jsonl.

For data x[0..n) and subsession size q, h = n // q subsessions:

- the sample mean uses **all n** values; the trailing n - h*q values are
  ignored by every subsession statistic, never by the mean;
- mean methods: ``arithmetic`` (sum / n), ``harmonic`` (n / sum(1/x), for
  rates; values must be > 0) and ``binary`` (0/1 data: the arithmetic mean is
  the proportion; its CI is the binomial-proportion one and q is always 1);
- u_j = the mean of block j by the same method; subsession variance
  sum_j (u_j - m)^2 / (h - 1) around the *sample* mean m;
- autocovariance sum_{j>=1} (u_{j-1} - m)(u_j - m) / (h - 1) (an arithmetic
  mean over the h - 1 products);
- autocorrelation = autocov / var, and **1** when n // q < 2 or the ratio is
  NaN (a constant series: 0/0), Pilot's "highly correlated";
- optimal subsession size: the first q in 1..n//3 with |r(q)| <= limit,
  else -1 (also for n <= 1). Default limit 0.1 (Ferrari 1978);
- CI of the mean, a FULL width: 2 T sqrt(var_q / h), T = t^-1(1 - (1-cl)/2; h-1)
  (Student t); binary: 2 T sqrt(p(1-p) / h), q = 1 (Student t, not z);
- optimal sample size: opt = ceil(var_q (T / (width/2))^2) subsessions, with
  q from the AC search (binary: q = 1 and var_q the n-1 sample variance of the
  0/1 data, not p(1-p));
- required samples (``_calc_required_num_of_readings``): q * max(opt,
  min_samples), only for n >= 3; the width is Pilot's ``get_required_ci``:
  the smaller of ci_percent * mean and ci_width.

Sums run left to right, as Pilot's accumulators do (``np.cumsum`` is a
sequential sum; ``np.sum`` is pairwise and would differ in the last bits).
numpy and scipy are imported inside the functions (the analysis package must
stay cheap to import).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Sequence

from analysis.errors import AnalysisError

if TYPE_CHECKING:
    import numpy as np

MEAN_METHODS = ("arithmetic", "harmonic", "binary")
DEFAULT_AC_LIMIT = 0.1
DEFAULT_CONFIDENCE = 0.95
DEFAULT_MIN_SAMPLES = 200  # Pilot's min_sample_size_ (workload.hpp)
MIN_SAMPLES_FOR_REQUIRED = 3  # _calc_required_num_of_readings needs n >= 3
ERR_NOT_ENOUGH_DATA = 30  # Pilot's return code


class PilotInputError(AnalysisError):
    """Input Pilot's statistics cannot take (NaN, a non-positive rate, a zero target ...)."""


class NotEnoughData(PilotInputError):
    """Pilot's ERR_NOT_ENOUGH_DATA (rc 30): too few values for the statistic asked for."""

    rc = ERR_NOT_ENOUGH_DATA


class SampleSize(NamedTuple):
    """``pilot_optimal_sample_size``: ok, q and the number of subsessions needed."""

    ok: bool
    q: int | None  # None when not ok (Pilot prints 0)
    opt: int | None  # subsessions needed (multiply by q for samples); None when not ok


@dataclass(frozen=True)
class SampleAnalysis:
    """Pilot's analysis of one sample (its ``refresh_analytical_result`` for unit readings)."""

    n: int
    mean: float
    var: float | None  # q = 1 sample variance (n >= 2)
    autocorr: float | None  # q = 1 autocorrelation (n >= 2)
    q: int | None  # optimal subsession size; None where Pilot has -1 (or n < 3)
    q_var: float | None  # subsession variance at q
    ci_width: float | None  # full CI width at q
    required: int | None  # q * max(opt, min_samples); None = Pilot's -1 (not enough data)


def check_mean_method(mean_method: str) -> None:
    if mean_method not in MEAN_METHODS:
        raise PilotInputError(f"mean method must be one of {', '.join(MEAN_METHODS)}, not {mean_method!r}")


def check_confidence(confidence: float) -> None:
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise PilotInputError(f"confidence level must be between 0 and 1 (e.g. 0.95), not {confidence!r}")


def as_sample(x: Sequence[float] | np.ndarray, mean_method: str = "arithmetic", *, what: str = "data") -> np.ndarray:
    """``x`` as a 1-D float64 array, checked for ``mean_method``; one-line errors name ``what``."""
    import numpy as np

    check_mean_method(mean_method)
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise PilotInputError(f"{what}: not a list of numbers ({exc})") from None
    if arr.ndim != 1:
        raise PilotInputError(f"{what}: expected a flat list of numbers, got {arr.ndim} dimensions")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise PilotInputError(f"{what}: value {bad[0]} is {arr[bad[0]]}; every value must be a finite number")
    if mean_method == "harmonic":
        bad = np.flatnonzero(arr <= 0)
        if bad.size:
            raise PilotInputError(f"{what}: value {bad[0]} is {arr[bad[0]]}; a harmonic mean needs values > 0")
    elif mean_method == "binary":
        bad = np.flatnonzero((arr != 0) & (arr != 1))
        if bad.size:
            raise PilotInputError(f"{what}: value {bad[0]} is {arr[bad[0]]}; binary data must be 0 or 1")
    return arr


def _seq_sum(a: np.ndarray) -> float:
    """Left-to-right sum, as C++'s ``sum += x`` loop (not numpy's pairwise sum)."""
    return float(a.cumsum()[-1]) if a.size else 0.0


def sample_mean(x: Sequence[float] | np.ndarray, mean_method: str = "arithmetic") -> float:
    """``pilot_subsession_mean`` over all n values."""
    arr = as_sample(x, mean_method)
    if arr.size == 0:
        raise NotEnoughData("the mean of no values is undefined")
    return _mean(arr, mean_method)


def _mean(arr: np.ndarray, mean_method: str) -> float:
    if mean_method == "harmonic":
        return arr.size / _seq_sum(1.0 / arr)
    return _seq_sum(arr) / arr.size


def _block_means(arr: np.ndarray, q: int, mean_method: str) -> np.ndarray:
    """u_j for the h = n // q complete blocks, each summed left to right."""
    h = arr.size // q
    if q == 1:  # a block of one: its arithmetic mean is the value (x / 1 == x)
        return 1 / (1.0 / arr) if mean_method == "harmonic" else arr
    blocks = arr[: h * q].reshape(h, q)
    if mean_method == "harmonic":
        return q / (1.0 / blocks).cumsum(axis=1)[:, -1]
    return blocks.cumsum(axis=1)[:, -1] / q


def _deviations(arr: np.ndarray, q: int, mean_method: str, mean: float | None) -> np.ndarray:
    if not isinstance(q, int) or isinstance(q, bool) or q < 1:
        raise PilotInputError(f"subsession size q must be a whole number >= 1, not {q!r}")
    if arr.size // q < 2:
        raise NotEnoughData(f"{arr.size} values make {arr.size // q} subsession(s) of {q}; at least 2 are needed")
    m = _mean(arr, mean_method) if mean is None else mean
    return _block_means(arr, q, mean_method) - m


def _var_of(d: np.ndarray) -> float:
    return _seq_sum(d * d) / (d.size - 1)


def _autocov_of(d: np.ndarray) -> float:
    return _seq_sum(d[:-1] * d[1:]) / (d.size - 1)


def _autocorr_of(d: np.ndarray) -> float:
    var = _var_of(d)
    if var == 0:  # 0/0 in C++: NaN, which Pilot turns into 1
        return 1.0
    r = _autocov_of(d) / var
    return 1.0 if math.isnan(r) else r


def subsession_var(x, q: int, mean_method: str = "arithmetic", mean: float | None = None) -> float:
    """``pilot_subsession_var``: sum_j (u_j - mean)^2 / (h - 1); ``mean`` defaults to the sample mean."""
    return _var_of(_deviations(as_sample(x, mean_method), q, mean_method, mean))


def subsession_autocov(x, q: int, mean_method: str = "arithmetic", mean: float | None = None) -> float:
    """``pilot_subsession_auto_cov``: the mean of the h - 1 lag-1 products of deviations."""
    return _autocov_of(_deviations(as_sample(x, mean_method), q, mean_method, mean))


def subsession_autocorr(x, q: int, mean_method: str = "arithmetic", mean: float | None = None) -> float:
    """``pilot_subsession_autocorrelation_coefficient``: 1 when n // q < 2 or 0/0."""
    arr = as_sample(x, mean_method)
    if isinstance(q, int) and q >= 1 and arr.size // q < 2:
        return 1.0
    return _autocorr_of(_deviations(arr, q, mean_method, mean))


def _optimal_q(arr: np.ndarray, mean_method: str, ac_limit: float) -> int:
    if arr.size <= 1:
        return -1
    m = _mean(arr, mean_method)
    for q in range(1, arr.size // 3 + 1):
        if abs(_autocorr_of(_block_means(arr, q, mean_method) - m)) <= ac_limit:
            return q
    return -1


def _check_ac_limit(ac_limit: float) -> None:
    if not (isinstance(ac_limit, (int, float)) and ac_limit >= 0 and math.isfinite(ac_limit)):
        raise PilotInputError(f"autocorrelation limit must be a number >= 0 (Pilot's default 0.1), not {ac_limit!r}")


def optimal_subsession_size(x, mean_method: str = "arithmetic", ac_limit: float = DEFAULT_AC_LIMIT) -> int:
    """``pilot_optimal_subsession_size``: first q in 1..n//3 with |r(q)| <= ac_limit, else -1.

    ``binary`` data are searched with the arithmetic mean (Pilot's search
    ignores the CI type; only the sample-size call forces q = 1).
    """
    _check_ac_limit(ac_limit)
    arr = as_sample(x, mean_method)
    return _optimal_q(arr, _block_method(mean_method), ac_limit)


def _block_method(mean_method: str) -> str:
    return "arithmetic" if mean_method == "binary" else mean_method


@functools.lru_cache(maxsize=4096)  # scipy's per-call overhead dominates the optimal-q searches
def t_quantile(confidence: float, dof: float) -> float:
    """T with P(|t| <= T) = confidence: Boost's ``quantile(complement(t(dof), (1-cl)/2))``.

    scipy.special's stdtrit is what scipy.stats' ``t.isf(q, dof)`` returns for 0 < q < 1 (``-stdtrit(dof,
    q)``; equal on 20,000 random pairs), without importing scipy.stats: about 0.5 s of CPU less in every
    process that decides a [stop] key between executions (tens of seconds in an emulated guest)."""
    from scipy.special import stdtrit

    return float(-stdtrit(dof, (1 - confidence) / 2))


def ci_width(x, q: int = 1, confidence: float = DEFAULT_CONFIDENCE, mean_method: str = "arithmetic") -> float:
    """``pilot_subsession_confidence_interval``: the FULL width of the CI of the mean.

    ``binary``: Pilot's BINOMIAL_PROPORTION interval (Student t), q must be 1.
    """
    check_confidence(confidence)
    return _full_width(as_sample(x, mean_method), q, confidence, mean_method)


def _full_width(arr: np.ndarray, q: int, confidence: float, mean_method: str) -> float:
    if mean_method == "binary":
        if q != 1:
            raise PilotInputError(f"the binomial-proportion CI uses q = 1, not {q!r}")
        if arr.size < 2:
            raise NotEnoughData(f"{arr.size} value(s); a CI needs at least 2")
        p = _mean(arr, "arithmetic")
        return t_quantile(confidence, arr.size - 1) * math.sqrt(p * (1 - p) / arr.size) * 2
    d = _deviations(arr, q, mean_method, None)
    h = d.size
    return t_quantile(confidence, h - 1) * math.sqrt(_var_of(d) / h) * 2


def _check_width(width: float) -> None:
    if not (isinstance(width, (int, float)) and math.isfinite(width) and width > 0):
        raise PilotInputError(f"the target CI width must be a number > 0, not {width!r}")


def _sample_size(arr: np.ndarray, width: float, mean_method: str, confidence: float, ac_limit: float) -> SampleSize:
    if mean_method == "binary":
        q = 1
    else:
        q = _optimal_q(arr, mean_method, ac_limit)
        if q < 0:
            return SampleSize(False, None, None)
    return SampleSize(True, q, _subsessions_needed(_deviations(arr, q, _block_method(mean_method), None),
                                                   width, confidence))


def _subsessions_needed(d: np.ndarray, width: float, confidence: float) -> int:
    """ceil(var_q (T / (width/2))^2) from the h subsession deviations ``d``."""
    t_over_e = t_quantile(confidence, d.size - 1) / (width / 2)
    return math.ceil(_var_of(d) * (t_over_e * t_over_e))


def subsessions_for_width(
    x, q: int, width: float, mean_method: str = "arithmetic", confidence: float = DEFAULT_CONFIDENCE
) -> int:
    """Pilot's opt at a given subsession size q: ceil(var_q (T / (width/2))^2) subsessions.

    Pilot's ``pilot_optimal_sample_size`` with q chosen by the caller (binary: q must be
    1 and var_q is the n-1 sample variance of the 0/1 data).
    """
    _check_width(width)
    check_confidence(confidence)
    if mean_method == "binary" and q != 1:
        raise PilotInputError(f"binary data use q = 1, not {q!r}")
    arr = as_sample(x, mean_method)
    return _subsessions_needed(_deviations(arr, q, _block_method(mean_method), None), width, confidence)


def required_ci_width(mean: float, ci_percent: float | None = None, ci_width: float | None = None) -> float:
    """Pilot's ``get_required_ci``: the smaller of ci_percent * |mean| and ci_width (those given).

    ``None`` switches a criterion off; 0 or a negative number is an error
    (Pilot silently ignores values <= 0; a zero target is never meant).
    """
    widths = []
    if ci_percent is not None:
        if not (isinstance(ci_percent, (int, float)) and math.isfinite(ci_percent) and ci_percent > 0):
            raise PilotInputError(f"ci_percent must be a fraction > 0 of the mean (0.02 = 2 %), not {ci_percent!r}")
        widths.append(ci_percent * abs(mean))
    if ci_width is not None:
        _check_width(ci_width)
        widths.append(float(ci_width))
    if not widths:
        raise PilotInputError("no target CI: give ci_percent (a fraction of the mean) or ci_width (absolute)")
    width = min(widths)
    if not width > 0:
        raise PilotInputError(f"the target CI width is {width} (ci_percent of a mean of {mean}); give ci_width instead")
    return width


def _required(
    arr: np.ndarray, ci_percent, ci_width, min_samples: int, mean_method: str, confidence: float, ac_limit: float
) -> tuple[int | None, int | None]:
    """(q * max(opt, min_samples), q), or (None, None) where Pilot returns -1."""
    if not isinstance(min_samples, int) or min_samples < 0:
        raise PilotInputError(f"min_samples must be a whole number >= 0, not {min_samples!r}")
    check_confidence(confidence)
    _check_ac_limit(ac_limit)
    width = required_ci_width(_mean(arr, _block_method(mean_method)) if arr.size else 0.0, ci_percent, ci_width)
    if arr.size < MIN_SAMPLES_FOR_REQUIRED:
        return None, None
    size = _sample_size(arr, width, mean_method, confidence, ac_limit)
    if not size.ok:
        return None, None
    assert size.q is not None and size.opt is not None
    return size.q * max(size.opt, min_samples), size.q


def required_samples(x, **target) -> int | None:
    """Pilot's ``_calc_required_num_of_readings``: q * max(opt, min_samples), or None (Pilot's -1).

    Keywords as :func:`analyse_sample`. None when n < 3 or no subsession
    size passes the AC limit. Pilot's session passes neither cl nor the AC
    limit here (always 0.95 and 0.1); callers wanting Pilot's behaviour keep
    the defaults.
    """
    return analyse_sample(x, **target).required


def analyse_sample(
    x,
    *,
    ci_percent: float | None = None,
    ci_width: float | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    mean_method: str = "arithmetic",
    confidence: float = DEFAULT_CONFIDENCE,
    ac_limit: float = DEFAULT_AC_LIMIT,
) -> SampleAnalysis:
    """Everything Pilot reports for a sample: q = 1 var/autocorr, q, CI at q, required samples.

    As in Pilot's unit-reading analysis, q comes from the required-samples
    calculation; with no q (or n < 3) there is no CI.
    """
    arr = as_sample(x, mean_method)
    if arr.size == 0:
        raise NotEnoughData("no values to analyse")
    method = _block_method(mean_method)
    mean = _mean(arr, method)
    var = autocorr = q_var = width = None
    if arr.size >= 2:
        d1 = _block_means(arr, 1, method) - mean
        var, autocorr = _var_of(d1), _autocorr_of(d1)
    required, q = _required(arr, ci_percent, ci_width, min_samples, mean_method, confidence, ac_limit)
    if q is not None:
        q_var = _var_of(_deviations(arr, q, method, mean))
        width = _full_width(arr, q, confidence, mean_method)
    return SampleAnalysis(arr.size, mean, var, autocorr, q, q_var, width, required)
