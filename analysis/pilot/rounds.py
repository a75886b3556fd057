"""Pilot's unit-reading session: which unit readings a round keeps, and the next round's work amount.

Source: ascar-io/pilot-bench d8bf8a5 ``lib/workload.cc``
(``calc_next_round_work_amount``, ``get_round_work_amount_soft_limit``) and
``lib/libpilot.cc`` (``pilot_warm_up_removal_detect``,
``pilot_import_benchmark_results``, the plugins
``calc_next_round_work_amount_meet_lower_bound``, ``_from_readings`` and
``_from_unit_readings``); ../shared/reference/methods.md §1 (c). Checked
against Pilot's ``unit_test_session_duration`` ({1, 5, 10}) and
../shared/golden/pilot/golden_session_*.jsonl.

A session is a list of rounds; a round runs ``work_amount`` units and
reports one unit reading (UR) per unit. For one PI whose URs must satisfy
the target (no readings or WPS analysis), after each round:

- **Kept URs** (:func:`kept_range`): method ``none`` keeps them all (even
  in short rounds); otherwise a round shorter than ``short_round_ns`` keeps
  none; ``fixed`` drops round(fraction * n) from the front; ``edm`` keeps
  Pilot's dominant segment [b, e) (all of a round with fewer than 30 URs,
  none when there is no dominant segment).
- **Next work amount** (:func:`next_work_amount`), the max of:
  the floor max(adjusted minimum, min_work_amount), where the adjusted
  minimum is the work amount of the first round long enough;
  the short-round rule (only until the first long round): after a short
  round, twice its work amount (max_work_amount when it is over half of it);
  the readings rule, which with no reading PI still proposes
  ``init_work_amount``;
  the unit-readings rule: with no kept UR, twice the last work amount;
  otherwise req = Pilot's required samples of the kept URs (ci 0.95, AC
  limit 0.1, as Pilot hard-codes); the PI is done when req < total kept
  (strict); need = req - total (or total when req is unknown: doubling the
  data) and the work amount is int(1.2 * need * (sum of all work amounts /
  sum of all URs reported)), max_work_amount when it reaches it.
  The result is capped at max_work_amount and then at the soft limit
  5 * (sum of work amounts // rounds). The session is done when no rule
  asks for more (the short-round rule asks while rounds are short, the
  unit-readings rule until req < total).

The work-per-UR ratio divides by every UR reported, warm-up and rejected
rounds included (``calc_avg_work_unit_per_amount`` counts
``unit_readings_[piid][round].size()``); methods.md's "URs kept" is not what
the code does. Pilot also stops after 100 wholly rejected rounds and at the
session time limit; those stops belong to whoever runs the rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from analysis.pilot import subsession as ss
from analysis.pilot.subsession import PilotInputError

if TYPE_CHECKING:
    import numpy as np

SAFETY_FACTOR = 1.2  # Pilot asks for 20 % more than it computes
SOFT_LIMIT_FACTOR = 5  # round_work_amount_to_avg_amount_limit_
DEFAULT_SHORT_ROUND_NS = 1_000_000_000  # short_round_detection_threshold_ (CLI presets: 3/10/20 s)
DEFAULT_FIXED_FRACTION = 0.1  # warm_up_removal_percentage_
MAX_REJECTED_ROUNDS = 100  # ERR_TOO_MANY_REJECTED_ROUNDS beyond this
WARM_UP_METHODS = ("edm", "none", "fixed")
_NO_WORK_PER_UR = 1e-8  # Pilot treats a smaller work-per-UR ratio as "no information"

RequiredFunc = Callable[["np.ndarray"], "int | None"]


@dataclass(frozen=True)
class Round:
    work_amount: int
    duration_ns: int
    num_urs: int  # unit readings reported (after Pilot truncates a cool-down)
    warm_up_len: int  # URs dropped from the front; == num_urs: the round was rejected

    @property
    def kept(self) -> int:
        return self.num_urs - self.warm_up_len


@dataclass(frozen=True)
class SessionSettings:
    max_work_amount: int
    init_work_amount: int = 0
    min_work_amount: int = 0
    short_round_ns: int = DEFAULT_SHORT_ROUND_NS
    warm_up: str = "edm"
    fixed_fraction: float = DEFAULT_FIXED_FRACTION
    ci_percent: float | None = 0.1  # Pilot's default required CI: 10 % of the mean
    ci_width: float | None = None
    min_samples: int = ss.DEFAULT_MIN_SAMPLES

    def __post_init__(self) -> None:
        for name in ("max_work_amount", "init_work_amount", "min_work_amount", "short_round_ns", "min_samples"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise PilotInputError(f"{name} must be a whole number >= 0, not {value!r}")
        if self.warm_up not in WARM_UP_METHODS:
            raise PilotInputError(f"warm_up must be one of {', '.join(WARM_UP_METHODS)}, not {self.warm_up!r}")
        if not 0 <= self.fixed_fraction < 1:
            raise PilotInputError(f"fixed_fraction must be in [0, 1), not {self.fixed_fraction!r}")


def kept_range(urs: Sequence[float], duration_ns: int, settings: SessionSettings) -> tuple[int, int]:
    """[begin, end) of the URs a round keeps (Pilot's warm-up removal at ingest); begin == end: none."""
    n = len(urs)
    if settings.warm_up == "none":
        return 0, n
    if duration_ns < settings.short_round_ns:
        return n, n
    if settings.warm_up == "fixed":
        return (0 if n == 1 else round(settings.fixed_fraction * n)), n
    from analysis.pilot import edm

    try:
        segment = edm.dominant_segment(urs)
    except edm.TooFewReadings:
        return 0, n
    return (n, n) if segment is None else segment


def first_work_amount(settings: SessionSettings) -> int:
    """The first round's work amount: ``init_work_amount``, or 1 (Pilot's trial run) when it is 0."""
    if settings.max_work_amount == 0:
        return 0
    return settings.init_work_amount or min(1, settings.max_work_amount)


def soft_limit(work_amounts: Sequence[int], max_work_amount: int) -> int:
    """``get_round_work_amount_soft_limit``: 5 x the (integer) average work amount, at most the max."""
    if not work_amounts:
        return max_work_amount
    return min(SOFT_LIMIT_FACTOR * (sum(work_amounts) // len(work_amounts)), max_work_amount)


def work_for(need: int, work_per_unit: float) -> int:
    """Pilot's ``size_t(1.2 * need * work_per_unit)``, in its operation order."""
    return int(SAFETY_FACTOR * need * work_per_unit)


def _short_round_rule(rounds: Sequence[Round], settings: SessionSettings) -> tuple[int, bool] | None:
    """``calc_next_round_work_amount_meet_lower_bound``; None once finished (a prior round was long)."""
    if any(r.duration_ns >= settings.short_round_ns for r in rounds[:-1]):
        return None
    last = rounds[-1].work_amount
    top = settings.max_work_amount
    if rounds[-1].duration_ns >= settings.short_round_ns:
        return last, False  # this round fixes the adjusted minimum
    if last == top or last > top // 2:
        return top, True
    return min(2 * last, top), True


def _unit_readings_rule(
    rounds: Sequence[Round], kept_urs: np.ndarray, settings: SessionSettings, required: RequiredFunc
) -> tuple[int, bool]:
    """``calc_next_round_work_amount_from_unit_readings`` for one PI."""
    total = kept_urs.size
    last = rounds[-1].work_amount
    if total == 0:
        if last == 0:
            return (settings.init_work_amount or settings.max_work_amount // 10 or settings.max_work_amount), True
        return min(settings.max_work_amount, 2 * last), True
    reported = sum(r.num_urs for r in rounds)
    work_per_unit = sum(r.work_amount for r in rounds) / reported
    if abs(work_per_unit) < _NO_WORK_PER_UR:
        return 2 * last, True
    req = required(kept_urs)
    if req is not None and req > 0:
        if req < total:
            return 0, False
        need = req - total
    else:
        need = total  # not enough information: double the data
    return min(work_for(need, work_per_unit), settings.max_work_amount), True


def pilot_required(settings: SessionSettings) -> RequiredFunc:
    """Pilot's required URs for ``settings`` (cl 0.95 and AC limit 0.1, which Pilot hard-codes)."""
    return lambda urs: ss.required_samples(urs, ci_percent=settings.ci_percent, ci_width=settings.ci_width,
                                           min_samples=settings.min_samples)


def next_work_amount(
    rounds: Sequence[Round],
    kept_urs: Sequence[float] | np.ndarray,
    settings: SessionSettings,
    *,
    required: RequiredFunc | None = None,
) -> int | None:
    """The next round's work amount after ``rounds``, or None when the session is done.

    ``kept_urs``: every kept UR so far, in order. ``required`` replaces
    Pilot's required-URs calculation (Pilot's ``calc_required_unit_readings_func``
    hook); it returns None for "not enough data".
    """
    if not rounds:
        return first_work_amount(settings)
    kept = ss.as_sample(kept_urs, what="kept unit readings")
    if kept.size != sum(r.kept for r in rounds):
        raise PilotInputError(f"{kept.size} kept unit readings, but the rounds keep {sum(r.kept for r in rounds)}")
    top = settings.max_work_amount
    if top == 0:
        return None  # the workload cannot set a work amount: nothing to choose
    floor = settings.min_work_amount
    short = _short_round_rule(rounds, settings)
    if short is None:  # the adjusted minimum: the first round long enough
        floor = max(floor, next(r.work_amount for r in rounds if r.duration_ns >= settings.short_round_ns))
    proposals = [(floor, False), short or (0, False), (settings.init_work_amount, False),
                 _unit_readings_rule(rounds, kept, settings, required or pilot_required(settings))]
    if not any(more for _, more in proposals):
        return None
    work = min(max(w for w, _ in proposals), top)
    return min(work, soft_limit([r.work_amount for r in rounds], top))
