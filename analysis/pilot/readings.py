"""Pilot's analysis of one series of readings: its stable segment, then the subsession statistics in it.

This is what ``coldrun-analyze pilot --readings FILE`` prints
(analysis/pilot/command.py documents the JSON). Steps:

1. Warm-up removal (on by default), as Pilot ingests a round's unit
   readings: EDM changepoints (``edm_min_size``, ``edm_percent``, linear
   penalty) and the dominant segment [b, e), the one segment longer than
   half the readings (``analysis.pilot.edm``):

   - fewer than ``edm_min_size`` readings: EDM cannot run and, as Pilot
     does with such a round, every reading is kept; ``changepoints`` is None;
   - no dominant segment: Pilot ingests nothing from such a round, so
     nothing is analysed (``stable_segment`` and the statistics are None).

   Without warm-up removal every reading is analysed, as Pilot's
   ``bench analyze`` does (it never removes warm-up); ``changepoints`` is None.
2. The statistics are those of the **kept readings** x[b:e] (n of them),
   as Pilot analyses the unit readings it kept: the mean (arithmetic,
   harmonic or binary); q = the given subsession size, else Pilot's optimal
   subsession size at the AC limit (binary data: 1, as Pilot's sample-size
   call forces); the subsession variance, autocovariance and
   autocorrelation at q (around the mean of all n); the full CI width at q;
   ``required_subsessions`` = Pilot's opt = ceil(var_q (T / (w/2))^2) for
   the target width w (``ci_percent`` of the mean and/or ``ci_width``, the
   smaller wins); ``required_samples`` = q * max(opt, min_samples).

Why Pilot's published ``bench analyze`` numbers for Ferrari's 48 values
still come out with warm-up removal on: EDM places no changepoint in fewer
than 2 x min_size = 60 readings, so 48 readings are one segment, [0, 48),
and the whole series is analysed. A longer series with a warm-up is
analysed from its stable segment, which ``bench analyze`` would not do;
``warmup_removal=False`` reproduces it exactly.

Departures (both as in ``analysis.pilot.stopping``): a constant series (a
coarse clock) has a zero-width CI: q = 1 (or the given q), variance and
autocovariance 0, autocorrelation None (0/0; Pilot's rule makes it 1 and
then finds no q), required = q * min_samples. The AC limit and confidence
reach the sample size too (Pilot's session hard-codes 0.1 and 0.95 there;
its ``bench analyze`` honours ``--ac``).

Readings must be finite and >= 0 (times or rates; harmonic: > 0, binary:
0 or 1), at least 3 of them (a CI and a sample size need 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from analysis.pilot import edm
from analysis.pilot import subsession as ss
from analysis.pilot.subsession import NotEnoughData, PilotInputError

if TYPE_CHECKING:
    import numpy as np

MIN_READINGS = ss.MIN_SAMPLES_FOR_REQUIRED


@dataclass(frozen=True)
class ReadingsSettings:
    mean_method: str = "arithmetic"
    ac_limit: float = ss.DEFAULT_AC_LIMIT
    subsession_size: int | None = None  # forces q
    confidence: float = ss.DEFAULT_CONFIDENCE
    ci_percent: float | None = 0.1  # target FULL width as a fraction of the mean
    ci_width: float | None = None  # target FULL width, absolute
    min_samples: int = ss.DEFAULT_MIN_SAMPLES
    warmup_removal: bool = True
    edm_percent: float = edm.PERCENT
    edm_min_size: int = edm.MIN_SIZE


@dataclass(frozen=True)
class ReadingsAnalysis:
    readings: int  # all readings given
    changepoints: list[int] | None  # None: EDM not run (removal off, or too few readings)
    stable_segment: tuple[int, int] | None  # [begin, end) analysed; None: no dominant segment, nothing analysed
    n: int  # readings analysed
    mean: float | None
    q: int | None
    variance: float | None  # subsession variance at q
    autocovariance: float | None
    autocorrelation: float | None
    ci_width: float | None  # full width at q
    target_ci_width: float | None
    required_subsessions: int | None
    required_samples: int | None
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        """The machine interface's fields (analysis/pilot/command.py)."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "notes"}
        out["stable_segment"] = list(self.stable_segment) if self.stable_segment else None
        out["notes"] = list(self.notes)
        return out


def _check(settings: ReadingsSettings) -> None:
    ss.check_mean_method(settings.mean_method)
    ss.check_confidence(settings.confidence)
    q = settings.subsession_size
    if q is not None and (not isinstance(q, int) or q < 1):
        raise PilotInputError(f"subsession size must be a whole number >= 1, not {q!r}")
    if q is not None and q != 1 and settings.mean_method == "binary":
        raise PilotInputError(f"binary data use subsession size 1 (the binomial-proportion CI), not {q}")
    if not (isinstance(settings.min_samples, int) and settings.min_samples >= 0):
        raise PilotInputError(f"minimum samples must be a whole number >= 0, not {settings.min_samples!r}")
    if not (isinstance(settings.edm_min_size, int) and settings.edm_min_size >= 1):
        raise PilotInputError(f"EDM minimum segment size must be a whole number >= 1, not {settings.edm_min_size!r}")
    if not (math.isfinite(settings.edm_percent) and settings.edm_percent >= 0):
        raise PilotInputError(f"EDM percent penalty must be a number >= 0, not {settings.edm_percent!r}")
    ss.required_ci_width(1.0, settings.ci_percent, settings.ci_width)  # a target is given, each > 0


