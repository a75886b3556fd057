"""A test-only external runner: <benchmark file> <iterations> <param> <debug>.

The benchmark file holds one word naming a behaviour:
  ok        valid document; times encode identity: (param + pid / 1e9 + i / 1e12) * OK_SCALE per iteration,
            and "pid=<pid> param=<param>" on stdout (crash test checks they agree)
  slow      like ok, sleeping 20 ms per iteration (so random kills land mid-run)
  garbage   prints garbage on fd 3
  wrongkeys a document with missing/extra keys
  short     one iteration fewer than asked
  crash     SIGSEGV after some stderr output
  fail      traceback on stderr, exit 1, no document
  hang      sleeps forever (with a child process that also sleeps)
  huge      60 MB on stdout and stderr, then a valid document
  noresults exits 0 without writing a document
  setup     exits with the protocol's usage/setup status 2 before any iteration, naming what is missing
  flat      like ok, but every iteration of an execution takes the same time, (param / 1000 s plus a
            per-execution offset of (pid % 7) picoseconds) * SHAPE_SCALE: a steady state at once, executions agree
  noisy     like flat, times a per-execution factor between 1 and 2 hashed from the pid: executions
            disagree widely
  bigcounters  like flat, with counters on every core of this machine, each count the largest
            unsigned 64-bit number (20 digits): the largest document such a run can write
  shm       writes 256 MiB into a /dev/shm file named by the benchmark's path (outside RLIMIT_DATA), then
            like ok
  forged    five iterations of 100 s each, written at once: more than the process lived
  wps       each iteration takes 0.002 + param / 1e6 s (1e6 param units per second, 2 ms set-up),
            plus (pid % 7) nanoseconds, and the runner sleeps that long

The supervisor refuses a document whose times add up to more than the runner lived, so the made-up times are
scaled down to what a short-lived process can claim (wps really takes its time).
"""

import json
import os
import signal
import subprocess
import sys
import time


OK_SCALE = 1e-9      # a param of 1000 is 1 us per iteration
SHAPE_SCALE = 1e-6   # flat and noisy: a param of 1000 is 1 us per iteration


def document(times):
    return {"protocol_version": 1, "wallclock_times": times, "core_cycle_counts": [],
            "aperf_counts": [], "mperf_counts": [], "counters": {"available": False, "reason": "fake runner"}}


def write_doc(doc):
    fd = int(os.environ.get("COLDRUN_RESULTS_FD", "3"))
    data = (doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    while data:
        n = os.write(fd, data)
        data = data[n:]
    os.close(fd)


def main():
    bench, iterations, param = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(bench) as f:
        behaviour = f.read().strip()
    pid = os.getpid()
    times = [(param + pid / 1e9 + i / 1e12) * OK_SCALE for i in range(iterations)]
    shaped = {"flat": lambda: (param / 1000 + (pid % 7) * 1e-12) * SHAPE_SCALE,
              "noisy": lambda: param / 1000 * (1 + (pid * 2654435761 % 1000003) / 1000003) * SHAPE_SCALE,
              "wps": lambda: 0.002 + param / 1e6 + (pid % 7) * 1e-9}
    if behaviour in shaped:
        print(f"pid={pid} param={param}")
        if behaviour == "wps":
            time.sleep((0.002 + param / 1e6) * iterations)
        write_doc(document([shaped[behaviour]()] * iterations))
    elif behaviour == "shm":
        name = "/dev/shm/coldrun-test-" + bench.replace("/", "_")
        with open(name, "wb") as f:
            for _ in range(256):
                f.write(b"x" * (1 << 20))
                f.flush()
        print(f"pid={pid} param={param}")
        write_doc(document(times))
    elif behaviour == "bigcounters":
        counts = [[2 ** 64 - 1] * iterations for _ in range(os.cpu_count())]
        doc = document([(param / 1000 + 1e-12) * SHAPE_SCALE] * iterations)
        doc.update(core_cycle_counts=counts, aperf_counts=counts, mperf_counts=counts,
                   counters={"available": True, "reason": None})
        write_doc(doc)
    elif behaviour in ("ok", "slow"):
        for _ in range(iterations):
            if behaviour == "slow":
                time.sleep(0.02)
        print(f"pid={pid} param={param}")
        write_doc(document(times))
    elif behaviour == "forged":
        write_doc(document([100.0] * iterations))
    elif behaviour == "garbage":
        write_doc(b"this is not json {{{")
    elif behaviour == "wrongkeys":
        d = document(times)
        del d["counters"]
        d["extra"] = 1
        write_doc(d)
    elif behaviour == "short":
        write_doc(document(times[:-1]))
    elif behaviour == "crash":
        sys.stderr.write("about to crash: segfault coming\n")
        sys.stderr.flush()
        os.kill(pid, signal.SIGSEGV)
    elif behaviour == "fail":
        raise RuntimeError("benchmark exploded")
    elif behaviour == "hang":
        # The benchmark's path on its command line: a test finds this child by it, not by every sleeper.
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", bench])
        time.sleep(600)
    elif behaviour == "huge":
        chunk = b"x" * (1 << 20)
        for _ in range(60):
            os.write(1, chunk)
            os.write(2, chunk)
        os.write(2, b"\nEND-OF-STDERR\n")
        write_doc(document(times))
    elif behaviour == "noresults":
        pass
    elif behaviour == "setup":
        sys.stderr.write("fake runner: cannot load libfake.so: no such file\n")
        sys.exit(2)
    else:
        sys.exit(f"unknown behaviour {behaviour!r}")


if __name__ == "__main__":
    main()
