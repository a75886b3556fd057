"""Duet versus sequential under interference the benchmark injects and bounds (issue 13, methods.md §2).

Runs coldrun itself (``coldrun start --simulate-reboots``, one process
execution or pair execution per boot) on fib from configs/demo: A/A (fib
against itself) and A/B (fib against bench_slow.py, ~5% slower), each both
ways, side by side in one run:

- duet: a [duet] experiment, R pair executions per pair; the 99% percentile
  bootstrap CI of the ratio a/b (analysis.duet.stats, as the paper);
- sequential: an ordinary experiment of the same keys in random order, R
  executions each; the 99% CI of the difference of means, relative to B's mean.

Meanwhile a noise process per CPU is busy for part of every 1 ms slice, with a
duty cycle that drifts between 0 and 80% (a sine of period ~3 s).  The slices
start at the same instants on both CPUs (one shared epoch), and the noise runs
at a real-time priority above the benchmarks, so while it is busy both sides
stop together: interference both sides share, like a noisy neighbour, which is
what duet is for.  An iteration (fib(param), ~9 ms quiet at the default 25)
spans many slices.

Address-space randomisation is turned off for everything the bench starts
(personality ADDR_NO_RANDOMIZE, inherited across exec), as coldrun's platform
does on a real machine (kernel.randomize_va_space = 0) and simulated mode does
not: with it on, each CPython process lands on its own layout and A/A executions
differ by up to ~10%, a between-execution spread that no pairing can remove.

When run as root, the whole coldrun run is SCHED_FIFO (below the noise), so
other load on the machine cannot preempt the benchmarks: the only interference
is the one the bench injects and bounds.  Without root (or with --no-realtime)
both run at normal priority and any other load adds noise that each side feels
on its own.

Printed per trial and comparison: both relative CI widths and
their ratio (sequential / duet), and the decision at 99%: "different" when
the CI excludes 1 (duet) or 0 (sequential).  Then the A/A false-difference
rate and the A/B detection rate of each method.

    .venv/bin/python bench/bench_duet_interference.py [--trials 3] [--executions 32] [--iterations 30]
                                                      [--param 25] [--slice-ms 1] [--no-noise] [--no-realtime]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from analysis.duet import stats  # noqa: E402
from analysis.duet.native import exported_pairs  # noqa: E402
from analysis.duet.pairs import PairedRuns  # noqa: E402

CONFIDENCE = 0.99
RESAMPLES = 10_000
A, A2, B = "fib:python:default-python", "fib:python:copy-python", "fib:python:slow-python"

NOISE = r"""
import math, os, sys, time
cpu, epoch, slice_s, priority = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
os.sched_setaffinity(0, {cpu})
if priority:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
k = int((time.monotonic() - epoch) / slice_s) + 1
while True:   # slice k starts at epoch + k*slice on every CPU; busy for its duty share, then sleep to the next
    start = epoch + k * slice_s
    duty = 0.4 + 0.4 * math.sin(2 * math.pi * (start - epoch) / 3.0)   # 0..80 %, drifting
    if start > time.monotonic():
        time.sleep(start - time.monotonic())
    while time.monotonic() < start + slice_s * duty:
        pass
    k += 1
"""
ADDR_NO_RANDOMIZE = 0x0040000   # linux/personality.h
BENCH_PRIORITY, NOISE_PRIORITY = 10, 50   # SCHED_FIFO: noise preempts the benchmarks, other load cannot


def experiment(directory: Path, name: str, body: str, iterations: int, param: int) -> Path:
    """A small experiment on configs/demo's fib (A, a copy of A, and the 5% slower B)."""
    user = "\n[platform]\nbenchmark_user = false\n" if os.geteuid() == 0 else ""   # root: /root is 0700
    text = f"""name = "{name}"
benchmarks_dir = "{REPO / 'configs' / 'demo' / 'benchmarks'}"
execution_timeout = "5min"
{body}
[waits]
boot_settle = 0
sync = 0
baseline_pause = 0
[benchmarks]
fib = {param}
[variants.default-python]
target = "bench.py"
subdir = "python"
[variants.copy-python]
target = "bench.py"
subdir = "python"
[variants.slow-python]
target = "bench_slow.py"
subdir = "python"
[vms.python]
runner = "python"
executable = "@python"
iterations = {iterations}
variants = ["default-python", "copy-python", "slow-python"]
{user}"""
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def run_coldrun(exp: Path, directory: Path) -> dict:
    """start --simulate-reboots, then the native export."""
    state = directory / (exp.stem + "-state")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "supervisor", "start", str(exp), "--simulate-reboots",
                        "--state-dir", str(state)], capture_output=True, text=True, cwd=str(REPO), env=env)
    if r.returncode != 0:
        raise SystemExit(f"coldrun start {exp} failed ({r.returncode}): {r.stderr[-1500:]}")
    out = directory / (exp.stem + ".json")
    subprocess.run([sys.executable, "-m", "supervisor", "export", str(state), "--format", "native", "-o", str(out)],
                   check=True, capture_output=True, cwd=str(REPO))
    return json.loads(out.read_text())


def sequential_runs(bundle: dict, x_key: str, y_key: str) -> PairedRuns:
    """Separate executions of two keys; the sequential CI treats their means as independent samples."""
    times = {k: [tuple(e["wallclock_times"]) for e in bundle["executions"]
                 if e["key"] == k and e["state"] == "completed"] for k in (x_key, y_key)}
    n = min(len(times[x_key]), len(times[y_key]))
    return PairedRuns(tuple(times[x_key][:n]), tuple(times[y_key][:n]))


