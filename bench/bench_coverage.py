"""Coverage of every interval coldrun reports, on simulated data with known truth (issue 27).

    .venv/bin/python bench/bench_coverage.py [--trials N] [--seed S] [--only steady,pilot,duet,screen,compare]

Prints, per interval, data shape, method and sample size, the share of
intervals holding the true value beside the nominal level; "!" marks
coverage more than 1.5 points under nominal.  Data shapes:

- iid: normal noise;
- ar(1): autocorrelated iterations, phi 0.7 (within an execution);
- heavy: lognormal noise (sigma 1) for screening/duet, Student t(3) for series;
- boots: iid iterations plus a per-execution (per-boot) offset, SD 0.3 x the iteration SD;
- batches (screening): a per-batch offset, SD = the boot SD, on a factor needing a reboot.

The intervals:

- steady: warmup_stats' steady performance, 99% (analysis.bootstrap, resampling iterations within each
  execution's steady segment; 2000 resamples, as its spread, not the C kernel, is what is measured);
- pilot: Pilot's 95% CI of the mean with its subsession size q (analysis.pilot.subsession);
- duet: the ratio's 99% percentile bootstrap over executions' geometric means (analysis.duet.stats) and
  the t interval of their logs (``t_ci``), A/A
  (true ratio 1, so 1 - coverage is the false-positive rate), for the paper's procedure and, at 100
  iterations, with coldrun's --steady-state EDM cut (its relative width beside the paper's);
- compare: ``coldrun-analyze compare``'s ratio B/A of the mean execution mean, A/A (both sides from one
  model: AR(1) iterations, phi 0.7, plus a per-boot offset, normal or skewed (lognormal, sigma 1, scaled
  to the same SD); 200 iterations, all steady), n executions per side: its t interval of the log ratio
  (analysis.comparison.ratio_interval) at 99% and 95%, beside scipy's percentile and BCa bootstraps over
  executions (each side resampled on its own, 2000 resamples) at 99%;
- screen: a 2 x 2 design's effect and treatment mean, 95%, n samples (executions) per treatment: BCa
  (TN 1855) and t (coldrun's default below 100); a whole-plot factor under batch variance: t on batch means
  (coldrun) and the pooled test that ignores batches (what coldrun did before issue 27).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.bootstrap import bootstrap_steady_perf  # noqa: E402
from analysis.comparison import ratio_interval  # noqa: E402
from analysis.duet import stats as duet_stats, steady  # noqa: E402
from analysis.duet.pairs import PairedRuns  # noqa: E402
from analysis.pilot import subsession as ss  # noqa: E402
from analysis.screen import effects, split_plot, t_intervals  # noqa: E402
from analysis.screen.bca import acceleration, interval, resample_means  # noqa: E402

SHORTFALL = 0.015   # more than this under nominal is marked


def series(shape: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """One execution's iterations, mean 0, unit-ish scale."""
    if shape == "ar(1)":
        noise = rng.standard_normal(n + 100)
        x = np.empty_like(noise)
        x[0] = noise[0]
        for i in range(1, x.shape[0]):
            x[i] = 0.7 * x[i - 1] + noise[i]
        return x[100:]
    if shape == "heavy":
        return rng.standard_t(3, n)
    return rng.standard_normal(n)


def row(name: str, shape: str, method: str, n: int, hits: int, trials: int, nominal: float, extra: str = "") -> None:
    cover = hits / trials
    mark = "!" if cover < nominal - SHORTFALL else " "
    print(f"{name:7s} {shape:8s} {method:26s} {n:5d} {cover:7.3f}{mark} {nominal:7.2f}  {extra}", flush=True)


def steady_perf(trials: int, rng: np.random.Generator) -> None:
    for shape in ("iid", "ar(1)", "heavy", "boots"):
        for executions in (5, 30):
            hits = 0
            for t in range(trials):
                execs = []
                for _ in range(executions):
                    x = 10.0 + 0.1 * series("iid" if shape == "boots" else shape, rng, 200)
                    if shape == "boots":
                        x = x + 0.03 * rng.standard_normal()
                    execs.append([x])
                found = bootstrap_steady_perf(execs, resamples=2000, seed=t)
                hits += abs(found.median - 10.0) <= found.ci
            row("steady", shape, "warmup_stats bootstrap", executions, hits, trials, 0.99, "executions x 200 iterations")


def pilot_mean(trials: int, rng: np.random.Generator) -> None:
    for shape in ("iid", "ar(1)", "heavy"):          # one execution's stable iterations
        for n in (200, 1000):
            hits = 0
            for _ in range(trials):
                x = series(shape, rng, n)
                q = ss.optimal_subsession_size(x)
                hits += q > 0 and abs(ss.sample_mean(x)) <= ss.ci_width(x, q) / 2
            row("pilot", shape, "subsession q (ac 0.1)", n, hits, trials, 0.95, "iterations of one execution")
    for executions in (3, 5, 10, 30):                # a key: Pilot's CI of its executions' means
        hits = 0
        for _ in range(trials):
            means = np.array([float(np.mean(series("ar(1)", rng, 200))) + 0.3 * rng.standard_normal()
                              for _ in range(executions)])
            q = max(ss.optimal_subsession_size(means), 1)      # as stopping.decide_key: no q -> 1
            hits += abs(ss.sample_mean(means)) <= ss.ci_width(means, q) / 2
        row("pilot", "boots", "key: CI of execution means", executions, hits, trials, 0.95,
            "executions (ar(1) iterations + a boot offset)")


