#!/usr/bin/env python3
"""End-to-end speed of ``coldrun-analyze annotate`` and ``summary`` on a paper-scale file.

Paper scale: 3660 process executions x 2000 iterations (122 benchmarks x 30
executions, bench_analysis.make_dataset's seeded mix of flat, warm-up,
slowdown and no-steady-state series) written once as a Krun results file
(bzip2 JSON, with pexec_flags, empty per-core counters, audit and config as
Krun writes them) and cached under bench/.cache/ (gitignored).

Each command runs as a real subprocess, from the file, ``--repeat`` times;
printed per command: median wall time, CPU time (user + system of the
process and its workers) and peak memory -- ru_maxrss of the largest single
process (wait4) and the peak summed PSS of the whole process tree (sampled
from /proc every 50 ms; forked workers share pages, so PSS is what the
machine pays). "read" is reading the file alone (analysis.inputs.read_results).

``--baseline DIR`` runs the same commands from another checkout of coldrun
(e.g. ``git archive BASE | tar -x -C DIR`` and its C extensions built in place)
interleaved with this one, prints both side by side with ratios, and checks
that both write the same outputs: the same JSON values, key order included (the
annotated text itself may differ: indented before issue 15's speed work, compact since).

Targets (issue 15): annotate and summary each <= 10 s wall and <= 1 GB.

"summary-low" is ``summary --quality low`` (warmup_stats' B = 10,000 instead of
100,000): run it with ``--only`` to see how much of summary's time is the
bootstrap warmup_stats' default asks for.

Usage: python bench/bench_paper_scale_cli.py [--repeat N] [--baseline DIR] [--only annotate,summary,summary-low,read]
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache"
SEED = 2017
EXECUTIONS = 3660
READ_ONLY = ("import sys; from analysis.inputs import read_results; "
             "read_results(sys.argv[1], warn=lambda m: None)")


def build_file(path: Path) -> None:
    """The paper-scale Krun results file (generated once, then reused)."""
    sys.path.insert(0, str(HERE))
    from bench_analysis import make_dataset  # noqa: E402  (numpy, only when building)

    data = make_dataset(SEED, EXECUTIONS)
    # Krun's times come from a nanosecond clock: at most 9 decimals, not 17 digits.
    wct = {k: [[round(t, 9) for t in e] for e in v] for k, v in data["wallclock_times"].items()}
    results = {
        "audit": data["audit"],
        "config": "# paper-scale benchmark configuration (generated)\n",
        "wallclock_times": wct,
        "pexec_flags": {k: ["C"] * len(v) for k, v in wct.items()},
        "eta_estimates": {k: [sum(e) for e in v] for k, v in wct.items()},
        "core_cycle_counts": {k: [[] for _ in v] for k, v in wct.items()},
        "aperf_counts": {k: [[] for _ in v] for k, v in wct.items()},
        "mperf_counts": {k: [[] for _ in v] for k, v in wct.items()},
        "error_flag": False,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(bz2.compress(json.dumps(results).encode(), 9))  # Krun writes bzip2 at level 9
    tmp.replace(path)


def _tree_pss_kb(root: int) -> int:
    """Summed PSS of ``root`` and all its descendants (0 for vanished ones)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def run_measured(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, float, float]:
    """(wall s, CPU s, max RSS MB of one process, peak tree PSS MB) of one subprocess run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_pss_kb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {stderr.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, peak[0] / 1024


def commands(tree: Path, results: Path, out_dir: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    py = [sys.executable]
    cli = py + ["-m", "analysis.cli"]
    return {
        "read": (py + ["-c", READ_ONLY, str(results)], env),
        "annotate": (cli + ["annotate", str(results), "-o", str(out_dir / "annotated.json.bz2"), "--no-progress"], env),
        "summary": (cli + ["summary", str(results), "-o", str(out_dir / "summary.json"), "--no-progress"], env),
        # warmup_stats' low-quality bootstrap (B = 10,000): what the B = 100,000 default costs, side by side.
        "summary-low": (cli + ["summary", str(results), "-o", str(out_dir / "summary-low.json"), "--quality", "low",
                               "--no-progress"], env),
    }


def fmt(samples: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    return tuple(statistics.median(s[i] for s in samples) for i in range(4))  # type: ignore[return-value]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another coldrun checkout to run side by side")
    ap.add_argument("--only", default="read,annotate,summary")
    args = ap.parse_args()
    CACHE.mkdir(exist_ok=True)
    results = CACHE / f"paper-{SEED}-{EXECUTIONS}-ns.json.bz2"
    if not results.exists():
        t0 = time.perf_counter()
        build_file(results)
        print(f"built {results} in {time.perf_counter() - t0:.0f} s (cached for later runs)")
    print(f"file: {results.name}, {results.stat().st_size / 1e6:.1f} MB, {EXECUTIONS} executions x 2000 iterations; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    trees = {"this": ROOT}
    if args.baseline:
        trees = {"base": args.baseline.resolve(), "this": ROOT}
    wanted = args.only.split(",")
    samples: dict[tuple[str, str], list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        outs = {name: Path(tmp) / name for name in trees}
        for d in outs.values():
            d.mkdir()
        for r in range(args.repeat):
            for command in wanted:
                # Alternate which tree goes first, so neither always meets the same neighbours.
                order = list(trees) if r % 2 == 0 else list(reversed(trees))
                for name in order:
                    argv, env = commands(trees[name], results, outs[name])[command]
                    # cwd = the tree: "-m" and "-c" put the working directory first on sys.path.
                    samples.setdefault((name, command), []).append(run_measured(argv, env, str(trees[name])))
        load = os.getloadavg()
        print(f"median of {args.repeat} run(s); load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"  {'command':9s} {'tree':5s} {'wall s':>7s} {'CPU s':>7s} {'max RSS MB':>11s} {'tree PSS MB':>12s}")
        for command in wanted:
            rows = {name: fmt(samples[(name, command)]) for name in trees}
            for name, (wall, cpu, rss, pss) in rows.items():
                extra = ""
                if name == "this" and "base" in rows:
                    b = rows["base"]
                    extra = f"   base/this: wall x{b[0] / wall:.2f}, CPU x{b[1] / cpu:.2f}, PSS x{b[3] / pss:.2f}"
                print(f"  {command:9s} {name:5s} {wall:7.2f} {cpu:7.2f} {rss:11.0f} {pss:12.0f}{extra}")
        if "base" in trees:
            for command, name in (("annotate", "annotated.json.bz2"), ("summary", "summary.json")):
                if command not in wanted:
                    continue
                a, b = (outs[t] / name for t in ("base", "this"))
                docs = [json.loads(bz2.decompress(p.read_bytes()) if name.endswith(".bz2") else p.read_bytes())
                        for p in (a, b)]
                same = docs[0] == docs[1] and json.dumps(docs[0]) == json.dumps(docs[1])  # NaN-safe, ordered
                print(f"  {command} output has the same JSON as base: {same} "
                      f"(sizes base {a.stat().st_size / 1e6:.1f} MB, this {b.stat().st_size / 1e6:.1f} MB)")
        print("targets: annotate and summary each <= 10 s wall and <= 1 GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
