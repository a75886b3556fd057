"""Does ``coldrun-analyze plan`` plan right? Simulated experiments with known T1, T2 (issue 39 item 4).

    .venv/bin/python bench/bench_plan.py [--trials N] [--seed S] [--confidence C]

Model per execution j and steady iteration k: ``y = mu + a_j + e_jk``, ``a_j ~ N(0, T2^2)``, the e_jk
of one execution iid N(0, s^2) or AR(1) with phi 0.5 (marginal SD s; then the variance of a mean of n
iterations is about T1^2/n with T1^2 = s^2 (1 + phi) / (1 - phi)). mu = 1 ms a steady iteration
(c1 = mu), c2 = 120 s an execution's reboot, waits and warm-up; s = 5% and T2 = 1% of mu.

Each trial: a first experiment of 5 executions x 1000 iterations; analysis.plan's estimates (batch means
for T1^2) and K&J allocation for the target; then the planned experiment, n2 executions x n1 iterations
drawn from the same model, and its realised CI half-width, t over the executions' means, as the plan
computes it. The targets are those the TRUE components make need 5, 10, 20 and 50 executions at
n1* (the true plan). Printed per model and target: the true plan, the median planned n2 and n1, the
median realised width / target and how often the target was met (realised <= target), for three T2^2:
K&J's point estimate ("K&J"), the median-unbiased one ``plan`` plans with ("plan"), and the upper end of
T2^2's interval ("upper": what ``plan`` adds for under 10 executions).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.signal import lfilter
from scipy.stats import t as t_dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis import plan  # noqa: E402

MU, S, T2, C2 = 1e-3, 0.05e-3, 0.01e-3, 120.0
FIRST_EXECUTIONS, FIRST_ITERATIONS = 5, 1000
NEEDS = (5, 10, 20, 50)
# A planned experiment bigger than this many iterations is counted as a miss, not simulated.
MAX_DRAWN = 4 * 10**7


def draw(rng: np.random.Generator, n2: int, n1: int, phi: float) -> np.ndarray:
    """n2 executions x n1 iterations of the model."""
    a = rng.normal(0.0, T2, size=(n2, 1))
    u = rng.normal(0.0, S, size=(n2, n1))
    if phi:
        u[:, 1:] *= math.sqrt(1 - phi * phi)   # e_0 stationary, then innovations
        u = lfilter([1.0], [1.0, -phi], u, axis=1)
    return MU + a + u


def realised(rng: np.random.Generator, n2: int, n1: int, phi: float, confidence: float) -> float:
    """The half-width of the planned experiment's CI; drawn in chunks of executions."""
    chunk = max(1, 2 * 10**6 // n1)
    means = np.concatenate([draw(rng, min(chunk, n2 - i), n1, phi).mean(axis=1) for i in range(0, n2, chunk)])
    return float(t_dist.ppf(1 - (1 - confidence) / 2, n2 - 1)) * float(means.std(ddof=1)) / math.sqrt(n2)


def one_trial(rng, phi: float, target: float, confidence: float) -> list[tuple[int, int, float]]:
    """(n2, n1, realised / target) planned for K&J's T2^2, the plan's (median-unbiased) and its upper end."""
    first = draw(rng, FIRST_EXECUTIONS, FIRST_ITERATIONS, phi)
    c = plan.variance_components(first)
    out = []
    upper = plan.t2_upper(c, confidence)
    for t2_sq, trim in ((c.t2_sq if c.t2_sq > 0 else upper, False),
                        (plan.t2_median(c) if c.t2_sq > 0 else upper, True), (upper, True)):
        a = plan.allocate(c.t1_sq, t2_sq, c.mean, C2, target, confidence, trim=trim)
        if a.n2 is None or a.n2 * a.n1 > MAX_DRAWN:
            out.append((a.n2 or 0, a.n1, math.inf))
        else:
            out.append((a.n2, a.n1, realised(rng, a.n2, a.n1, phi, confidence) / target))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trials", type=int, default=1000, help="simulated first experiments per cell (default 1000)")
    p.add_argument("--seed", type=int, default=39)
    p.add_argument("--confidence", type=float, default=0.99)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    print(f"# bench_plan: {args.trials} trials per cell, seed {args.seed}, {args.confidence:g} confidence, "
          f"first experiment {FIRST_EXECUTIONS} x {FIRST_ITERATIONS}; width = CI half-width")
    print(f"{'data':8} {'true n2 x n1':>13} {'target':>9}  {'T2^2':>5} {'n2':>5} {'n1':>5} {'width/target':>12} "
          f"{'met':>5}")
    for name, phi in (("iid", 0.0), ("ar(0.5)", 0.5)):
        t1_sq = S * S * (1 + phi) / (1 - phi)
        n1 = plan.cheapest_iterations(MU, C2, t1_sq, T2 * T2)
        for need in NEEDS:
            target = plan.half_width(t1_sq, T2 * T2, n1, need, args.confidence)
            rows = np.array([one_trial(rng, phi, target, args.confidence) for _ in range(args.trials)])
            print("\n".join(cell_lines(f"{name:8} {f'{need} x {n1}':>13} {target / MU:>8.3%}", rows)))
    print(f"# {time.monotonic() - started:.0f} s")
    return 0


def cell_lines(head: str, rows: np.ndarray) -> list[str]:
    """One line per T2^2 choice: median n2, n1 and realised / target, share of targets met."""
    lines = []
    for which, label in enumerate(("K&J", "plan", "upper")):
        n2s, n1s, ratio = rows[:, which, 0], rows[:, which, 1], rows[:, which, 2]
        lines.append(f"{head}  {label:>5} {np.median(n2s):>5.0f} {np.median(n1s):>5.0f} {np.median(ratio):>12.3f} "
                     f"{np.mean(ratio <= 1):>5.2f}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
