"""Pilot's comparison of two samples (Welch's t-test), from summary statistics or key by key from results.

- :func:`welch_summary`: ``coldrun-analyze compare --welch M1 V1 N1 M2 V2 N2``:
  Pilot's ``pilot_p_eq`` (p, unrounded Welch dof, CI of mean1 - mean2) and,
  for a target p, ``pilot_optimal_sample_size_for_eq_test`` with the first
  sample as the baseline: the size of the second sample that would bring p
  down to the target (None when no size can: the difference is too small
  against the baseline's own uncertainty).
- :func:`compare_reports`: ``coldrun-analyze compare --method welch A B``. Per key in both
  (``analysis.pilot.results`` reports), the samples are the usable process
  executions' means (Pilot's stable-segment means): executions are the
  independent samples, iterations within one are not. Variance: the n-1
  sample variance of those means. The difference and its CI are
  mean(A) - mean(B); the sample size is B's executions for the target p.
  A side with fewer than 2 usable executions gets Pilot's p = 0.5 ("cannot
  tell") and no CI; both sides constant: no test (Welch is undefined).
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.pilot import subsession as ss
from analysis.pilot import welch
from analysis.pilot.results import KeyReport
from analysis.pilot.subsession import PilotInputError

DEFAULT_TARGET_P = 0.05  # Pilot's desired_p_value_


@dataclass(frozen=True)
class WelchComparison:
    p: float
    dof: float | None  # None: a sample has fewer than 2 values
    diff_ci: tuple[float, float] | None  # CI of mean1 - mean2
    samples_for_target_p: int | None  # second sample's size for p <= target; None: unreachable or not asked
    note: str = ""

    def as_dict(self) -> dict:
        return {"p": self.p, "dof": self.dof, "diff_ci": list(self.diff_ci) if self.diff_ci else None,
                "samples_for_target_p": self.samples_for_target_p, "note": self.note}


def welch_summary(mean1: float, var1: float, n1: int, mean2: float, var2: float, n2: int, *,
                  confidence: float = ss.DEFAULT_CONFIDENCE, target_p: float | None = None) -> WelchComparison:
    """Welch's test of mean1 = mean2 from (mean, variance, n) of each sample (module doc)."""
    result = welch.p_eq(mean1, mean2, n1, n2, var1, var2, confidence)
    if result.dof is None:
        return WelchComparison(result.p, None, None, None,
                               f"samples of {n1} and {n2}: Welch needs at least 2 values each (p 0.5: cannot tell)")
    note, size = "", None
    if target_p is not None:
        size = welch.optimal_sample_size_for_eq_test(mean1, n1, var1, mean2, n2, var2, target_p)
        if size is None:
            note = f"no sample size brings p to {target_p}: the difference is within the first sample's uncertainty"
    return WelchComparison(result.p, result.dof, result.ci, size, note)


@dataclass(frozen=True)
class WelchSide:
    executions: int  # usable executions
    mean: float | None
    variance: float | None  # of the executions' means (n - 1); None below 2

    def as_dict(self) -> dict:
        return {"executions": self.executions, "mean": self.mean, "variance": self.variance}


def side(report: KeyReport) -> WelchSide:
    means = report.usable_means()
    if not means:
        return WelchSide(0, None, None)
    return WelchSide(len(means), ss.sample_mean(means), ss.subsession_var(means, 1) if len(means) >= 2 else None)


@dataclass(frozen=True)
class WelchKeyComparison:
    key: str
    a: WelchSide
    b: WelchSide
    welch: WelchComparison | None  # None: a side has no usable execution, or the test is undefined
    note: str = ""

    @property
    def relative_change(self) -> float | None:
        """(mean B - mean A) / mean A."""
        if self.a.mean is None or self.b.mean is None or self.a.mean == 0:
            return None
        return (self.b.mean - self.a.mean) / self.a.mean

    def as_dict(self) -> dict:
        out = {"key": self.key, "a": self.a.as_dict(), "b": self.b.as_dict(),
               "relative_change": self.relative_change}
        test = self.welch.as_dict() if self.welch else {"p": None, "dof": None, "diff_ci": None,
                                                        "samples_for_target_p": None, "note": ""}
        note = "; ".join(n for n in (self.note, test.pop("note")) if n)
        out.update(test)
        out["executions_for_target_p"] = out.pop("samples_for_target_p")
        out["note"] = note
        return out


@dataclass(frozen=True)
class Comparison:
    keys: list[WelchKeyComparison]
    only_in_a: list[str]
    only_in_b: list[str]
    confidence: float
    target_p: float

    def as_dict(self) -> dict:
        return {"confidence": self.confidence, "target_p": self.target_p,
                "keys": [k.as_dict() for k in self.keys], "only_in_a": self.only_in_a, "only_in_b": self.only_in_b}


def compare_key(key: str, a: KeyReport, b: KeyReport, confidence: float, target_p: float) -> WelchKeyComparison:
    sa, sb = side(a), side(b)
    if sa.mean is None or sb.mean is None:
        which = " and ".join(name for name, s in (("A", sa), ("B", sb)) if s.mean is None)
        return WelchKeyComparison(key, sa, sb, None, f"no usable execution in {which}")
    if sa.executions < 2 or sb.executions < 2:
        test = welch_summary(sa.mean, sa.variance or 0.0, sa.executions, sb.mean, sb.variance or 0.0,
                             sb.executions, confidence=confidence)
        return WelchKeyComparison(key, sa, sb, test)
    try:
        test = welch_summary(sa.mean, sa.variance, sa.executions, sb.mean, sb.variance,  # type: ignore[arg-type]
                             sb.executions, confidence=confidence, target_p=target_p)
    except PilotInputError:  # both variances 0
        return WelchKeyComparison(key, sa, sb, None,
                                  "every execution mean is equal on both sides: Welch's test is undefined")
    return WelchKeyComparison(key, sa, sb, test)


def compare_reports(a: list[KeyReport], b: list[KeyReport], *, confidence: float = ss.DEFAULT_CONFIDENCE,
                    target_p: float = DEFAULT_TARGET_P) -> Comparison:
    """Welch per key present in both (module doc); the other keys are listed."""
    by_a, by_b = {r.key: r for r in a}, {r.key: r for r in b}
    common = sorted(set(by_a) & set(by_b))
    return Comparison([compare_key(k, by_a[k], by_b[k], confidence, target_p) for k in common],
                      sorted(set(by_a) - set(by_b)), sorted(set(by_b) - set(by_a)), confidence, target_p)