def duet_ratio(trials: int, rng: np.random.Generator, cut_trials: int) -> None:
    def runs(shape: str, executions: int, iterations: int) -> PairedRuns:
        xs, ys = [], []
        for _ in range(executions):
            common = 0.05 * series("iid", rng, iterations)          # shared interference: cancels in x / y
            sides = []
            for _side in range(2):
                if shape == "heavy":
                    own = 0.05 * rng.lognormal(0.0, 1.0, iterations)
                else:
                    own = 0.02 * series("ar(1)" if shape == "ar(1)" else "iid", rng, iterations)
                boot = 0.03 * rng.standard_normal() if shape == "boots" else 0.0
                sides.append(np.exp(common + own + boot))
            xs.append(sides[0])
            ys.append(sides[1])
        return PairedRuns(tuple(xs), tuple(ys))

    for shape in ("iid", "ar(1)", "heavy", "boots"):
        for executions in (3, 5, 10, 20, 30):
            hits = t_hits = 0
            for t in range(trials):
                gms = duet_stats.all_gms(runs(shape, executions, 100))     # both sides alike: the true ratio is 1
                ci = duet_stats.ratio_ci(gms, confidence=0.99, resamples=2000, rng=np.random.default_rng(t))
                hits += ci.low <= 1.0 <= ci.high
                t_ci = duet_stats.log_t_ci(gms, confidence=0.99)
                t_hits += t_ci.low <= 1.0 <= t_ci.high
            row("duet", shape, "paper: percentile bootstrap", executions, hits, trials, 0.99,
                f"A/A false positives {1 - hits / trials:.3f}")
            row("duet", shape, "t on log gms (t_ci)", executions, t_hits, trials, 0.99,
                f"A/A false positives {1 - t_hits / trials:.3f}")
    for executions in (5, 10):
        hits = {False: 0, True: 0}
        widths = {False: [], True: []}
        kept = []
        for t in range(cut_trials):
            r = runs("iid", executions, 100)
            for cut in (False, True):
                use = steady.steady_state(r)[0] if cut else r
                if cut:
                    kept += [len(x) for x in use.x]
                ci = duet_stats.ratio_ci(duet_stats.all_gms(use), confidence=0.99, resamples=2000,
                                         rng=np.random.default_rng(t))
                hits[cut] += ci.low <= 1.0 <= ci.high
                widths[cut].append(ci.relative_width)
        row("duet", "iid", "paper (every iteration)", executions, hits[False], cut_trials, 0.99,
            f"median relative width {np.median(widths[False]):.4f}")
        row("duet", "iid", "--steady-state EDM cut", executions, hits[True], cut_trials, 0.99,
            f"median relative width {np.median(widths[True]):.4f} (x{np.median(widths[True]) / np.median(widths[False]):.2f}); "
            f"iterations kept: min {min(kept)}, median {int(np.median(kept))} of 100")


def compare_ratio(trials: int, rng: np.random.Generator) -> None:
    from scipy import signal

    iterations, phi, boot_sd = 200, 0.7, 0.03

    def execution_means(shape: str, n: int) -> np.ndarray:
        noise = rng.standard_normal((n, iterations + 100))
        ar = signal.lfilter([1.0], [1.0, -phi], noise, axis=1)[:, 100:]      # AR(1), burn-in dropped
        if shape == "skewed":
            boot = (rng.lognormal(0.0, 1.0, n) - np.exp(0.5)) / np.sqrt((np.e - 1) * np.e)
        else:
            boot = rng.standard_normal(n)
        return 1e-3 * (1.0 + boot_sd * boot + 0.02 * ar.mean(axis=1))       # the mean of each execution

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(b, axis=axis) / np.mean(a, axis=axis)

    for shape in ("boots", "skewed"):
        for n in (3, 5, 10, 30):
            hits = {"t log ratio (compare) 99%": 0, "t log ratio (compare) 95%": 0,
                    "percentile bootstrap 99%": 0, "BCa bootstrap 99%": 0}
            for t in range(trials):
                a, b = execution_means(shape, n), execution_means(shape, n)
                for level in (0.99, 0.95):
                    iv = ratio_interval(a, b, level)
                    hits[f"t log ratio (compare) {level * 100:g}%"] += iv.low <= 1.0 <= iv.high
                for method, name in (("percentile", "percentile bootstrap 99%"), ("BCa", "BCa bootstrap 99%")):
                    low, high = duet_stats.percentile_ci((a, b), ratio, confidence=0.99, resamples=2000,
                                                         rng=np.random.default_rng(t), method=method)
                    hits[name] += low <= 1.0 <= high
            for name, h in hits.items():
                nominal = 0.95 if name.endswith("95%") else 0.99
                row("compare", shape, name, n, h, trials, nominal, f"A/A false positives {1 - h / trials:.3f}")


