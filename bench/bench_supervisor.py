"""Figures for the supervisor's own overhead (prints them; no pass/fail).

  1. latency: supervisor process start -> runner launch (fork), zero waits, simulated mode;
  2. supervisor CPU time (user+sys) while a 10-second benchmark runs (target ~0);
  3. supervisor RSS while the benchmark runs (target <= 60 MB).

The benchmark itself reads its parent's (the supervisor's) /proc/<pid>/stat and
status at its first and last moment, so 2 and 3 cover exactly the run.

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

# As root a simulated run's runners run as a fresh benchmark user, who cannot reach this interpreter under
# /root or the temp dir: measure the supervisor, so run them as the invoker (as the tests do).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from root_runs import runs_as_invoker  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

RUNNER = r'''
import json, os, sys, time
# Reads the supervisor's (parent's) CPU ticks and memory from /proc at its own start and end,
# so the figure covers exactly the time the benchmark runs.
def sup():
    with open("/proc/%d/stat" % os.getppid()) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])        # utime + stime
    with open("/proc/%d/status" % os.getppid()) as f:
        mem = dict(l.split(":", 1) for l in f if l.startswith(("VmRSS", "VmHWM")))
    return ticks, int(mem["VmRSS"].split()[0]), int(mem["VmHWM"].split()[0])
bench, iters, param = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seconds = float(open(bench).read())
before = sup()
t = []
for i in range(iters):
    t0 = time.monotonic(); time.sleep(seconds / iters); t.append(time.monotonic() - t0)
after = sup()
print(json.dumps({"before": before, "after": after, "clk_tck": os.sysconf("SC_CLK_TCK")}))
doc = {"protocol_version": 1, "wallclock_times": t, "core_cycle_counts": [], "aperf_counts": [],
       "mperf_counts": [], "counters": {"available": False, "reason": "bench"}}
os.write(3, json.dumps(doc).encode())
'''



def experiment(tmp: Path, seconds: float, executions: int) -> Path:
    (tmp / "benchmarks" / "b").mkdir(parents=True)
    (tmp / "benchmarks" / "b" / "bench.txt").write_text(str(seconds))
    (tmp / "runner.py").write_text(RUNNER)
    p = tmp / "exp.toml"
    p.write_text(runs_as_invoker(f'''name = "bench"
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
'''))
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
        started = subprocess.run([sys.executable, "-m", "supervisor", "start", str(exp), "--simulate-reboots",
                                  "--state-dir", str(state)], env=env("after-flag@1"), capture_output=True,
                                 text=True, cwd=REPO)
        if not (state / "schedule").exists():
            raise SystemExit(f"bench_supervisor: coldrun start failed (exit {started.returncode}): "
                             f"{started.stderr.strip()[-500:]}")
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
        subprocess.run([sys.executable, "-m", "supervisor", "start", str(exp), "--simulate-reboots",
                        "--state-dir", str(state)], env=env(None), cwd=REPO, capture_output=True, check=True)
        rec = json.loads(next((state / "executions").iterdir()).read_text())
        seen = json.loads(rec["stdout_tail"])
        tck = seen["clk_tck"]
        return {"cpu": (seen["after"][0] - seen["before"][0]) / tck, "tick": 1 / tck,
                "rss_kib": seen["after"][1], "hwm_kib": seen["after"][2]}


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
    print(f"supervisor CPU while a {args.run_seconds:.0f} s benchmark runs: {o['cpu'] * 1000:.0f} ms "
          f"(user+sys, resolution {o['tick'] * 1000:.0f} ms; target ~0)")
    print(f"supervisor memory while the benchmark runs: RSS {o['rss_kib'] / 1024:.1f} MiB, "
          f"peak RSS so far {o['hwm_kib'] / 1024:.1f} MiB (target <= 60 MB)")


if __name__ == "__main__":
    main()
