"""Compare two summaries the way warmup_stats' ``diff_results`` does.

For every (VM, benchmark) in both summaries a six-slot verdict vector
``[classifications, steady iter, steady iter variation, steady perf,
steady perf variation, intersection]`` is filled with SAME / DIFFERENT /
BETTER / WORSE (0-3) or None (not comparable):

- classifications: Sison-Glaz 99% simultaneous intervals of the counts
  [warmup, slowdown, flat, no steady state]; any non-overlapping category
  makes the pair better (more warmup+flat), worse (more slowdown+NSS) or
  different; a change only between warmup and flat counts is SAME; a SAME
  pair that lost all its no-steady-state executions is BETTER.
- steady iter: overlap of the 5%-95% ranges (an all-flat side counts as
  (1, 1)); its variation compares the widths of the ranges.
- steady perf: overlap of median ± CI; lower is better; its variation says
  whether the CI narrowed (changes below CI_NARROW_TOLERANCE are SAME).
- intersection: SAME if nothing changed, BETTER/WORSE if every change points
  one way, DIFFERENT otherwise.

The result is warmup_stats' ``diff_summary.json`` shape:
``{"diff": {vm: {bench: [6 slots]}}, "skipped": [[before only], [after only]],
"before": summary, "after": summary, "classifier": ...}``.
"""

from __future__ import annotations

import copy
from typing import Any

from .multinomial_ci import DIFF_ALPHA, sison_glaz

from analysis.errors import AnalysisError

SAME, DIFFERENT, BETTER, WORSE = 0, 1, 2, 3
VERDICT_NAMES = {SAME: "same", DIFFERENT: "different", BETTER: "better", WORSE: "worse", None: "n/a"}
CLASSIFICATIONS, STEADY_ITER, STEADY_ITER_VAR, STEADY_STATE_TIME, STEADY_STATE_TIME_VAR, INTERSECTION = range(6)
SLOT_NAMES = ("classifications", "steady iter", "steady iter variation", "steady perf",
              "steady perf variation", "intersection")
# Category order of warmup_stats' multinomial comparison.
CATEGORIES = ("warmup", "slowdown", "flat", "no steady state")
# Steady perf CIs (seconds) closer than this are "unchanged" (warmup_stats' value).
CI_NARROW_TOLERANCE = 0.0001


class DiffError(AnalysisError):
    """The two summaries cannot be compared (one clear reason)."""


