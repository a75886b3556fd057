"""Per-iteration measurement overhead of the iteration runners.

The overhead of a runner is what it reports for an *empty* ``run_iter``: the
time its own measuring adds to every measured in-process iteration (return
from the clock read in krun_measure(0), the call of the benchmark, the way
into the clock read in krun_measure(1)).  It is compared with

- a bare clock-read pair in the same language (Python: two
  ``time.perf_counter_ns()`` calls; C: two ``clock_gettime`` calls), i.e.
  the smallest interval that language can time at all, and
- the C floor: a bare ``clock_gettime(CLOCK_MONOTONIC_RAW)`` pair.

Targets: Python runner <= 1.5x a bare perf_counter_ns pair; C runner <= 2x a
bare clock_gettime pair.  Each figure is the median over ITERATIONS
iterations; each run is repeated RUNS times in fresh processes and the
median of the per-run medians is reported.  The Python runner's
ctypes fallback (used when the extension does not fit the interpreter) is
printed for information.

    .venv/bin/python bench/bench_runner_overhead.py [--runs 5] [--iterations 20000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from iteration_runners import runner_command
from iteration_runners.protocol import parse_document

from bench_lang_overhead import runner_document

C_FLOOR_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    long long *d = calloc(n, sizeof(*d));
    struct timespec a, b;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC_RAW, &a);
        clock_gettime(CLOCK_MONOTONIC_RAW, &b);
        d[i] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    }
    qsort(d, n, sizeof(*d), cmp);
    printf("%lld\n", n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2);
    return 0;
}
"""

PYTHON_PAIR_SOURCE = """
import statistics, sys, time
n = int(sys.argv[1])
d = [0] * n
pc = time.perf_counter_ns
for i in range(n):
    t0 = pc()
    t1 = pc()
    d[i] = t1 - t0
print(statistics.median(d))
"""


def c_floor_ns(workdir: Path, iterations: int) -> float:
    binary = workdir / "clock_pair"
    if not binary.exists():
        src = workdir / "clock_pair.c"
        src.write_text(C_FLOOR_SOURCE)
        subprocess.run([shutil.which("cc") or "cc", "-O2", "-o", str(binary), str(src)], check=True)
    return float(subprocess.run([str(binary), str(iterations)], capture_output=True, text=True,
                                check=True).stdout)


def python_pair_ns(python: str, iterations: int) -> float:
    return float(subprocess.run([python, "-c", PYTHON_PAIR_SOURCE, str(iterations)], capture_output=True,
                                text=True, check=True).stdout)


def runner_overhead_ns(runner: str, executable: str, benchmark: Path, iterations: int,
                       drop_env: tuple[str, ...] = ()) -> float:
    """Median wall clock the runner reports for an empty in-process iteration, in ns."""
    argv, env = runner_command(runner, executable, [], str(benchmark), iterations, 0, False)
    for key in drop_env:
        env.pop(key, None)
    return statistics.median(parse_document(runner_document(runner, argv, env))["wallclock_times"]) * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--python", default=sys.executable, help="interpreter for the Python runner")
    args = ap.parse_args()
    if args.iterations < 100 or args.runs < 1:
        sys.exit("bench_runner_overhead: use --iterations >= 100 and --runs >= 1")
    if shutil.which("cc") is None:
        sys.exit("bench_runner_overhead: needs a C compiler (cc) for the C benchmark and the C floor")

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        py_bench = workdir / "bench.py"
        py_bench.write_text("def run_iter(param):\n    pass\n")
        c_src = workdir / "bench.c"
        c_src.write_text(textwrap.dedent("void run_iter(int param) { (void)param; }\n"))
        c_bench = workdir / "bench.so"
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(c_bench), str(c_src)], check=True)

        rows: dict[str, list[float]] = {k: [] for k in ("c_floor", "py_pair", "c_runner", "py_runner", "py_ctypes")}
        for _ in range(args.runs):
            rows["c_floor"].append(c_floor_ns(workdir, args.iterations))
            rows["py_pair"].append(python_pair_ns(args.python, args.iterations))
            rows["c_runner"].append(runner_overhead_ns("c", "", c_bench, args.iterations))
            rows["py_runner"].append(runner_overhead_ns("python", args.python, py_bench, args.iterations))
            rows["py_ctypes"].append(runner_overhead_ns("python", args.python, py_bench, args.iterations,
                                                        drop_env=("COLDRUN_KRUNTIME_EXTENSION",)))

    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"runner overhead per in-process iteration (empty run_iter); "
          f"median of {args.runs} runs x {args.iterations} iterations; python = {args.python}")
    print(f"{'measurement':<46}{'ns':>9}   per-run medians")
    labels = [
        ("c_floor", "C floor: bare clock_gettime pair"),
        ("c_runner", "C runner: reported empty iteration"),
        ("py_pair", "Python: bare perf_counter_ns() pair"),
        ("py_runner", "Python runner: reported empty iteration"),
        ("py_ctypes", "Python runner, ctypes fallback (info)"),
    ]
    for key, label in labels:
        print(f"{label:<46}{med[key]:>9.1f}   {', '.join(f'{v:.0f}' for v in rows[key])}")
    c_ratio = med["c_runner"] / med["c_floor"]
    py_ratio = med["py_runner"] / med["py_pair"]
    print()
    print(f"C runner / C clock pair             {c_ratio:6.2f}x   (target <= 2.0)  {'OK' if c_ratio <= 2 else 'MISSED'}")
    print(f"Python runner / Python clock pair   {py_ratio:6.2f}x   (target <= 1.5)  {'OK' if py_ratio <= 1.5 else 'MISSED'}")
    print(f"Python runner / C clock pair        {med['py_runner'] / med['c_floor']:6.2f}x   (information)")
    print(json.dumps({"c_ratio": round(c_ratio, 3), "python_ratio": round(py_ratio, 3),
                      **{k: round(v, 1) for k, v in med.items()}}))


if __name__ == "__main__":
    main()
