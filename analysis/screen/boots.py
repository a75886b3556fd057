"""Boot dependency: how much of a key's variance lies between boots.

coldrun reboots before every process execution, so between-execution
variance is between-boot variance. For each key, a one-way random-effects
model on the kept iterations of each execution (groups = executions) splits
the variance into between (σ²_b) and within (σ²_w) parts by the ANOVA
estimators: ``σ²_w = MSW``, ``σ²_b = max(0, (MSB - MSW) / n0)`` with
``n0 = (N - Σn_i²/N) / (k - 1)``. The between share is the intraclass
correlation ``σ²_b / (σ²_b + σ²_w)``; its CI comes from the F distribution
(``F = MSB/MSW``, ``(F/F_hi - 1)/(F/F_hi + n0 - 1)`` .. ``(F/F_lo - 1)/(F/F_lo +
n0 - 1)``, clipped to [0, 1]): exact when every execution keeps the same
number of iterations, the usual n0 approximation otherwise. The model takes
the iterations of an execution as independent; autocorrelated iterations
make MSW too small and the between share too large (Pilot's subsession
analysis, ``analysis.pilot``, measures that autocorrelation).

The warning: the variance of a key's mean over k executions of about m
iterations each is ``σ²_b/k + σ²_w/(k m)``. When the between part is more
than half of it (and the share's CI excludes 0), more iterations per
execution cannot narrow the CI much: more executions (boots) are needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from analysis.errors import AnalysisError

if TYPE_CHECKING:
    import numpy as np

# The between part's share of the variance of a key's mean above which more
# executions, not more iterations, are what narrows the CI.
MEAN_VARIANCE_SHARE_WARNING = 0.5


def boot_dependency(groups: Sequence[np.ndarray], confidence: float) -> dict:
    """The random-effects split of ``groups`` (one array of iterations per execution)."""
    import numpy as np
    from scipy.stats import f as f_dist

    k = len(groups)
    sizes = np.array([g.shape[0] for g in groups], dtype=np.float64)
    total = float(sizes.sum())
    if k < 2 or total - k < 1:
        return {"executions": k, "iterations": int(total), "between_share": None, "ci": None, "p": None,
                "between_variance": None, "within_variance": None, "mean_variance_between_share": None,
                "more_executions_needed": False, "note": "needs at least 2 executions and a residual"}
    means = np.array([float(g.mean()) for g in groups])
    grand = float(np.dot(sizes, means) / total)
    msb = float(np.dot(sizes, (means - grand) ** 2)) / (k - 1)
    msw = sum(float(((g - m) ** 2).sum()) for g, m in zip(groups, means)) / (total - k)
    n0 = (total - float((sizes ** 2).sum()) / total) / (k - 1)
    between = max(0.0, (msb - msw) / n0)
    share = between / (between + msw) if between + msw > 0 else None
    low = high = p = None
    if msw > 0:
        ratio = msb / msw
        p = float(f_dist.sf(ratio, k - 1, total - k))   # H0: no between-boot variance
        alpha = 1.0 - confidence
        upper_q = float(f_dist.ppf(1.0 - alpha / 2.0, k - 1, total - k))
        lower_q = float(f_dist.ppf(alpha / 2.0, k - 1, total - k))
        low = _icc(ratio / upper_q, n0)
        high = _icc(ratio / lower_q, n0) if lower_q > 0 else 1.0
    elif msb > 0:
        low = high = 1.0  # no variation within executions at all
    m = total / k
    mean_share = between / (between + msw / m) if between + msw > 0 else None
    warn = bool(mean_share is not None and mean_share > MEAN_VARIANCE_SHARE_WARNING and low is not None and low > 0)
    return {"executions": k, "iterations": int(total), "between_share": share,
            "ci": None if low is None else [low, high], "p": p, "between_variance": between, "within_variance": msw,
            "mean_variance_between_share": mean_share, "more_executions_needed": warn, "note": None}


def _icc(f_value: float, n0: float) -> float:
    return min(1.0, max(0.0, (f_value - 1.0) / (f_value + n0 - 1.0)))


def warning_text(name: str, found: dict) -> str:
    return (f"{name}: {found['mean_variance_between_share']:.0%} of the variance of its mean lies between boots "
            f"(between share {found['between_share']:.3g}, CI [{found['ci'][0]:.3g}, {found['ci'][1]:.3g}]): "
            "more executions, not more iterations, will narrow its CI")


def boots_report(path: str, *, confidence: float, steady_state: bool = True) -> dict:
    """``boots --json``: {"source", "confidence", "steady_state", "keys": {key: split + "left_out"}, "warnings"}."""

    from analysis.inputs import read_results
    from analysis.screen.executions import completed_executions, kept_iterations
    from analysis.screen.report import finite

    results = read_results(path)
    keys: dict[str, dict] = {}
    warnings: list[str] = []
    for key, executions in completed_executions(results).items():
        groups, left_out = [], []
        for pexec, times in executions:
            kept = kept_iterations(times, steady_state)
            if kept.values is None:
                left_out.append({"pexec": pexec, "reason": kept.note})
            else:
                groups.append(kept.values)
        found = boot_dependency(groups, confidence)
        found["left_out"] = left_out
        keys[key] = found
        if found["more_executions_needed"]:
            warnings.append(warning_text(key, found))
    if not keys:
        raise AnalysisError(f"{path}: no completed process executions to analyse")
    return finite({"source": str(path), "confidence": confidence, "steady_state": steady_state, "keys": keys,
                   "warnings": warnings})


def _number(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None else format(value, spec)


def render_text(doc: dict) -> str:
    level = f"{doc['confidence'] * 100:g}%"
    lines = [f"boot dependency: {doc['source']} (between-execution = between-boot; "
             f"{'steady state' if doc['steady_state'] else 'all iterations'})",
             f"  {'key':40} {'execs':>5} {'between share':>13} {level + ' CI':>18} {'of mean var':>11}"]
    for key, found in doc["keys"].items():
        ci = "-" if found["ci"] is None else f"[{found['ci'][0]:.3g}, {found['ci'][1]:.3g}]"
        lines.append(f"  {key:40} {found['executions']:>5} {_number(found['between_share']):>13} {ci:>18} "
                     f"{_number(found['mean_variance_between_share'], '.0%'):>11}")
        if found["note"]:
            lines.append(f"    note: {found['note']}")
        for left in found["left_out"]:
            lines.append(f"    execution {left['pexec']} left out: {left['reason']}")
    lines += [f"  warning: {w}" for w in doc["warnings"]]
    return "\n".join(lines) + "\n"
