"""Figures for the supervisor's own overhead (prints them; no pass/fail).

  1. latency: supervisor process start -> runner launch (fork), zero waits, simulated mode;
  2. supervisor CPU time (user+sys) while a 10-second benchmark runs (target ~0);
  3. supervisor RSS while the benchmark runs (target <= 60 MB).

Run:  .venv/bin/python bench/bench_supervisor.py [--samples N] [--run-seconds S]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]

RUNNER = r'''
import json, os, sys, time
bench, iters, param = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seconds = float(open(bench).read())
t = []
for i in range(iters):
    t0 = time.monotonic(); time.sleep(seconds / iters); t.append(time.monotonic() - t0)
doc = {"protocol_version": 1, "wallclock_times": t, "core_cycle_counts": [], "aperf_counts": [],
       "mperf_counts": [], "counters": {"available": False, "reason": "bench"}}
os.write(3, json.dumps(doc).encode())
'''


def experiment(tmp: Path, seconds: float, executions: int) -> Path:
    (tmp / "benchmarks" / "b").mkdir(parents=True)
    (tmp / "benchmarks" / "b" / "bench.txt").write_text(str(seconds))
    (tmp / "runner.py").write_text(RUNNER)
    p = tmp / "exp.toml"
    p.write_text(f'''name = "bench"
executions = {executions}
[waits]
boot_settle = 0
sync = 0
baseline_pause = 0
[rerun]
max_unexplained_boots = 1000
[benchmarks]
b = 1
[variants.v]
target = "bench.txt"
[vms.py]
runner = "external"
executable = "{sys.executable}"
args = ["{tmp / 'runner.py'}"]
iterations = 10
variants = ["v"]
''')
    return p


def env(pause: str | None) -> dict:
    e = dict(os.environ)
    e.pop("COLDRUN_TEST_PAUSE_AT", None)
    if pause:
        e["COLDRUN_TEST_PAUSE_AT"] = pause
    return e


def boots(state: Path) -> int:
    for line in (state / "schedule").read_text().splitlines():
        if line.startswith("boots="):
            return int(line[6:])
    raise RuntimeError("no boots field")


def latency(samples: int) -> list[float]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        exp = experiment(tmp, 0.0, samples + 1)
        state = tmp / "state"
        subprocess.run([sys.executable, "-m", "supervisor", "start", str(exp), "--simulate-reboots",
                        "--state-dir", str(state)], env=env("after-flag@1"), capture_output=True, cwd=REPO)
        out = []
        for _ in range(samples):
            n = boots(state) + 1
            t0 = time.time()
            subprocess.run([sys.executable, "-m", "supervisor", "resume", str(state)], env=env(f"after-flag@{n}"),
                           capture_output=True, cwd=REPO)
            recs = sorted((state / "executions").iterdir(), key=lambda p: p.stat().st_mtime)
            out.append(json.loads(recs[-1].read_text())["started_at"] - t0)
        return out


def overhead(run_seconds: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        exp = experiment(tmp, run_seconds, 1)
        state = tmp / "state"
        proc = subprocess.Popen([sys.executable, "-m", "supervisor", "start", str(exp), "--simulate-reboots",
                                 "--state-dir", str(state)], env=env(None), cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sup = psutil.Process(proc.pid)
        while not (state / "runner.json").exists():
            time.sleep(0.01)
        c0 = sup.cpu_times()
        rss = []
        while (state / "runner.json").exists():
            rss.append(sup.memory_info().rss)
            time.sleep(0.5)
        c1 = sup.cpu_times()
        proc.wait()
        return {"cpu": (c1.user + c1.system) - (c0.user + c0.system), "rss_max": max(rss) if rss else 0.0,
                "samples": len(rss)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--run-seconds", type=float, default=10.0)
    args = ap.parse_args()
    lat = latency(args.samples)
    print(f"start -> runner launch (fork), zero waits, {len(lat)} fresh supervisor processes: "
          f"median {statistics.median(lat) * 1000:.0f} ms, min {min(lat) * 1000:.0f} ms, "
          f"max {max(lat) * 1000:.0f} ms")
    o = overhead(args.run_seconds)
    print(f"supervisor CPU while a {args.run_seconds:.0f} s benchmark runs: {o['cpu'] * 1000:.1f} ms "
          f"(user+sys)")
    print(f"supervisor RSS while the benchmark runs: max {o['rss_max'] / 2**20:.1f} MiB "
          f"over {o['samples']} samples (target <= 60 MB)")


if __name__ == "__main__":
    main()
