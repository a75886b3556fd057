#!/usr/bin/env python3
"""Speed of coldrun's analysis, printed as figures (no pass/fail timing in tests).

1. Changepoints: time per 2000-iteration series of ``cpt_meanvar`` (R's
   cpt.meanvar PELT exactly), on R's own golden series, raw generated ones
   (spikes left in, so PELT prunes more) and generated ones with their
   outliers removed (what annotate really passes to R's call), side by side
   with (a) R's PELT loop run literally in C in this process
   (``reference=True``: an exact libm log per candidate) and (b) R itself:
   R's changepoint package cannot be installed here (not in Debian, CRAN
   unreachable), but R is (``apt-get install r-base-core``), so bench/r/
   rebuilds cpt.meanvar's path from its documented behaviour -- sumstat and
   param.est in R, the PELT loop in C through .C, compiled by R CMD SHLIB --
   and times it in Rscript on the same series, checking that R's cpts equal
   ours. Without R, the figure R's notes quote (13.6 ms per 2000-point
   series, shared/reference/warmup_stats.md) is printed instead.
2. Paper scale: 3660 process executions x 2000 iterations (122 benchmarks x 30
   executions; seeded mix of flat, warm-up, slowdown and no-steady-state
   series with noise, spikes and timer quantisation) through annotate +
   summary with 100,000-resample bootstraps, with the wall time of each stage
   and the peak RSS of this process and its workers. Targets: <= 30 s, <= 2 GB.
3. Long executions (issue 26 item 20: one execution of 10^6 iterations): the
   changepoint search on one series of 10^4, 10^5 and 10^6 iterations of
   several shapes, with how many candidate-steps it evaluated (of n^2/2, what
   a search without leaving blocks out evaluates), side by side with R's loop
   in C where that takes under a minute (same results checked), and with
   ``--compare-so``'s build up to --compare-up-to iterations.

Timings are CPU time of the calling thread (robust when other work loads the
machine) and wall time. ``--pelt-so PATH`` runs everything with another build
of the ``analysis._pelt`` extension (e.g. the previous version, built from its
source with the same compiler flags), and ``--compare-so PATH`` times the
changepoints of both builds side by side in one run, checking that they agree.

Usage: python bench/bench_analysis.py [--jobs N] [--seed S] [--executions N]
                                      [--skip-paper-scale] [--skip-long] [--long-sizes N,N,...]
                                      [--pelt-so PATH] [--compare-so PATH] [--compare-up-to N]
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import math
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def load_pelt_build(path: str):
    """Another build of the analysis._pelt extension, as a module object."""
    loader = importlib.machinery.ExtensionFileLoader("_pelt", path)
    spec = importlib.util.spec_from_file_location("_pelt", path, loader=loader)
    if spec is None:
        raise SystemExit(f"{path}: not a loadable extension module")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _early_pelt_so() -> str | None:
    """--pelt-so must take effect before analysis.* imports the extension."""
    for i, arg in enumerate(sys.argv):
        if arg == "--pelt-so" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith("--pelt-so="):
            return arg.split("=", 1)[1]
    return None


if _early_pelt_so():
    import analysis  # noqa: E402

    analysis._pelt = sys.modules["analysis._pelt"] = load_pelt_build(_early_pelt_so())

from analysis import _pelt  # noqa: E402
from analysis.changepoints import penalty_for  # noqa: E402
from analysis.outliers import default_window, find_outliers  # noqa: E402
from analysis.pipeline import annotate, default_jobs  # noqa: E402
from analysis.summary import summarise  # noqa: E402

R_MS_PER_2000 = 13.6  # reference figure (see module docstring)
GOLDEN = Path(__file__).resolve().parents[2] / "shared" / "golden" / "changepoint" / "cpt_meanvar_pelt.json"
if not GOLDEN.exists():
    GOLDEN = Path("/work/shared/golden/changepoint/cpt_meanvar_pelt.json")
ITERATIONS = 2000
PEXECS = 30


def make_series(rng: np.random.Generator, kind: str) -> list[float]:
    """One realistic in-process iteration sequence of the given shape."""
    n = ITERATIONS
    base = float(rng.uniform(0.01, 2.0))
    noise = base * float(rng.choice([1e-4, 5e-4, 2e-3, 1e-2]))
    t = np.full(n, base)
    if kind == "warmup":
        k = int(rng.integers(5, 400))
        t[:k] = base * float(rng.uniform(1.05, 3.0))
        if rng.random() < 0.5:  # a gradual second phase
            k2 = int(rng.integers(k, 800))
            t[k:k2] = base * float(rng.uniform(1.01, 1.05))
    elif kind == "slowdown":
        k = int(rng.integers(5, 1200))
        t[:k] = base * float(rng.uniform(0.7, 0.97))
    elif kind == "nss":
        k = int(rng.integers(1600, 1950))
        t[k:] = base * float(rng.uniform(1.05, 1.3))
    t = t + rng.normal(0, noise, n)
    spikes = rng.choice(n, size=int(rng.integers(0, 12)), replace=False)
    t[spikes] *= rng.uniform(1.5, 4.0, spikes.shape[0])
    if rng.random() < 0.15:  # a coarse timer: values on a 1 us grid
        t = np.round(t, 6)
    return [float(v) for v in np.abs(t)]


def make_dataset(seed: int, executions: int) -> dict:
    rng = np.random.default_rng(seed)
    n_keys = max(1, executions // PEXECS)
    kinds = ["flat", "warmup", "slowdown", "nss"]
    wct = {}
    for k in range(n_keys):
        # Mostly consistent benchmarks, some inconsistent ones.
        main_kind = str(rng.choice(kinds, p=[0.35, 0.4, 0.15, 0.1]))
        mixed = rng.random() < 0.25  # a quarter of benchmarks are inconsistent
        execs = []
        for _ in range(PEXECS):
            kind = str(rng.choice(kinds[:3])) if mixed and rng.random() < 0.2 else main_kind
            execs.append(make_series(rng, kind))
        wct[f"bench{k:03d}:vm{k % 4}:default-lang"] = execs
    return {"wallclock_times": wct, "audit": {"uname": "Linux benchbox 6.1.0 x86_64"}}


def _side_by_side(xs: list[np.ndarray], fns: dict, passes: int = 7) -> dict[str, tuple[float, float]]:
    """Mean over xs of each fn's best (CPU ms, wall ms) per call.

    Every series is timed with all fns back to back, `passes` times, the
    order rotating each pass: a drifting clock speed or a busy neighbour then
    hits all fns alike, and no fn always runs first (which measurably helps
    it on this machine)."""
    names = list(fns)
    total = {name: [0.0, 0.0] for name in names}
    for x in xs:
        best = {name: [math.inf, math.inf] for name in names}
        for r in range(passes):
            for name in names[r % len(names):] + names[:r % len(names)]:
                c0, t0 = time.thread_time(), time.perf_counter()
                fns[name](x)
                c1, t1 = time.thread_time(), time.perf_counter()
                best[name] = [min(best[name][0], c1 - c0), min(best[name][1], t1 - t0)]
        for name in names:
            total[name][0] += best[name][0]
            total[name][1] += best[name][1]
    return {name: (cpu / len(xs) * 1e3, wall / len(xs) * 1e3) for name, (cpu, wall) in total.items()}


R_PASSES = 5  # passes of the R timing loop; R reports its best


def time_in_r(series: list[tuple[str, list]], passes: int = R_PASSES) -> tuple[str, dict] | str:
    """R's own time for cpt.meanvar's call path on this machine: (R's version,
    {label: (CPU ms per series, R's cpts for each series)}), or a reason
    string when R cannot run here.

    R's changepoint package is not installable here (not in Debian, CRAN
    unreachable), but R itself is (Debian's r-base-core). bench/r/ rebuilds
    the package's path from its documented behaviour: sumstat and param.est
    in R, the PELT loop in C loaded through .C, built by R CMD SHLIB with R's
    own compiler flags."""
    if shutil.which("Rscript") is None or shutil.which("R") is None:
        return "R is not installed (apt-get install r-base-core to include it)"
    here = Path(__file__).resolve().parent / "r"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "pelt_meanvar.c"
        shutil.copy(here / "pelt_meanvar.c", src)  # R CMD SHLIB writes its .o beside the source
        build = subprocess.run(["R", "CMD", "SHLIB", "-o", str(Path(tmp) / "pelt.so"), str(src)],
                               capture_output=True, text=True)
        if build.returncode != 0:
            return f"R CMD SHLIB failed: {build.stderr.strip().splitlines()[-1:]}"
        data = bytearray()
        for label, x in series:
            name = label.encode()
            data += struct.pack("<i", len(name)) + name + struct.pack("<i", len(x))
            data += np.asarray(x, dtype="<f8").tobytes()
        (Path(tmp) / "series.bin").write_bytes(bytes(data))
        run = subprocess.run(["Rscript", str(here / "cpt_meanvar.R"), str(Path(tmp) / "pelt.so"),
                              str(Path(tmp) / "series.bin"), str(passes)], capture_output=True, text=True)
        if run.returncode != 0:
            return f"Rscript failed: {run.stderr.strip().splitlines()[-1:]}"
    out: dict[str, tuple[float, list[list[int]]]] = {}
    version = "R"
    for line in run.stdout.splitlines():
        kind, label, *values = line.split("\t")
        if kind == "version":
            version = label
        elif kind == "time":
            out[label] = (float(values[0]), [])
        elif kind == "cpts":
            out[label][1].append([int(v) for v in values[1:]])
    return version, out


def bench_changepoints(rng: np.random.Generator, compare_so: str | None) -> None:
    series: list[tuple[str, list]] = []
    if GOLDEN.exists():
        cases = json.loads(GOLDEN.read_text())["cases"]
        series += [("R golden", c["x"]) for c in cases if len(c["x"]) == ITERATIONS]
    series += [("generated", make_series(rng, k)) for k in ("flat", "warmup", "slowdown", "nss") * 10]
    # What annotate really feeds R's call: paper-scale executions with their
    # outliers deleted (homogeneous once the spikes are gone, so PELT prunes
    # even less and these cost more than the raw series).
    sample = make_dataset(int(rng.integers(1 << 31)), 2 * PEXECS)["wallclock_times"]
    for execs in sample.values():
        for e in execs:
            drop = set(find_outliers(e, default_window(len(e))))
            series.append(("annotate", [v for i, v in enumerate(e) if i not in drop]))
    other = load_pelt_build(compare_so) if compare_so else None
    in_r = time_in_r(series)
    print(f"changepoints: cpt_meanvar on {ITERATIONS}-iteration series (per series, best of 7 interleaved "
          f"runs; CPU = this thread; target: >= 10x R)")
    if isinstance(in_r, str):
        print(f"  R's own call path not timed: {in_r}")
    else:
        r_version, in_r = in_r
        print(f"  R: {r_version} running cpt.meanvar's path (bench/r: sumstat and param.est in R, PELT loop in C"
              f" via .C), CPU of the R process, best of {R_PASSES} passes")
    for label in ("R golden", "generated", "annotate"):
        xs = [np.asarray(x, dtype=np.float64) for lab, x in series if lab == label]
        if not xs:
            continue
        # Both through the same C entry point (cpts, means and variances), so
        # the ratio is the PELT loops' alone.
        def fast(x, build=_pelt):
            return build.cpt_meanvar(x, penalty_for(len(x)), 2)

        def loop(x):
            return _pelt.cpt_meanvar(x, penalty_for(len(x)), 2, reference=True)

        ours = [fast(x) for x in xs]
        times = _side_by_side(xs, {"coldrun": fast, "R loop": loop})
        agree = ours == [loop(x) for x in xs]
        cpu_ms, loop_ms = times["coldrun"][0], times["R loop"][0]
        if isinstance(in_r, str):
            r_part = f"R quoted {R_MS_PER_2000:.1f} ms -> x{R_MS_PER_2000 / cpu_ms:.1f}"
        else:
            r_ms, r_cpts = in_r[label]
            r_part = (f"R {r_ms:6.2f} ms -> x{r_ms / cpu_ms:.1f} "
                      f"(R's cpts identical: {r_cpts == [cpts for cpts, _, _ in ours]})")
        print(f"  {label:10s} {len(xs):3d} series: coldrun {cpu_ms:5.2f} ms | R's loop in C {loop_ms:6.2f} ms"
              f" -> x{loop_ms / cpu_ms:.1f} | {r_part} | same cpts: {agree}")
        if other is not None:
            both = _side_by_side(xs, {"this": fast, "that": lambda x: fast(x, other)})
            this_best, that_best = both["this"], both["that"]
            agree = ours == [fast(x, other) for x in xs]
            print(f"  {'':10s} side by side, C call only: this build {this_best[0]:5.2f} ms CPU "
                  f"{this_best[1]:5.2f} wall | {Path(compare_so).name} {that_best[0]:5.2f} ms CPU "
                  f"{that_best[1]:5.2f} wall | ratio x{that_best[0] / this_best[0]:.2f} (CPU) "
                  f"| identical results: {agree}")


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished workers."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def peak_rss_mb() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def bench_paper_scale(seed: int, executions: int, jobs: int) -> None:
    t0 = time.perf_counter()
    data = make_dataset(seed, executions)
    n = sum(len(v) for v in data["wallclock_times"].values())
    t1 = time.perf_counter()
    print(f"paper scale: {n} process executions x {ITERATIONS} iterations, {len(data['wallclock_times'])} benchmarks, "
          f"{jobs} worker(s); generated in {t1 - t0:.1f} s (not counted)")
    c1 = cpu_seconds()
    annotated = annotate(data, jobs=jobs, progress=True, warn=lambda m: None)
    t2 = time.perf_counter()
    c2 = cpu_seconds()
    summary = summarise({"benchbox": annotated}, resamples=100000, seed=seed, jobs=jobs, progress=True,
                        warn=lambda m: None)
    t3 = time.perf_counter()
    c3 = cpu_seconds()
    classes: dict[str, int] = {}
    for benches in summary["machines"]["benchbox"].values():
        for b in benches.values():
            classes[b["classification"]] = classes.get(b["classification"], 0) + 1
    own, children = peak_rss_mb()
    busy = os.getloadavg()[0]
    print("  stage                                                wall s   CPU s (all processes)")
    print(f"  annotate (outliers + changepoints + classification): {t2 - t1:6.1f}   {c2 - c1:6.1f}")
    print(f"  summary (100,000-resample bootstraps):                {t3 - t2:6.1f}   {c3 - c2:6.1f}")
    print(f"  total:                                                {t3 - t1:6.1f}   {c3 - c1:6.1f}"
          f"   (target <= 30 s wall; CPU / {jobs} = {(c3 - c1) / jobs:.1f} s is the wall time on idle cores)")
    print(f"  load average at the end: {busy:.2f} (other work on the machine inflates wall time)")
    print(f"  peak RSS: main process {own:.0f} MB, largest worker {children:.0f} MB   (target <= 2048 MB)")
    print(f"  benchmark classes: {dict(sorted(classes.items()))}")


LONG_SHAPES = ("steady", "steady, noise 1e-5", "warm-up", "two levels", "level changes", "quantised")


def long_series(shape: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = 0.01 * (1 + (1e-5 if "1e-5" in shape else 1e-3) * rng.standard_normal(n))
    if shape == "warm-up":
        x[: n // 10] *= np.linspace(1.5, 1.0, n // 10)
    elif shape == "two levels":
        x *= 1 + 0.004 * rng.integers(0, 2, n)
    elif shape == "level changes":   # a shift every 1000 iterations
        x *= np.repeat(1 + 0.01 * rng.integers(0, 5, n // 1000 + 1), 1000)[:n]
    elif shape == "quantised":
        x = np.round(x / 1e-5) * 1e-5
    return np.ascontiguousarray(x)


def bench_long(seed: int, sizes: list[int], compare_so: str | None, compare_up_to: int) -> None:
    other = load_pelt_build(compare_so) if compare_so else None
    print("long executions: the changepoint search on one series (CPU s of this thread; evaluated: candidate-steps "
          "evaluated, of n^2/2)")
    for n in sizes:
        for shape in LONG_SHAPES:
            x = long_series(shape, n, seed)
            pen = penalty_for(n)
            counts = np.zeros(4, dtype=np.int64)
            c0 = time.thread_time()
            ours = _pelt.cpt_meanvar(x, pen, 2, counts=counts)
            cpu = time.thread_time() - c0
            line = (f"  {n:>9,d} {shape:20s} {cpu:7.2f} s  evaluated {counts[0] / (n * n / 2):7.3%}  "
                    f"exact {counts[1]:>9,d}  cpts {len(ours[0]):4d}")
            if n <= 20_000:
                c0 = time.thread_time()
                same = _pelt.cpt_meanvar(x, pen, 2, reference=True) == ours
                loop = time.thread_time() - c0
                line += f" | R's loop {loop:6.2f} s -> x{loop / cpu:.0f}, same: {same}"
            if other is not None and n <= compare_up_to:
                c0 = time.thread_time()
                same = other.cpt_meanvar(x, pen, 2) == ours
                that = time.thread_time() - c0
                line += f" | {Path(compare_so).name}: {that:7.2f} s -> x{that / cpu:.1f}, same: {same}"
            print(line, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=default_jobs())
    ap.add_argument("--seed", type=int, default=2017)
    ap.add_argument("--executions", type=int, default=3660)
    ap.add_argument("--skip-paper-scale", action="store_true")
    ap.add_argument("--pelt-so", help="run everything with this build of analysis._pelt")
    ap.add_argument("--compare-so", help="time this build of analysis._pelt beside the current one")
    ap.add_argument("--compare-up-to", type=int, default=100_000,
                    help="long executions: time --compare-so's build up to this many iterations")
    ap.add_argument("--skip-long", action="store_true")
    ap.add_argument("--long-sizes", default="10000,100000,1000000")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"analysis._pelt from {getattr(_pelt, '__file__', '?')}")
    bench_changepoints(np.random.default_rng(args.seed), args.compare_so)
    if not args.skip_paper_scale:
        bench_paper_scale(args.seed, args.executions, args.jobs)
    if not args.skip_long:
        bench_long(args.seed, [int(v) for v in args.long_sizes.split(",")], args.compare_so, args.compare_up_to)
    return 0


if __name__ == "__main__":
    sys.exit(main())
