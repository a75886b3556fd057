"""Per-iteration cost of each runner's loop with and without the duet barrier,
as multiples of the C clock floor, side by side in one run.

For an empty ``run_iter`` two figures per runner, each the median over
ITERATIONS in-process iterations (first tenth skipped), median over RUNS
processes:

- timed: what the runner reports (``wallclock_times``): the measurement's
  own overhead inside the timed region;
- loop: the period of the loop (``iteration_start_ns[i+1] - [i]``): the whole
  per-iteration cost, the barrier handoff included when there is one.

"solo" runs without a barrier; "duet" runs against a partner that just waits
(the C runner on an empty benchmark, through the same barrier).  Ruby is
shown with its compiled extension and, as before this change, through Fiddle.

    [COLDRUN_DUET_SPIN_US=0] .venv/bin/python bench/bench_barrier.py [--runs 3] [--iterations 20000]

COLDRUN_DUET_SPIN_US is passed to both sides of each pair (spin before sleeping); unset, it is
coldrun's default for [duet] spin_us.  As root every process the bench starts runs SCHED_FIFO
(COLDRUN_BENCH_NORMAL_PRIORITY=1 turns that off), so other load on a shared machine cannot
preempt a side in the middle of a handoff; the figures are then the runners' own.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_lang_overhead import TOOLS, benchmark_path, c_floor_ns, parse_args, runner_document
from iteration_runners import languages, runner_command
from iteration_runners.protocol import parse_document
from libkruntime import _kruntime
from supervisor.kinds.duet.table import DEFAULT_SPIN_US

BARRIER = f"/coldrun-bench-duet-{os.getpid()}"
# (row label, runner, drop this env var): Ruby without its extension is the Fiddle path.
ROWS = [("c", "c", None), ("python", "python", None), ("pypy", "pypy", None), ("lua", "lua", None),
        ("javascript", "javascript", None), ("java", "java", None), ("ruby (ext)", "ruby", None),
        ("ruby (Fiddle)", "ruby", languages.ENV_RUBY_EXT), ("php", "php", None)]


def empty_c_benchmark(work: Path) -> str:
    (work / "empty.c").write_text("void run_iter(int n) { (void)n; }\n")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(work / "empty.so"), str(work / "empty.c")],
                   check=True)
    return str(work / "empty.so")


def bench_for(runner: str, work: Path, c_bench: str) -> str:
    if runner == "c":
        return c_bench
    if runner == "python":
        (work / "empty_cpython.py").write_text("def run_iter(n):\n    pass\n")
        return str(work / "empty_cpython.py")
    return benchmark_path(runner, work)


def launch(runner: str, bench: str, iterations: int, env: dict[str, str], drop: str | None) -> bytes:
    """The runner's document; a runner that fails ends the bench with its stderr."""
    argv, run_env = runner_command(runner, sys.executable if runner == "python" else "", [], bench,
                                   iterations, 0, False)
    run_env.update(env)
    if drop:
        run_env.pop(drop)
    return runner_document(runner, argv, run_env)


SPIN_US = os.environ.get("COLDRUN_DUET_SPIN_US", str(DEFAULT_SPIN_US))
BENCH_PRIORITY = 10   # SCHED_FIFO, inherited by every runner the bench starts


def one_run(runner: str, bench: str, c_bench: str, iterations: int, drop: str | None,
            duet: bool) -> tuple[float, float]:
    """(median timed ns, median loop period ns) of one process."""
    if not duet:
        document = launch(runner, bench, iterations, {}, drop)
    else:
        _kruntime.krun_duet_create(BARRIER)
        try:
            env = {"COLDRUN_DUET_BARRIER": BARRIER, "COLDRUN_DUET_SPIN_US": SPIN_US}
            with ThreadPoolExecutor(2) as pool:
                partner = pool.submit(launch, "c", c_bench, iterations, env, None)
                document = launch(runner, bench, iterations, env, drop)
                partner.result()     # the C partner's failure ends the bench too
        finally:
            _kruntime.krun_duet_remove(BARRIER)
    doc = parse_document(document, iterations=iterations, duet=duet)
    skip = iterations // 10
    starts = doc["iteration_start_ns"][skip:]
    timed = statistics.median(doc["wallclock_times"][skip:]) * 1e9
    loop = statistics.median(b - a for a, b in zip(starts, starts[1:]))
    return timed, loop


def figures(runner: str, bench: str, c_bench: str, args: argparse.Namespace, drop: str | None,
            duet: bool) -> tuple[float, float]:
    runs = [one_run(runner, bench, c_bench, args.iterations, drop, duet) for _ in range(args.runs)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> int:
    args = parse_args(__doc__)
    realtime = os.geteuid() == 0 and not os.environ.get("COLDRUN_BENCH_NORMAL_PRIORITY")
    if realtime:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(BENCH_PRIORITY))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        floor = c_floor_ns(work, args.iterations, args.runs)
        c_bench = empty_c_benchmark(work)
        print(f"C clock floor: {floor:.0f} ns (bare clock_gettime pair); figures: ns (x floor); "
              f"duet spin: {SPIN_US} us; {'SCHED_FIFO' if realtime else 'normal priority'}")
        head = ("runner", "solo timed", "duet timed", "solo loop", "duet loop")
        print(f"{head[0]:<14}" + "".join(f"{h:>18}" for h in head[1:]))
        for label, runner, drop in ROWS:
            tool = TOOLS.get(runner)
            if tool and shutil.which(tool) is None:
                print(f"{label:<14} skipped: {tool} not installed")
                continue
            bench = bench_for(runner, work, c_bench)
            solo = figures(runner, bench, c_bench, args, drop, duet=False)
            duet = figures(runner, bench, c_bench, args, drop, duet=True)
            cells = [solo[0], duet[0], solo[1], duet[1]]
            print(f"{label:<14}" + "".join(f"{f'{ns:.0f} ({ns / floor:.1f}x)':>18}" for ns in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