def intervals_differ(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """True when two closed intervals do not overlap."""
    x1, y1 = sorted(a)
    x2, y2 = sorted(b)
    return y1 < x2 or y2 < x1


def mean_cis_differ(mean1: float, ci1: float, mean2: float, ci2: float) -> bool:
    if ci1 < 0 or ci2 < 0:
        raise DiffError(f"negative confidence interval ({ci1}, {ci2}) in a summary")
    return intervals_differ((mean1 - ci1, mean1 + ci1), (mean2 - ci2, mean2 + ci2))


def interval_narrowing(before: tuple[float, float], after: tuple[float, float]) -> int:
    """BETTER if the after interval is narrower, WORSE if wider, SAME if equal."""
    w1 = abs(before[1] - before[0])
    w2 = abs(after[1] - after[0])
    if w1 == 0 and w2 == 0:
        return SAME
    if w1 == 0:
        return WORSE
    ratio = w2 / w1
    if ratio == 1.0:
        return SAME
    return BETTER if ratio < 1.0 else WORSE


def ci_narrowing(ci_before: float, ci_after: float) -> int:
    if abs(ci_before - ci_after) < CI_NARROW_TOLERANCE:
        return SAME
    return BETTER if ci_after < ci_before else WORSE


def _counts(pair: dict) -> dict[str, int]:
    d = pair.get("detailed_classification") or {}
    return {c: int(d.get(c, 0) or 0) for c in CATEGORIES}


def _all_flat(c: dict[str, int]) -> bool:
    return c["warmup"] == 0 and c["slowdown"] == 0 and c["no steady state"] == 0


def _any_nss(c: dict[str, int]) -> bool:
    return c["no steady state"] > 0


def classification_verdict(before: dict[str, int], after: dict[str, int],
                           alpha: float = DIFF_ALPHA) -> int:
    ci_before = sison_glaz([before[c] for c in CATEGORIES], alpha)
    ci_after = sison_glaz([after[c] for c in CATEGORIES], alpha)
    verdict = SAME
    for i in range(len(CATEGORIES)):
        if intervals_differ(ci_before[i], ci_after[i]):
            if after["warmup"] + after["flat"] > before["warmup"] + before["flat"]:
                verdict = BETTER
            elif (after["no steady state"] + after["slowdown"]
                  > before["no steady state"] + before["slowdown"]):
                verdict = WORSE
            else:
                verdict = DIFFERENT
            break
    # Warmup and flat are both good: a change only between them is no change.
    if (verdict != SAME and before["slowdown"] == after["slowdown"]
            and before["no steady state"] == after["no steady state"]):
        verdict = SAME
    # Losing every no-steady-state execution is an improvement even if the
    # intervals overlap (bad inconsistent -> good inconsistent).
    if verdict == SAME and before["no steady state"] > 0 and after["no steady state"] == 0:
        verdict = BETTER
    return verdict


def _perf_verdicts(before: dict, after: dict) -> tuple[int, int | None]:
    """(steady perf, steady perf variation) from median ± CI."""
    if before.get("steady_state_time") is None or before.get("steady_state_time_ci") is None \
            or after.get("steady_state_time") is None or after.get("steady_state_time_ci") is None:
        return DIFFERENT, None
    m1, c1 = float(before["steady_state_time"]), float(before["steady_state_time_ci"])
    m2, c2 = float(after["steady_state_time"]), float(after["steady_state_time_ci"])
    if mean_cis_differ(m1, c1, m2, c2):
        return (BETTER if m2 < m1 else WORSE), None
    return SAME, ci_narrowing(c1, c2)


def _iqr(pair: dict) -> tuple[float, float]:
    iqr = pair.get("steady_state_iteration_iqr")
    if not (isinstance(iqr, (list, tuple)) and len(iqr) == 2):
        raise DiffError(f"missing steady_state_iteration_iqr (got {iqr!r})")
    return float(iqr[0]), float(iqr[1])


def pair_verdicts(before: dict, after: dict, alpha: float = DIFF_ALPHA) -> list[int | None]:
    """The six-slot verdict vector for one (VM, benchmark)."""
    slots: list[int | None] = [None] * 6
    cb, ca = _counts(before), _counts(after)
    slots[CLASSIFICATIONS] = classification_verdict(cb, ca, alpha)

    if _all_flat(cb) and _all_flat(ca):
        slots[STEADY_ITER] = SAME
        slots[STEADY_STATE_TIME], slots[STEADY_STATE_TIME_VAR] = _perf_verdicts(before, after)
    elif _all_flat(cb) or _all_flat(ca):
        if _any_nss(cb) or _any_nss(ca):
            slots[STEADY_ITER] = DIFFERENT
            slots[STEADY_STATE_TIME] = DIFFERENT
        else:
            # An all-flat side reaches its steady state at iteration 1.
            other = after if _all_flat(cb) else before
            if intervals_differ((1.0, 1.0), _iqr(other)):
                slots[STEADY_ITER] = BETTER if _all_flat(ca) else WORSE
            else:
                slots[STEADY_ITER] = SAME
            slots[STEADY_STATE_TIME], slots[STEADY_STATE_TIME_VAR] = _perf_verdicts(before, after)
    elif _any_nss(cb) or _any_nss(ca):
        pass  # no steady numbers on at least one side
    else:
        iqr_before = _iqr(before)
        after_iters = after.get("steady_state_iteration_list") or []
        if after_iters and len(set(after_iters)) == 1:
            # Identical steady iterations: use the exact point, not a percentile
            # range that rounding can make inverted.
            point = (float(after_iters[0]), float(after_iters[0]))
            differ, variation = intervals_differ(iqr_before, point), SAME
        else:
            iqr_after = _iqr(after)
            differ, variation = intervals_differ(iqr_before, iqr_after), interval_narrowing(iqr_before, iqr_after)
        if differ:
            slots[STEADY_ITER] = (BETTER if float(after["steady_state_iteration"])
                                  < float(before["steady_state_iteration"]) else WORSE)
        else:
            slots[STEADY_ITER] = SAME
        slots[STEADY_ITER_VAR] = variation
        perf, _ = _perf_verdicts(before, after)
        slots[STEADY_STATE_TIME] = perf
        if perf != DIFFERENT:
            slots[STEADY_STATE_TIME_VAR] = ci_narrowing(float(before["steady_state_time_ci"]),
                                                       float(after["steady_state_time_ci"]))

    seen = set(slots[:INTERSECTION])
    if not seen & {BETTER, WORSE, DIFFERENT}:
        slots[INTERSECTION] = SAME
    elif BETTER in seen and WORSE not in seen:
        slots[INTERSECTION] = BETTER
    elif WORSE in seen and BETTER not in seen:
        slots[INTERSECTION] = WORSE
    else:
        slots[INTERSECTION] = DIFFERENT
    return slots


def _single_machine(summary: dict, label: str) -> tuple[str, dict]:
    machines = summary.get("machines") if isinstance(summary, dict) else None
    if not isinstance(machines, dict) or not machines:
        raise DiffError(f"{label}: not a summary with results (no 'machines')")
    if len(machines) != 1:
        raise DiffError(f"{label}: holds {len(machines)} machines ({', '.join(sorted(machines))}); "
                        "diff compares one machine's results")
    machine = next(iter(machines))
    return machine, machines[machine]


def _rename_vm(vms: dict, old: str, new: str) -> dict:
    if old not in vms:
        raise DiffError(f"VM {old!r} not found (VMs: {', '.join(sorted(vms))})")
    out = {k: v for k, v in vms.items() if k != old}
    out[new] = vms[old]
    return out


def diff_summaries(before: dict, after: dict, *, vms: tuple[str, str] | None = None,
                   classifier: Any = None, alpha: float = DIFF_ALPHA) -> dict:
    """Compare two warmup_stats summaries; `vms=(A, B)` compares VM A before
    with VM B after (both renamed "A vs. B"), like warmup_stats' --vm."""
    m_before, vms_before = _single_machine(before, "before")
    m_after, vms_after = _single_machine(after, "after")
    if m_before != m_after:
        raise DiffError(f"before is from machine {m_before!r} but after from {m_after!r}; "
                        "compare results of the same machine")
    before = copy.deepcopy(before)
    after = copy.deepcopy(after)
    if vms is not None:
        joined = f"{vms[0]} vs. {vms[1]}"
        vms_before = before["machines"][m_before] = _rename_vm(vms_before, vms[0], joined)
        vms_after = after["machines"][m_after] = _rename_vm(vms_after, vms[1], joined)
    result: dict = {"diff": {}, "skipped": [[], []], "before": before, "after": after,
                    "classifier": classifier}
    for vm in sorted(set(vms_before) | set(vms_after)):
        benches_b = vms_before.get(vm, {})
        benches_a = vms_after.get(vm, {})
        for bench in sorted(set(benches_b) | set(benches_a)):
            if bench not in benches_a:
                result["skipped"][0].append(f"{bench}:{vm}")
                continue
            if bench not in benches_b:
                result["skipped"][1].append(f"{bench}:{vm}")
                continue
            try:
                verdicts = pair_verdicts(benches_b[bench], benches_a[bench], alpha)
            except DiffError as exc:
                raise DiffError(f"{bench} on {vm}: {exc}") from None
            result["diff"].setdefault(vm, {})[bench] = verdicts
    return result

