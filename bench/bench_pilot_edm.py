#!/usr/bin/env python3
"""Speed of Pilot's stable-phase detection (EDM changepoints), printed as figures.

Times ``analysis.pilot.edm.changepoints`` with Pilot's parameters (min_size
30, percent 0.25, linear penalty) per series of 500, 2000, 5000 and 10,000
iterations:

- ``fast``: the O(n^2) path coldrun uses;
- ``reference``: EDM_percent as written (O(n^2 log n), order-statistic trees
  rebuilt for every prefix, fresh medians per candidate), run in C in this
  process. It stands in for Pilot's library, which cannot be built here (no
  network for its sources and Boost); it is the same algorithm, but its
  Fenwick trees are cheaper than the std::multisets Pilot uses.
- ``Pilot (quoted)``: libpilot's own times on this machine, as the issue
  quotes them (42 ms at 500, 2.1 s at 2000, 16 s at 5000). They are not
  measured by this script.

fast and reference run interleaved in one process on the same series
(several repetitions, medians), and must agree. The reference runs at 5000
only when its estimated time stays under 30 s. Times are CPU time of the
calling thread (robust when other jobs load the machine), per series. The
growth exponent of the fast path is the log-log slope between sizes
(candidates grow as (n - 2*min_size)^2, so the slope reaches 2 from below).
Targets (issue): 2000 iterations in <= 20 ms and >= 100x Pilot's library.

Usage: python bench/bench_pilot_edm.py [--seed S] [--series K]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.pilot import edm  # noqa: E402

PILOT_QUOTED_S = {500: 0.042, 2000: 2.1, 5000: 16.0}
TARGET_2000_S = 0.020
TARGET_RATIO = 100.0
REFERENCE_BUDGET_S = 30.0
REPETITIONS = {500: 15, 2000: 7, 5000: 3, 10000: 3}


def timing_series(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    """In-process iteration times (s): a warm-up, a stable phase, sometimes a
    slowdown, with noise and a 1 us timer tick."""
    i = np.arange(n)
    x = 0.010 + 0.004 * np.exp(-i / rng.uniform(20, 200)) + rng.normal(0, 0.0002, n)
    if kind == 1:
        x[int(0.8 * n):] += 0.001  # a late slowdown
    elif kind == 2:
        x += rng.exponential(0.0003, n)  # skewed noise
    return np.round(x / 1e-6) * 1e-6


def cpu_seconds(call) -> tuple[float, list[int]]:
    t0 = time.thread_time()
    out = call()
    return time.thread_time() - t0, out


def measure(series: list[np.ndarray], algorithms: list[str], reps: int) -> dict[str, float]:
    """Median CPU seconds per series for each algorithm, interleaved run by run."""
    times: dict[str, list[float]] = {a: [] for a in algorithms}
    for _ in range(reps):
        for x in series:
            results = {}
            for a in algorithms:
                dt, results[a] = cpu_seconds(lambda: edm.changepoints(x, algorithm=a))
                times[a].append(dt)
            if len(set(map(tuple, results.values()))) != 1:
                raise SystemExit(f"fast and reference disagree: {results}")
    return {a: statistics.median(v) for a, v in times.items()}


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:10.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20260412)
    ap.add_argument("--series", type=int, default=3, help="series per size (default 3)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)

    print(__doc__.split("\n\n")[0])
    print(f"CPU time per series, median over {args.series} series x repetitions; min_size 30, percent 0.25, degree 1\n")
    print(f"{'n':>6} {'fast ms':>10} {'reference ms':>13} {'ref/fast':>9} {'Pilot ms (quoted)':>18} {'Pilot/fast':>11}")
    fast_s: dict[int, float] = {}
    rows = []
    for n in (500, 2000, 5000, 10000):
        series = [timing_series(rng, n, k % 3) for k in range(args.series)]
        algorithms = ["fast"]
        if n <= 5000:
            # One reference run first: include it only within the time budget.
            one, _ = cpu_seconds(lambda: edm.changepoints(series[0], algorithm="reference"))
            if n < 5000 or one * len(series) * REPETITIONS[n] < REFERENCE_BUDGET_S:
                algorithms.append("reference")
        t = measure(series, algorithms, REPETITIONS[n])
        fast_s[n] = t["fast"]
        ref = t.get("reference")
        quoted = PILOT_QUOTED_S.get(n)
        rows.append((n, t["fast"], ref, quoted))
        ref_ratio = f"{ref / t['fast']:.1f}x" if ref else "-"
        pilot_ratio = f"{quoted / t['fast']:.0f}x" if quoted else "-"
        print(f"{n:>6} {ms(t['fast'])} {ms(ref):>13} {ref_ratio:>9} {ms(quoted):>18} {pilot_ratio:>11}")

    print("\ngrowth of the fast path (log-log slope of time against n):")
    sizes = sorted(fast_s)
    for a, b in zip(sizes, sizes[1:]):
        print(f"  {a:>5} -> {b:>5}: {math.log(fast_s[b] / fast_s[a]) / math.log(b / a):.2f}")
    print(f"  {sizes[0]:>5} -> {sizes[-1]:>5}: {math.log(fast_s[sizes[-1]] / fast_s[sizes[0]]) / math.log(sizes[-1] / sizes[0]):.2f}")

    t2000 = fast_s[2000]
    ratio = PILOT_QUOTED_S[2000] / t2000
    print(f"\ntarget 2000 iterations <= {TARGET_2000_S * 1e3:.0f} ms: {t2000 * 1e3:.2f} ms "
          f"({'met' if t2000 <= TARGET_2000_S else 'NOT met'})")
    print(f"target >= {TARGET_RATIO:.0f}x Pilot's library at 2000 (against its quoted 2.1 s): {ratio:.0f}x "
          f"({'met' if ratio >= TARGET_RATIO else 'NOT met'}); against the in-process reference: "
          f"{rows[1][2] / t2000:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
