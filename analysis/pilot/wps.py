"""Pilot's work-per-second (WPS) regression t = alpha + w / v, and its work-amount schedule.

Source: ``pilot_wps_warmup_removal_lr_method`` in
``lib/priv_include/libpilotcpp.h`` of ascar-io/pilot-bench d8bf8a5 and of the
fork darrelllong/pilot-bench 097624d, and ``calc_next_round_work_amount_from_wps``
(``lib/libpilot.cc``); ../shared/reference/methods.md §1 (d). Checked against
the ``wps`` rows of ../shared/golden/pilot/golden_{original,fork}.jsonl.

Per round i: work amount w_i (units) and duration t_i (ns). All variants:

1. keep the rounds with t_i > threshold_ns; fewer than 3 -> :class:`NotEnoughData` (rc 30);
2. q = Pilot's optimal subsession size of the naive speeds w_i / t_i
   (harmonic mean, ``ac_limit``); none -> rc 30; h = kept // q; h < 3 -> rc 30;
3. group every q kept rounds (a trailing partial group is dropped) and fit
   OLS of duration on work amount; v = 1 / slope (units/s), alpha in s;
4. the slope's CI is mapped to v: v_ci_width = |1/(b - hw) - 1/(b + hw)|, a
   FULL width in v units (b = slope in s/unit, hw its half-width).

``variant="textbook"`` (the default) fixes Pilot's defects:

- it regresses subsession **means** (Pilot regresses sums, so its alpha is
  q * alpha when q > 1);
- S_xx, sigma^2 and the residuals all come from the same subsession means
  (Pilot takes S_xx from subsession means but sigma^2 from sums, so its SE
  is off by a factor of q; the original also scales S_xx by rounds - 1
  instead of h - 1);
- the half-width is t^-1(1 - (1-cl)/2; h-2) * SE (the original uses 2 * SE);
- it never reads past the kept rounds (the original groups over the
  unfiltered round count and reads past the end of the filtered arrays:
  undefined behaviour);
- ``ssr``/``ssr_percent`` are over the kept rounds, where the model applies
  (the original sums over every raw round, filtered ones included);
- when b - hw <= 0 the CI of v has no upper bound: ``v_ci_width`` is inf
  (Pilot reports a finite number that means nothing).

In every variant a zero or non-finite slope, or one work amount for every
subsession, raises :class:`NotEnoughData` (rc 30); Pilot divides by 0 there.

``variant="ascar"`` reproduces d8bf8a5 and ``variant="fork"`` 097624d,
defects included, for comparison. Both regress sums (alpha is q-scaled),
use the limit as a C ``float`` (Pilot's parameter type) and group the kept
rounds (the original's read past the end cannot be reproduced: its goldens
for filtered rounds are marked untrusted):

- ascar: S_xx = var_q(kept w) * (raw rounds - 1), hw = 2 SE;
- fork: S_xx = var_q(kept w) * (h - 1), hw = t^-1(1-(1-cl)/2; h-2) SE;
- both: ssr and ssr_percent over every raw round, filtered ones included.

Sums run left to right as in the C++ (``np.cumsum``), so the Pilot variants
match the goldens to the last bits or nearly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from analysis.pilot import subsession as ss
from analysis.pilot.subsession import NotEnoughData, PilotInputError

if TYPE_CHECKING:
    import numpy as np

VARIANTS = ("textbook", "ascar", "fork")
ONE_SECOND_NS = 1_000_000_000
MIN_ROUNDS = 3
# Pilot's slice schedule ([Li16] Eq. (5)): n = 10 rounds within the desired session.
SCHEDULE_ROUNDS = 10
MIN_SLICES = 5  # Pilot's fail-safe slice count
DEFAULT_SESSION_S = 60.0  # Pilot's session_desired_duration


@dataclass(frozen=True)
class WpsResult:
    alpha_s: float  # setup time per round, s (q * alpha in the Pilot variants when q > 1)
    v_per_s: float  # work units per second
    v_ci_width: float  # full CI width of v (inf: no upper bound)
    ssr: float  # sum of squared residuals, s^2
    ssr_percent: float  # sqrt(ssr) / total duration (s) of the same rounds
    subsession_size: int  # h: the number of subsessions regressed (Pilot's subsession_sample_size)
    q: int  # rounds per subsession
    rounds_used: int  # rounds kept by the duration threshold


def _rounds(work_amounts, durations_ns) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    w = ss.as_sample(work_amounts, what="work amounts")
    t = ss.as_sample(durations_ns, what="round durations (ns)")
    if w.size != t.size:
        raise PilotInputError(f"{w.size} work amounts but {t.size} round durations; give one of each per round")
    for arr, name, unit in ((w, "work amount", "units"), (t, "round duration", "ns")):
        bad = np.flatnonzero(arr <= 0)
        if bad.size:
            raise PilotInputError(f"round {bad[0]}: {name} is {arr[bad[0]]} {unit}; it must be > 0")
    return w, t


def wps_fit(
    work_amounts: Sequence[float],
    durations_ns: Sequence[float],
    *,
    ac_limit: float = ss.DEFAULT_AC_LIMIT,
    threshold_ns: float = 0,
    confidence: float = ss.DEFAULT_CONFIDENCE,
    variant: str = "textbook",
) -> WpsResult:
    """Fit t = alpha + w / v over rounds (module doc); raises :class:`NotEnoughData` for Pilot's rc 30."""
    import numpy as np

    if variant not in VARIANTS:
        raise PilotInputError(f"WPS variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    ss.check_confidence(confidence)
    w_raw, t_raw = _rounds(work_amounts, durations_ns)
    keep = t_raw > threshold_ns
    w, t = w_raw[keep], t_raw[keep]
    if w.size < MIN_ROUNDS:
        raise NotEnoughData(f"{w.size} round(s) last longer than {threshold_ns} ns; WPS needs at least {MIN_ROUNDS}")
    if w.min() == w.max():
        raise NotEnoughData(f"every round has the same work amount ({w[0]:g}); "
                            f"WPS needs rounds of different work amounts")
    limit = ac_limit if variant == "textbook" else float(np.float32(ac_limit))  # Pilot's `float` parameter
    q = ss.optimal_subsession_size(w / t, "harmonic", limit)
    if q < 0:
        raise NotEnoughData(f"the speeds of the {w.size} rounds stay autocorrelated beyond {ac_limit} "
                            f"at every subsession size")
    h = w.size // q
    if h < MIN_ROUNDS:
        raise NotEnoughData(f"{w.size} rounds in subsessions of {q} make {h}; WPS needs at least {MIN_ROUNDS}")
    if variant == "textbook":
        return _textbook(w, t, q, h, confidence)
    return _pilot(w, t, w_raw, t_raw, q, h, confidence, variant)


def _group(x: np.ndarray, q: int, h: int) -> np.ndarray:
    """Left-to-right sums of every q values (h groups)."""
    import numpy as np

    return np.cumsum(x[: h * q].reshape(h, q), axis=1)[:, -1]


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Pilot's ``simple_regression_model``: (slope, intercept, S_xx / (n-1)), sums left to right."""
    x_mean = ss._seq_sum(x) / x.size
    y_mean = ss._seq_sum(y) / y.size
    dx = x - x_mean
    x_var = ss._seq_sum(dx * dx) / (x.size - 1)
    xy_cov = ss._seq_sum(dx * (y - y_mean)) / (x.size - 1)
    if not x_var > 0:
        raise NotEnoughData("every subsession has the same work amount; WPS needs different work amounts")
    slope = xy_cov / x_var
    if slope == 0 or not math.isfinite(slope):
        raise NotEnoughData(f"the round durations do not grow with the work amount (slope {slope})")
    return slope, y_mean - slope * x_mean, x_var


def _ssr(alpha_s: float, inv_v: float, w: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """(ssr, ssr_percent) of rounds (w, t ns) under the fit, in Pilot's operation order."""
    dur = t / ONE_SECOND_NS
    r = alpha_s + inv_v * w - dur
    ssr = ss._seq_sum(r * r)
    return ssr, math.sqrt(ssr) / ss._seq_sum(dur)


def _v_ci_width(inv_v: float, half: float, *, bounded: bool) -> float:
    if bounded and inv_v > 0 and not inv_v - half > 0:
        return math.inf
    return abs(1.0 / (inv_v - half) - 1.0 / (inv_v + half))


def _textbook(w: np.ndarray, t: np.ndarray, q: int, h: int, confidence: float) -> WpsResult:
    wm, tm = _group(w, q, h) / q, _group(t, q, h) / q
    slope_ns, alpha_ns, x_var = _ols(wm, tm)
    inv_v, alpha_s = slope_ns / ONE_SECOND_NS, alpha_ns / ONE_SECOND_NS
    residual = alpha_s + inv_v * wm - tm / ONE_SECOND_NS
    sigma2 = ss._seq_sum(residual * residual) / (h - 2)
    half = ss.t_quantile(confidence, h - 2) * math.sqrt(sigma2 / (x_var * (h - 1)))
    ssr, ssr_percent = _ssr(alpha_s, inv_v, w, t)
    return WpsResult(alpha_s, ONE_SECOND_NS / slope_ns, _v_ci_width(inv_v, half, bounded=True), ssr, ssr_percent,
                     h, q, w.size)


def _pilot(w, t, w_raw, t_raw, q: int, h: int, confidence: float, variant: str) -> WpsResult:
    ws, ts = _group(w, q, h), _group(t, q, h)
    slope_ns, alpha_ns, _ = _ols(ws, ts)
    inv_v, alpha_s = slope_ns / ONE_SECOND_NS, alpha_ns / ONE_SECOND_NS
    sub_residual = alpha_s + inv_v * ws - ts / ONE_SECOND_NS
    sigma2 = ss._seq_sum(sub_residual * sub_residual) / (h - 2)
    var_q = ss.subsession_var(w, q)  # of subsession MEANS of the kept work amounts
    if variant == "ascar":
        half = 2 * math.sqrt(sigma2 / (var_q * (w_raw.size - 1)))
    else:
        half = ss.t_quantile(confidence, h - 2) * math.sqrt(sigma2 / (var_q * (h - 1)))
    ssr, ssr_percent = _ssr(alpha_s, inv_v, w_raw, t_raw)  # every raw round, filtered ones too
    return WpsResult(alpha_s, ONE_SECOND_NS / slope_ns, _v_ci_width(inv_v, half, bounded=False), ssr, ssr_percent,
                     h, q, w.size)


def next_wps_work_amount(
    last_work: int,
    last_duration_s: float,
    min_work: int,
    max_work: int,
    desired_session_s: float = DEFAULT_SESSION_S,
    slices: int | None = None,
) -> tuple[int, int]:
    """Pilot's WPS slice schedule: (next work amount, slice count to pass back next time).

    First call (``slices=None``): slice = k * (last_work / last_duration),
    k = max(1 s, (2T - 2 s n) / (n^2 - n)), n = 10, T = ``desired_session_s``,
    s = the last round's duration; slices = max(5, (max - min) // slice)
    ((max - min) itself when that range is 10 or less). Then slice =
    (max - min) // slices and the next amount is the next grid point above the
    last, min + ((last - min) // slice + 1) * slice; past max - slice the slice
    count doubles (the slice halves, unless it is 1) and the grid restarts at
    min + slice; a last amount below min gives min + slice.
    Departure: slices are capped at max - min, so a slice is never 0 (Pilot
    would divide by zero).
    """
    for name, value in (("last work amount", last_work), ("minimum work amount", min_work),
                        ("maximum work amount", max_work)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise PilotInputError(f"{name} must be a whole number >= 0, not {value!r}")
    if last_work == 0:
        raise PilotInputError("the last round's work amount is 0; WPS needs rounds that do some work")
    if not max_work > min_work:
        raise PilotInputError(f"maximum work amount {max_work} must exceed the minimum {min_work} for WPS rounds")
    span = max_work - min_work
    if slices is None:
        if not (isinstance(last_duration_s, (int, float)) and math.isfinite(last_duration_s) and last_duration_s > 0):
            raise PilotInputError(f"the last round's duration must be > 0 s, not {last_duration_s!r}")
        if not (isinstance(desired_session_s, (int, float)) and desired_session_s > 0):
            raise PilotInputError(f"the desired session duration must be > 0 s, not {desired_session_s!r}")
        slices = _initial_slices(last_work, last_duration_s, span, desired_session_s)
    elif not isinstance(slices, int) or slices < 1:
        raise PilotInputError(f"slices must be the whole number >= 1 returned last time, not {slices!r}")
    slices = min(slices, span)
    slice_size = span // slices
    if last_work < min_work:
        return min_work + slice_size, slices
    if last_work > max_work - slice_size:
        if slice_size > 1:
            slices, slice_size = slices * 2, slice_size // 2
        return min_work + slice_size, slices
    return min_work + ((last_work - min_work) // slice_size + 1) * slice_size, slices


def _initial_slices(last_work: int, last_duration_s: float, span: int, desired_session_s: float) -> int:
    n = SCHEDULE_ROUNDS
    if span <= n:
        return span
    session_ns = float(ONE_SECOND_NS) * desired_session_s
    last_ns = last_duration_s * ONE_SECOND_NS
    k = max(float(ONE_SECOND_NS), (2 * session_ns - 2 * last_ns * n) / (n * n - n))
    slice_size = k * (last_work / last_ns)
    return max(MIN_SLICES, int(span / slice_size))
