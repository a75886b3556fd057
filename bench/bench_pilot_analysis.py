#!/usr/bin/env python3
"""Speed of ``coldrun-analyze pilot RESULTS`` at paper scale, printed as figures (no pass/fail in tests).

The data set is bench_analysis.py's: 3660 process executions x 2000
iterations (122 benchmarks x 30 executions; a seeded mix of flat, warm-up,
slowdown and no-steady-state series with noise, spikes and timer
quantisation). It is written once as a Krun results file (plain JSON) and
run end to end through the command, in this process: load and validate
(analysis.inputs), per execution EDM + dominant segment + Pilot's q, CI and
required samples, per key the CI across executions, the JSON report. Then
the text and HTML reports from the same file, for their render cost.

Printed: wall and CPU time (this process and its workers), peak RSS, how
many executions had a stable segment, and the per-execution CPU cost.
Target (issue 12): <= 60 s wall for the JSON report.

Usage: python bench/bench_pilot_analysis.py [--jobs N] [--seed S] [--executions N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_analysis import ITERATIONS, cpu_seconds, make_dataset, peak_rss_mb  # noqa: E402

from analysis import cli  # noqa: E402
from analysis.pipeline import default_jobs  # noqa: E402

TARGET_S = 60.0


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed_run(argv: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s of all processes, CPU s of this process) of one in-process command."""
    err = io.StringIO()
    c0, o0, t0 = cpu_seconds(), own_cpu(), time.perf_counter()
    with contextlib.redirect_stderr(err):
        code = cli.main(argv)
    t1, c1, o1 = time.perf_counter(), cpu_seconds(), own_cpu()
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} exited {code}: {err.getvalue()}")
    return t1 - t0, c1 - c0, o1 - o0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=default_jobs())
    ap.add_argument("--seed", type=int, default=2017)
    ap.add_argument("--executions", type=int, default=3660)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {args.jobs} worker(s)")
    t0 = time.perf_counter()
    data = make_dataset(args.seed, args.executions)
    n = sum(len(v) for v in data["wallclock_times"].values())
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "paper.json"
        results.write_text(json.dumps(data))
        del data
        print(f"paper scale: {n} process executions x {ITERATIONS} iterations, written as "
              f"{results.stat().st_size / 1e6:.0f} MB of Krun JSON in {time.perf_counter() - t0:.1f} s (not counted)")
        report = Path(tmp) / "pilot.json"
        wall, cpu, own = timed_run(["pilot", str(results), "--jobs", str(args.jobs), "--json", "-o", str(report)])
        doc = json.loads(report.read_text())
        rows = [r for k in doc["results"][0]["keys"] for r in k["executions"]]
        stable = sum(r["stable_segment"] is not None for r in rows)
        met = sum(k["summary"]["target_met"] for k in doc["results"][0]["keys"])
        main_rss, children = peak_rss_mb()
        print("  report                           wall s   CPU s (all processes)")
        # The main process reads, checks and writes (serially); the workers analyse in parallel.
        idle = own + (cpu - own) / args.jobs
        print(f"  pilot --json (end to end):       {wall:6.1f}   {cpu:6.1f}   (target <= {TARGET_S:.0f} s wall)")
        print(f"    main process {own:.1f} s CPU (read, check, write), workers {cpu - own:.1f} s: "
              f"~{idle:.1f} s wall on {args.jobs} idle cores")
        print(f"  per execution: {1000 * cpu / n:.1f} ms CPU")
        for fmt in ("text", "html"):
            w, c, _ = timed_run(["pilot", str(results), "--jobs", str(args.jobs), "--format", fmt,
                                 "-o", str(Path(tmp) / f"pilot.{fmt}")])
            print(f"  pilot --format {fmt}:{' ' * (18 - len(fmt))}{w:6.1f}   {c:6.1f}")
        print(f"  peak RSS: main process {main_rss:.0f} MB, largest worker {children:.0f} MB")
        print(f"  {stable} of {n} executions have a stable segment (Pilot's dominant segment); "
              f"{met} of {len(doc['results'][0]['keys'])} keys meet the target CI")
        print(f"  load average at the end: {os.getloadavg()[0]:.2f} (other work on the machine inflates wall time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
