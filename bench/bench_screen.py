#!/usr/bin/env python3
"""A TN 1855-sized screening analysis, timed (issue 14's speed target: <= 30 s).

12 treatments (2 x 2 x 3, Table 3's design) x 5000 samples x 4 metrics, each
interval from 50,000 bootstrap replications (TN 1855's Fig. 10; ``--fixed``,
one batch), through ``analysis.screen.report.analyse`` in this process: per
metric 12 treatment intervals + 4 main effects + 1 interaction, block plots,
ANOVA (statsmodels, 60,000 rows) and material significance (with its coverage study: 1000
subsamples of n = 40, t and 2000-replication BCa intervals). Data: the toy
treatment means of methods.md §3.7 plus seeded lognormal noise, a different
scale per metric.

Printed: wall and CPU time per metric and in all, against the target; the
machine's load average before and after (2 cores shared with other jobs);
and, side by side, one treatment interval (n = 5000, 50,000 resamples) by
``scipy.stats.bootstrap(method='BCa')`` and by ``analysis.screen`` (C
resampler, O(n) jackknife), with the ratio and the two intervals.

Usage: python bench/bench_screen.py [--resamples N] [--no-scipy]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.screen.bca import acceleration, interval, resample_means  # noqa: E402
from analysis.screen.replication import Replication  # noqa: E402
from analysis.screen.report import ScreenOptions, analyse  # noqa: E402
from analysis.screen.table import build  # noqa: E402

TARGET_S = 30.0
TOY_MEANS = [7.40, 7.62, 7.55, 7.43, 7.66, 7.58, 7.45, 7.70, 7.60, 7.49, 7.73, 7.64]
METRICS = {"bash-elapsed": 1.0, "bash-user": 0.9, "bash-sys": 0.05, "perf-samples": 2992.5}
SAMPLES = 5000


def table(metric: str, scale: float, rng: np.random.Generator):
    rows, response, t = [], [], 0
    for os_ in range(2):
        for fp in range(2):
            for prf in range(3):
                noise = rng.lognormal(0.0, 0.5, SAMPLES) * 0.05
                rows += [(os_, fp, prf)] * SAMPLES
                response.append((TOY_MEANS[t] + noise) * scale)
                t += 1
    return build(metric, ["os", "fp", "prf"], rows, np.concatenate(response), metric=metric)


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=50_000)
    parser.add_argument("--no-scipy", action="store_true", help="skip the scipy side-by-side interval")
    args = parser.parse_args()
    rng = np.random.default_rng(1855)
    tables = {m: table(m, s, rng) for m, s in METRICS.items()}
    options = ScreenOptions(replication=Replication(batch=args.resamples, seed=1), adaptive=False)
    print(f"machine: {os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.2f}")
    wall0, cpu0 = time.perf_counter(), cpu()
    for metric, t in tables.items():
        w, c = time.perf_counter(), cpu()
        doc = analyse(t, options)
        print(f"  {metric:13} {time.perf_counter() - w:6.2f} s wall {cpu() - c:6.2f} s CPU  "
              f"({len(doc['treatments'])} treatments, {doc['resamples']} resamples per interval, "
              f"prf=1 effect {doc['main_effects']['prf']['1']['effect']:.4g})")
    wall, used = time.perf_counter() - wall0, cpu() - cpu0
    verdict = "within" if wall <= TARGET_S else "OVER"
    print(f"TN-sized analysis (12 x {SAMPLES} x {len(METRICS)} metrics, {args.resamples} replications): "
          f"{wall:.2f} s wall, {used:.2f} s CPU; target {TARGET_S:.0f} s: {verdict}; "
          f"load average after {os.getloadavg()[0]:.2f}")
    if not args.no_scipy:
        from scipy import stats

        x = tables["bash-user"].response[:SAMPLES]
        w = time.perf_counter()
        res = stats.bootstrap((x,), np.mean, n_resamples=args.resamples, method="BCa", batch=1000,
                              rng=np.random.default_rng(1), vectorized=True)
        scipy_s = time.perf_counter() - w
        w = time.perf_counter()
        mine = interval(resample_means(x, args.resamples, 1, "bench"), float(x.mean()), acceleration([x], [1.0]),
                        0.95)
        mine_s = time.perf_counter() - w
        print(f"one interval, n={SAMPLES}, {args.resamples} resamples: scipy.stats.bootstrap BCa {scipy_s:.2f} s "
              f"[{res.confidence_interval.low:.6f}, {res.confidence_interval.high:.6f}]; analysis.screen "
              f"{mine_s:.3f} s [{mine.low:.6f}, {mine.high:.6f}]; ratio {scipy_s / mine_s:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
