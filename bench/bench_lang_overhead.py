"""Per-iteration measurement overhead of the language runners (PyPy, LuaJIT,
Node.js, Java, Ruby, PHP), side by side with the C floor.

A runner's overhead is what it reports for an *empty* ``run_iter``: the FFI
return from krun_measure(0)'s clock read, the call into the benchmark, and
the FFI call into krun_measure(1)'s clock read.  The floor is a bare pair of
``clock_gettime(CLOCK_MONOTONIC_RAW)`` calls in C.  Each figure is the
median over ITERATIONS in-process iterations, taken in RUNS fresh processes;
the median of those medians is printed with its ratio to the floor.  The
first ITERATIONS/10 iterations are skipped (warmup of the JITs' own loop).

    .venv/bin/python bench/bench_lang_overhead.py [--runs 3] [--iterations 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iteration_runners import languages
from supervisor.launch.process import run_process

C_FLOOR = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    long long *d = calloc(n, sizeof *d);
    struct timespec a, b;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC_RAW, &a);
        clock_gettime(CLOCK_MONOTONIC_RAW, &b);
        d[i] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    }
    qsort(d, n, sizeof *d, cmp);
    printf("%lld\n", d[n / 2]);
    return 0;
}
"""

EMPTY = {
    "pypy": ("bench.py", "def run_iter(n):\n    pass\n"),
    "lua": ("bench.lua", "function run_iter(n) end\n"),
    "javascript": ("bench.js", "function run_iter(n) {}\n"),
    "ruby": ("bench.rb", "def run_iter(n)\nend\n"),
    "php": ("bench.php", "<?php\nfunction run_iter($n) {}\n"),
}
TOOLS = {"pypy": "pypy3", "lua": "luajit", "javascript": "node", "java": "javac", "ruby": "ruby", "php": "php"}


def c_floor_ns(work: Path, iterations: int, runs: int) -> float:
    src = work / "floor.c"
    src.write_text(C_FLOOR)
    exe = work / "floor"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(src)], check=True)
    return statistics.median(
        float(subprocess.run([str(exe), str(iterations)], capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    )


def benchmark_path(lang: str, work: Path) -> str:
    if lang == "java":
        classes, _ = languages.build_java()
        (work / "Empty.java").write_text("class Empty implements BaseKrunEntry {\n  public void run_iter(int n) {}\n}\n")
        subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", str(classes), "-d", str(work),
                        str(work / "Empty.java")], check=True)
        return str(work / "Empty.class")
    name, text = EMPTY[lang]
    (work / name).write_text(text)
    return str(work / name)


def runner_document(what: str, argv: list[str], env: dict[str, str]) -> bytes:
    """The results document of one runner launched as the supervisor launches it (supervisor.launch.process)."""
    res = run_process(argv, {"PATH": "/usr/bin:/bin", **env}, cwd=os.getcwd(), heap_limit=None, stack_limit=None,
                      timeout=600)
    if res.exit_code != 0:
        how = res.launch_error or (f"signal {res.signal}" if res.signal else "timed out" if res.timed_out
                                   else f"exit status {res.exit_code}")
        raise SystemExit(f"{what} runner failed ({how}): {res.stderr.text().strip()}")
    return res.results


def runner_overhead_ns(lang: str, work: Path, iterations: int, runs: int) -> float:
    bench = benchmark_path(lang, work)
    medians = []
    for _ in range(runs):
        argv, env = languages.language_runner_command(lang, "", [], bench, iterations, 0, False)
        times = json.loads(runner_document(lang, argv, env))["wallclock_times"][iterations // 10:]
        medians.append(statistics.median(times) * 1e9)
    return statistics.median(medians)


def parse_args(doc: str) -> argparse.Namespace:
    """--runs and --iterations, shared with bench_barrier.py."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20000)
    return parser.parse_args()


def main() -> int:
    args = parse_args(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        floor = c_floor_ns(work, args.iterations, args.runs)
        print(f"{'runner':<12} {'median ns/iteration':>20} {'x C floor':>10}")
        print(f"{'C floor':<12} {floor:>20.0f} {1.0:>10.2f}")
        for lang in languages.KNOWN_LANGUAGE_RUNNERS:
            if shutil.which(TOOLS[lang]) is None:
                print(f"{lang:<12} {'skipped: ' + TOOLS[lang] + ' not installed':>31}")
                continue
            ns = runner_overhead_ns(lang, work, args.iterations, args.runs)
            print(f"{lang:<12} {ns:>20.0f} {ns / floor:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