def one_trial(directory: Path, executions: int, iterations: int, param: int,
              seed: int) -> dict[str, dict[str, tuple]]:
    """{comparison: {method: (relative width, CI excludes no-difference, estimate)}}."""
    duet = experiment(directory, f"duet{seed}", f"executions = {executions}\nseed = {seed}\n[duet]\npairs = [\n"
                      f'  {{ a = "{A}", b = "{A}" }},\n  {{ a = "{A}", b = "{B}" }},\n]\n', iterations, param)
    seq = experiment(directory, f"seq{seed}", f'executions = {executions}\norder = "random"\nseed = {seed}\n'
                     f'skip = []\n', iterations, param)
    pairs = {p.pair: p.runs for p in exported_pairs(run_coldrun(duet, directory), "duet export")}
    seq_bundle = run_coldrun(seq, directory)
    out: dict[str, dict[str, tuple]] = {}
    for name, pair, (x_key, y_key) in (("A/A", f"{A}/{A}", (A, A2)), ("A/B", f"{A}/{B}", (A, B))):
        d = stats.analyse(pairs[pair], confidence=CONFIDENCE, resamples=RESAMPLES, seed=seed)
        diff, s = stats.sequential_ci(sequential_runs(seq_bundle, x_key, y_key), confidence=CONFIDENCE,
                                      resamples=RESAMPLES, rng=__import__("numpy").random.default_rng(seed))
        out[name] = {"duet": (d.ci.relative_width, not d.ci.low <= 1.0 <= d.ci.high, d.ggms),
                     "sequential": (s.relative_width, not s.low <= 0.0 <= s.high, diff)}
    return out


def start_noise(cpus: list[int], slice_ms: float, realtime: bool) -> list[subprocess.Popen]:
    epoch = time.monotonic() + 0.05
    return [subprocess.Popen([sys.executable, "-c", NOISE, str(cpu), repr(epoch), str(slice_ms / 1000),
                              str(NOISE_PRIORITY if realtime else 0)]) for cpu in cpus]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--executions", type=int, default=32, help="pair executions per pair, executions per key")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--param", type=int, default=25, help="fib's param (fib(25): ~9 ms per iteration on a quiet machine)")
    ap.add_argument("--slice-ms", type=float, default=1.0, help="the noise's busy+idle slice")
    ap.add_argument("--no-noise", action="store_true", help="without the injected interference")
    ap.add_argument("--no-realtime", action="store_true",
                    help="normal priority for the benchmarks and the noise (the default as root is SCHED_FIFO)")
    args = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        raise SystemExit("duet needs 2 CPUs")
    # Everything run from here (the sequential runs too) stays on the CPUs the noise loads, as the duet sides do.
    os.sched_setaffinity(0, cpus)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.personality(0xffffffff) == -1 or libc.personality(libc.personality(0xffffffff) | ADDR_NO_RANDOMIZE) == -1:
        raise SystemExit(f"personality(ADDR_NO_RANDOMIZE) failed: {os.strerror(ctypes.get_errno())}")
    realtime = os.geteuid() == 0 and not args.no_realtime
    if realtime:   # inherited by coldrun and its runners; the noise sets its own, higher priority
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(BENCH_PRIORITY))
    noise = [] if args.no_noise else start_noise(cpus, args.slice_ms, realtime)
    results = []
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="coldrun-duet-bench-") as tmp:
            for trial in range(args.trials):
                r = one_trial(Path(tmp), args.executions, args.iterations, args.param, seed=1000 + trial)
                results.append(r)
                for comparison, methods in r.items():
                    (dw, dd, dg), (sw, sd, sdiff) = methods["duet"], methods["sequential"]
                    print(f"trial {trial} {comparison}: duet ratio {dg:.4f} rel. 99% CI width {dw:.2%} "
                          f"{'DIFFERENT' if dd else 'same'} | sequential diff {sdiff * 1e3:+.3f} ms rel. width "
                          f"{sw:.2%} {'DIFFERENT' if sd else 'same'} | sequential/duet width {sw / dw:.2f}x",
                          flush=True)
    finally:
        for p in noise:
            p.kill()
            p.wait()
    n = len(results)
    print(f"\n{n} trials x {args.executions} executions x {args.iterations} iterations of fib({args.param}), noise "
          f"{'off' if args.no_noise else f'on (0-80% duty of {args.slice_ms:g} ms slices, drifting, aligned on both CPUs)'}, "
          f"{'SCHED_FIFO (benchmarks below the noise)' if realtime else 'normal priority'}, ASLR off, "
          f"{time.monotonic() - t0:.0f} s")
    for comparison in ("A/A", "A/B"):
        ratios = [r[comparison]["sequential"][0] / r[comparison]["duet"][0] for r in results]
        gm = math.exp(sum(map(math.log, ratios)) / n)
        print(f"{comparison}: sequential/duet relative CI width, geometric mean {gm:.2f}x "
              f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    for method in ("duet", "sequential"):
        false = sum(r["A/A"][method][1] for r in results)
        # detected: different, and in the right direction (A faster: ratio < 1, difference < 0)
        detected = sum(r["A/B"][method][1] and r["A/B"][method][2] < (1.0 if method == "duet" else 0.0)
                       for r in results)
        print(f"{method:10s}: A/A called different {false}/{n}; A/B 5% slowdown detected {detected}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
