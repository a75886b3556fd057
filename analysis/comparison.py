"""The one comparison of two result sets (issue 39): per benchmark key, B's time as a multiple of A's.

``coldrun-analyze compare A B`` (analysis/compare_command.py) answers per key in one sentence: slower,
faster, no significant difference, or why no comparison can be made and what would make one.

- Per side, each process execution contributes ONE value: the mean of its steady-state iterations
  (warmup_stats' steady segments, ``classify.steady_state``; outliers left out, as the table's steady perf
  leaves them out). Iterations within an execution are not independent; executions are, so the interval
  includes the between-execution (between-boot) variance.
- An execution classified "no steady state" has no steady-state iterations. ``unsteady="exclude"``
  (default): it is left out and the sentence says how many were; ``"tail"``: it contributes the mean of
  its last ``steady`` iterations (the classifier's window, 25% by default), and the sentence says so.
  Executions without data (errored, crashed ...) or too short to classify are left out and counted.
- The statistic is the ratio of the side means, R = mean(B) / mean(A) (> 1: B is slower).
- Its interval: a t interval of log R by the delta method, var(log R) ~ s_A^2 / (n_A m_A^2) +
  s_B^2 / (n_B m_B^2), with the Welch-Satterthwaite degrees of freedom of those two terms; exp of
  the ends. Chosen over the percentile bootstrap and BCa (scipy.stats.bootstrap, executions resampled
  within each side), which at 99% and 5 executions per side let 4.7-8.1% A/A false positives through
  (2.5-6.5% at 10) where this interval lets 0.5-0.6% (0.3-0.7% from 3 to 30 executions; docs/coverage.md
  "Comparisons", bench/bench_coverage.py --only compare).
  It is deterministic: no seed.
- Significant = the interval excludes 1. Both sides without any variation between executions: the
  interval is the point R itself.
- Not compared (a reason and what would fix it): a key in one file only; a side with no execution with
  data; no steady state on a side (every classified execution is "no steady state"); fewer than 2 usable
  executions on a side (one execution says nothing about the next boot); a mean time of 0.
- Classes that differ between the sides (e.g. flat in A, bad inconsistent in B) do not stop the
  comparison of the steady states; the sentence notes a change to or from a bad class (slowdown, no steady
  state, bad inconsistent), not one between flat and warmup, which diff too calls the same. A CI wider
  than WIDE (high / low) that is not significant says that more executions would narrow it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from analysis import classify
from analysis.key_results import AnnotatedResults, ExecutionAnnotation
from analysis.last_iterations import figure_ranges
from contracts.state_view import COMPLETED

DEFAULT_CONFIDENCE = 0.99   # as the table's bootstrap (warmup_stats)
UNSTEADY_CHOICES = ("exclude", "tail")
MIN_EXECUTIONS = 2
METHOD = "t on log(B/A) over executions (delta method, Welch df)"
# An interval wider than this (high / low) and not significant: the sentence says more executions narrow it.
WIDE = 1.2
GOOD_CLASSES = (classify.FLAT, classify.WARMUP, "good inconsistent")
MAX_LOG_HALF_WIDTH = 700.0   # exp(709) is the largest double
STATISTIC = "B/A of the mean steady-state time of a process execution"
SLOWER, FASTER, SAME, NOT_COMPARED = "slower", "faster", "no significant difference", "not compared"


@dataclass(frozen=True)
class Side:
    """One key on one side: a value per usable execution, and what happened to the others."""

    values: list[float]     # seconds, one per usable process execution
    executions: int         # process executions in the file (every slot)
    without_data: int       # errored, timed out, crashed, not run ...
    unclassified: int       # too short to classify
    no_steady_state: int    # classified "no steady state" (left out, or counted in `tails`)
    tails: int              # of those, contributing their last iterations (unsteady="tail")
    classes: dict[str, int]  # class -> count, classified executions only
    tail_iterations: int = 0

    @property
    def mean(self) -> float | None:
        return math.fsum(self.values) / len(self.values) if self.values else None

    @property
    def classification(self) -> str | None:
        """The key's class as the table words it (warmup_stats' pair classification)."""
        kinds = {c for c, n in self.classes.items() if n}
        if not kinds:
            return None
        if len(kinds) == 1:
            return next(iter(kinds))
        return "good inconsistent" if kinds == {classify.FLAT, classify.WARMUP} else "bad inconsistent"

    def as_dict(self) -> dict:
        return {"mean": self.mean, "values": self.values, "executions": self.executions,
                "used": len(self.values), "without_data": self.without_data, "unclassified": self.unclassified,
                "no_steady_state": self.no_steady_state, "tails": self.tails,
                "classification": self.classification, "classes": dict(self.classes)}


@dataclass(frozen=True)
class RatioInterval:
    ratio: float
    low: float
    high: float
    dof: float | None   # None: no variation between executions on either side (a point interval)


@dataclass(frozen=True)
class KeyComparison:
    key: str
    a: Side | None      # None: the key is not in A
    b: Side | None
    interval: RatioInterval | None
    verdict: str        # SLOWER, FASTER, SAME or NOT_COMPARED
    reason: str = ""    # NOT_COMPARED: what is missing and what would fix it
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        iv = self.interval
        return {"key": self.key, "a": self.a.as_dict() if self.a else None,
                "b": self.b.as_dict() if self.b else None,
                "ratio": iv.ratio if iv else None, "ci": [iv.low, iv.high] if iv else None,
                "dof": iv.dof if iv else None, "verdict": self.verdict, "reason": self.reason or None,
                "notes": self.notes}


def execution_value(series: Sequence[float], e: ExecutionAnnotation, delta: str, steady: int) -> float | None:
    """The mean of one classified execution's steady-state iterations (with no steady state: its last
    ``steady``), outliers left out (None: none left)."""
    values = [v for seg in classify.bootstrap_segments(series, e.outliers, figure_ranges(series, e, delta, steady))
              for v in seg]
    return math.fsum(values) / len(values) if values else None


def side_of(results: AnnotatedResults, key: str, unsteady: str = "exclude") -> Side:
    """Key ``key`` of annotated results, one value per usable execution (module doc)."""
    if unsteady not in UNSTEADY_CHOICES:
        raise ValueError(f"unsteady must be one of {UNSTEADY_CHOICES}, got {unsteady!r}")
    times = results.times[key]
    states = results.states.get(key) or [COMPLETED if t else "empty" for t in times]
    steady, delta = results.classifier.steady, results.classifier.delta
    values: list[float] = []
    classes: Counter = Counter()
    without_data = unclassified = no_steady = tails = 0
    for series, state, e in zip(times, states, results.annotations[key].executions):
        if state != COMPLETED or not series:
            without_data += 1
            continue
        if e.classification is None:
            unclassified += 1
            continue
        classes[e.classification] += 1
        if e.classification == classify.NO_STEADY_STATE:
            no_steady += 1
            if unsteady != "tail":
                continue
        value = execution_value(series, e, delta, steady)
        tails += value is not None and e.classification == classify.NO_STEADY_STATE
        if value is None:
            unclassified += 1
        else:
            values.append(value)
    return Side(values, len(times), without_data, unclassified, no_steady, tails, dict(classes),
                steady if tails else 0)


def ratio_interval(a: Sequence[float], b: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> RatioInterval:
    """mean(b) / mean(a) and its t interval on the log scale (module doc); at least 2 values a side,
    positive means."""
    from scipy import stats

    na, nb = len(a), len(b)
    if na < MIN_EXECUTIONS or nb < MIN_EXECUTIONS:
        raise ValueError(f"a ratio interval needs at least {MIN_EXECUTIONS} values a side (got {na} and {nb})")
    ma, mb = math.fsum(a) / na, math.fsum(b) / nb
    if not (ma > 0 and mb > 0):
        raise ValueError(f"a ratio needs positive means (got {ma!r} and {mb!r})")
    # Relative variances of the two means: var(log m) ~ var(m) / m^2.
    va = math.fsum((x - ma) ** 2 for x in a) / (na - 1) / na / ma ** 2
    vb = math.fsum((x - mb) ** 2 for x in b) / (nb - 1) / nb / mb ** 2
    ratio = mb / ma
    if va + vb == 0:
        return RatioInterval(ratio, ratio, ratio, None)
    dof = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, dof)) * math.sqrt(va + vb)
    if half > MAX_LOG_HALF_WIDTH:    # 2 executions, 1 df, 99.9%: exp would overflow; the interval is (0, inf)
        return RatioInterval(ratio, 0.0, math.inf, dof)
    return RatioInterval(ratio, ratio * math.exp(-half), ratio * math.exp(half), dof)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _shortfall(name: str, s: Side, unsteady: str) -> tuple[str, str] | None:
    """(what side `name` lacks, what would fix it); None: it can be compared."""
    used = len(s.values)
    if used >= MIN_EXECUTIONS:
        return None
    classified = sum(s.classes.values())
    unsteady_left = s.no_steady_state if unsteady == "exclude" else 0
    tail_fix = "compare their last iterations with --unsteady tail"
    if classified == 0 and s.unclassified == 0:
        failed = f" ({_plural(s.without_data, 'execution')} errored, crashed or not run)" if s.without_data else ""
        return f"no execution with data in {name}{failed}", f"rerun {name}"
    if used == 0 and unsteady_left:
        if unsteady_left == classified and not s.unclassified:
            count = f"all {_plural(unsteady_left, 'execution')}"
        else:
            count = f"{unsteady_left} without one, {s.unclassified + classified - unsteady_left} too short to classify"
        return f"no steady state in {name} ({count})", f"run more iterations per execution, or {tail_fix}"
    if used == 0:
        return f"no execution of {name} long enough to classify", "run more iterations per execution"
    left = []
    if unsteady_left:
        left.append(f"{unsteady_left} without a steady state")
    if s.without_data:
        left.append(f"{s.without_data} without data")
    if s.unclassified:
        left.append(f"{s.unclassified} too short to classify")
    others = f" ({', '.join(left)} left out)" if left else ""
    fix = f"run ≥ {MIN_EXECUTIONS} executions per side" + (f", or {tail_fix}" if unsteady_left else "")
    return f"one execution only in {name}{others}", fix


def _notes(a: Side, b: Side, unsteady: str) -> list[str]:
    notes = []
    for name, s in (("A", a), ("B", b)):
        if s.no_steady_state and unsteady == "exclude":
            notes.append(f"{name}: {s.no_steady_state} of {sum(s.classes.values())} executions without a steady "
                         "state left out")
        elif s.tails:
            notes.append(f"{name}: {s.tails} of {len(s.values)} executions without a steady state, their last "
                         f"{s.tail_iterations} iterations used")
    # Flat and warmup are both good (as diff judges them): only a change to or from a bad class is noted.
    if a.classification != b.classification and not (a.classification in GOOD_CLASSES
                                                     and b.classification in GOOD_CLASSES):
        notes.append(f"classes differ: A {a.classification}, B {b.classification}")
    return notes


def compare_key(key: str, a: Side | None, b: Side | None, *, confidence: float = DEFAULT_CONFIDENCE,
                unsteady: str = "exclude") -> KeyComparison:
    """The verdict on one key (module doc)."""
    if a is None or b is None:
        where, missing = ("B", "A") if a is None else ("A", "B")
        return KeyComparison(key, a, b, None, NOT_COMPARED, f"only in {where}: {missing} has no such key")
    problems = [p for p in (_shortfall("A", a, unsteady), _shortfall("B", b, unsteady)) if p]
    if problems:
        fixes = list(dict.fromkeys(fix for _, fix in problems))
        return KeyComparison(key, a, b, None, NOT_COMPARED, "; ".join([what for what, _ in problems] + fixes))
    try:
        iv = ratio_interval(a.values, b.values, confidence)
    except ValueError:
        return KeyComparison(key, a, b, None, NOT_COMPARED, "a mean time of 0: a ratio needs positive times")
    verdict = SLOWER if iv.low > 1.0 else FASTER if iv.high < 1.0 else SAME
    notes = _notes(a, b, unsteady)
    if verdict == SAME and iv.high > WIDE * iv.low:
        notes.append(f"a wide CI from {len(a.values)} and {len(b.values)} executions: more executions per side "
                     "narrow it")
    return KeyComparison(key, a, b, iv, verdict, "", notes)


def compare_results(a: AnnotatedResults, b: AnnotatedResults, *, confidence: float = DEFAULT_CONFIDENCE,
                    unsteady: str = "exclude") -> list[KeyComparison]:
    """Every key of either side, sorted, compared."""
    keys = sorted(set(a.times) | set(b.times))
    return [compare_key(k, side_of(a, k, unsteady) if k in a.times else None,
                        side_of(b, k, unsteady) if k in b.times else None,
                        confidence=confidence, unsteady=unsteady) for k in keys]