def _readings(x: Sequence[float] | np.ndarray, mean_method: str) -> np.ndarray:
    import numpy as np

    arr = ss.as_sample(x, mean_method, what="readings")
    negative = np.flatnonzero(arr < 0)
    if negative.size:
        i = int(negative[0])
        raise PilotInputError(f"readings: reading {i} is {arr[i]}; readings are times or rates, never negative")
    if arr.size < MIN_READINGS:
        raise NotEnoughData(f"{arr.size} reading(s); Pilot's analysis needs at least {MIN_READINGS} "
                            "(a CI and a sample size)")
    return arr


def _stable_segment(arr: np.ndarray, settings: ReadingsSettings
                    ) -> tuple[list[int] | None, tuple[int, int] | None, list[str]]:
    n = arr.size
    if not settings.warmup_removal:
        return None, (0, n), ["warm-up removal off: all readings analysed"]
    if n < settings.edm_min_size:
        return None, (0, n), [f"{n} readings, fewer than {settings.edm_min_size}: EDM cannot run; "
                              "all readings analysed (as Pilot keeps such a round whole)"]
    try:
        cps = edm.changepoints(arr, min_size=settings.edm_min_size, percent=settings.edm_percent)
    except ValueError as exc:  # a parameter the C code refuses
        raise PilotInputError(f"EDM: {exc}") from None
    begin = 0
    for end in [*cps, n]:
        if end - begin > n // 2:
            return cps, (begin, end), []
        begin = end
    return cps, None, [f"no segment between changepoints is longer than half of the {n} readings: "
                       "nothing analysed (Pilot ingests nothing from such a round)"]


def analyse_readings(x: Sequence[float] | np.ndarray,
                     settings: ReadingsSettings = ReadingsSettings()) -> ReadingsAnalysis:
    """The stable segment of ``x`` and Pilot's statistics in it (module doc)."""
    _check(settings)
    arr = _readings(x, settings.mean_method)
    changepoints, segment, notes = _stable_segment(arr, settings)
    if segment is None:
        return ReadingsAnalysis(arr.size, changepoints, None, 0, None, None, None, None, None, None, None, None, None,
                                notes=tuple(notes))
    kept = arr[segment[0]: segment[1]]
    if kept.size < MIN_READINGS:
        raise NotEnoughData(f"the stable segment [{segment[0]}, {segment[1]}) holds {kept.size} reading(s); "
                            f"at least {MIN_READINGS} are needed")
    return ReadingsAnalysis(arr.size, changepoints, segment, kept.size, *_statistics(kept, settings, notes),
                            notes=tuple(notes))


# mean, q, variance, autocovariance, autocorrelation, CI width, target, opt, required
_Statistics = tuple[float, int | None, float | None, float | None, float | None, float | None, float | None,
                    int | None, int | None]


def _statistics(kept: np.ndarray, settings: ReadingsSettings, notes: list[str]) -> _Statistics:
    """(mean, q, variance, autocovariance, autocorrelation, CI width, target, opt, required)."""
    method, n = settings.mean_method, kept.size
    mean = ss.sample_mean(kept, method)
    target = ss.required_ci_width(mean, settings.ci_percent, settings.ci_width)
    q = settings.subsession_size
    if q is not None and n // q < 2:
        raise NotEnoughData(f"subsession size {q} makes {n // q} subsession(s) of the {n} readings analysed; "
                            "at least 2 are needed")
    if kept.min() == kept.max():
        q = q or 1
        notes.append(f"all {n} readings are equal: CI width 0 (a coarse clock?)")
        return mean, q, 0.0, 0.0, None, 0.0, target, 0, q * settings.min_samples
    if q is None:
        q = 1 if method == "binary" else ss.optimal_subsession_size(kept, method, settings.ac_limit)
    if q < 0:
        notes.append(f"no subsession size up to {n // 3} brings |autocorrelation| within {settings.ac_limit}: "
                     "no q, CI or sample size (raise the AC limit or give a subsession size)")
        return mean, None, None, None, None, None, target, None, None
    variance = ss.subsession_var(kept, q, method)
    autocov = ss.subsession_autocov(kept, q, method)
    autocorr = ss.subsession_autocorr(kept, q, method)
    width = ss.ci_width(kept, q, settings.confidence, method)
    opt = ss.subsessions_for_width(kept, q, target, method, settings.confidence)
    return mean, q, variance, autocov, autocorr, width, target, opt, q * max(opt, settings.min_samples)