def screen(trials: int, rng: np.random.Generator) -> None:
    levels = [(0, 0), (0, 1), (1, 0), (1, 1)]
    for shape in ("iid", "heavy"):
        for n in (2, 3, 5, 10, 30, 100):
            hits = {"effect BCa": 0, "effect t": 0, "mean BCa": 0, "mean t": 0}
            truth = float(np.exp(0.5)) if shape == "heavy" else 0.0
            for t in range(trials):
                draw = (lambda: rng.lognormal(0.0, 1.0, n)) if shape == "heavy" else (lambda: rng.standard_normal(n))
                found = [effects.Treatment(lv, draw()) for lv in levels]
                (effect_a, *_), _ = effects.effects(["a", "b"], found)
                means = np.array([x.values.mean() for x in found])
                estimate = float(effect_a.coefficients @ means)
                variance, dof = t_intervals.residual_variance(found)
                t_iv = t_intervals.contrast_test(estimate, effect_a.coefficients, found, variance, dof, 0.95)
                hits["effect t"] += t_iv.low <= 0.0 <= t_iv.high
                draws = [resample_means(x.values, 2000, t, f"s{j}") for j, x in enumerate(found)]
                combined = sum(c * d for c, d in zip(effect_a.coefficients, draws))
                bca = interval(combined, estimate, acceleration([x.values for x in found], effect_a.coefficients), 0.95)
                hits["effect BCa"] += bca.low <= 0.0 <= bca.high
                mean_t = t_intervals.mean_test(found[0], 0.95)
                hits["mean t"] += mean_t.low <= truth <= mean_t.high
                mean_bca = interval(draws[0], float(means[0]), acceleration([found[0].values], [1.0]), 0.95)
                hits["mean BCa"] += mean_bca.low <= truth <= mean_bca.high
            for method, h in hits.items():
                row("screen", "normal" if shape == "iid" else "lognorm", method, n, h, trials, 0.95,
                    "samples per treatment")
    for batch_sd in (0.0, 0.33, 1.0):
        rejects = {"split plot (batch means)": 0, "pooled (batches ignored)": 0}
        for _ in range(trials):
            rows, batches, response = [], [], []
            for b, os_ in enumerate([0, 1, 0, 1]):
                offset = rng.normal(0.0, batch_sd)
                for _rep in range(3):
                    for fp in (0, 1):
                        rows.append((os_, fp))
                        batches.append(f"b{b}")
                        response.append(offset + rng.standard_normal())
            y, b = np.array(response), np.array(batches, dtype=object)
            found = [effects.Treatment(lv, y[[r == lv for r in rows]], b[[r == lv for r in rows]]) for lv in levels]
            (main_os, *_), _ = effects.effects(["os", "fp"], found)
            estimate = float(main_os.coefficients @ np.array([x.values.mean() for x in found]))
            plots = split_plot.whole_plots(["os", "fp"], found, ["os"])
            rejects["split plot (batch means)"] += split_plot.whole_plot_test(
                estimate, main_os.coefficients, found, plots, 0.95).p < 0.05
            dof = sum(x.values.shape[0] - 1 for x in found)
            variance = sum(float(x.values.var(ddof=1)) * (x.values.shape[0] - 1) for x in found) / dof
            rejects["pooled (batches ignored)"] += t_intervals.contrast_test(
                estimate, main_os.coefficients, found, variance, dof, 0.95).p < 0.05
        for method, r in rejects.items():
            row("screen", f"batch{batch_sd:g}", method, 4, trials - r, trials, 0.95,
                f"whole-plot factor, no effect: p < 0.05 in {r / trials:.3f} (4 batches x 3 replicates)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trials", type=int, default=1000, help="simulated data sets per cell (default 1000)")
    p.add_argument("--seed", type=int, default=27)
    p.add_argument("--only", default="steady,pilot,duet,screen,compare")
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"# bench_coverage: {args.trials} trials per cell, seed {args.seed}; '!' = more than "
          f"{SHORTFALL * 100:g} points under nominal")
    print(f"{'what':7s} {'data':8s} {'method':26s} {'n':>5s} {'cover':>7s}  {'nominal':>7s}  notes")
    started = time.monotonic()
    parts = {"steady": lambda: steady_perf(args.trials, rng), "pilot": lambda: pilot_mean(args.trials, rng),
             "duet": lambda: duet_ratio(args.trials, rng, max(50, args.trials // 5)),
             "screen": lambda: screen(args.trials, rng), "compare": lambda: compare_ratio(args.trials, rng)}
    for name in args.only.split(","):
        parts[name]()
    print(f"# {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
