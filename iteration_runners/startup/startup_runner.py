import time; _T1 = time.clock_gettime_ns(getattr(time, "CLOCK_MONOTONIC_RAW", time.CLOCK_MONOTONIC)) if hasattr(time, "clock_gettime_ns") else None  # noqa: E501,E702
# coldrun startup-time dummy runner for Python (CPython and PyPy, 3 and 2.7).
#
# The first line above reads the clock the startup wrapper read before it
# exec'd the VM; the rest reports both (protocol 1 with a "startup" key).
# The benchmark is not loaded: this measures the VM's own start-up.
# Python 2 has no clock_gettime: it is read through ctypes from the process's
# own C library, so there the start-up includes ctypes' import (as Krun's
# startup_runner.py included cffi's import and a dlopen).
import json
import os
import sys


def _clock_gettime_ns_ctypes(clock_id):
    import ctypes

    class Timespec(ctypes.Structure):
        _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
    ts = Timespec()
    if ctypes.CDLL(None, use_errno=True).clock_gettime(clock_id, ctypes.byref(ts)) != 0:
        sys.stderr.write("startup_runner.py: error: clock_gettime failed: errno %d\n" % ctypes.get_errno())
        sys.exit(1)
    return ts.tv_sec * 1000000000 + ts.tv_nsec


if _T1 is None:
    # CLOCK_MONOTONIC_RAW is 4 on Linux; elsewhere (OpenBSD) the wrapper's clock is CLOCK_MONOTONIC, 3.
    _T1 = _clock_gettime_ns_ctypes(4 if sys.platform.startswith("linux") else 3)
    time.CLOCK_MONOTONIC_RAW = 4 if sys.platform.startswith("linux") else None
    if time.CLOCK_MONOTONIC_RAW is None:
        del time.CLOCK_MONOTONIC_RAW


def main():
    if len(sys.argv) != 5:
        sys.stderr.write("usage: startup_runner.py <benchmark> <iterations> <param> <debug 0|1>\n")
        sys.exit(1)
    clock = "CLOCK_MONOTONIC_RAW" if hasattr(time, "CLOCK_MONOTONIC_RAW") else "CLOCK_MONOTONIC"
    wrapper = os.environ.get("COLDRUN_STARTUP_" + clock)
    if not wrapper:
        sys.stderr.write("startup_runner.py: COLDRUN_STARTUP_%s is unset: run me under startup_wrapper\n" % clock)
        sys.exit(1)
    sec, nsec = wrapper.split(".")
    t0 = int(sec) * 1000000000 + int(nsec)
    seconds = (_T1 - t0) / 1e9
    document = {
        "protocol_version": 1,
        "wallclock_times": [seconds],
        "core_cycle_counts": [],
        "aperf_counts": [],
        "mperf_counts": [],
        "counters": {"available": False, "reason": "startup-time mode reads no per-core counters"},
        "startup": {
            "clock": clock,
            "wrapper_time": wrapper,
            "runner_time": "%d.%09d" % divmod(_T1, 1000000000),
            "seconds": seconds,
        },
    }
    fd = int(os.environ.get("COLDRUN_RESULTS_FD", "3"))
    data = memoryview(json.dumps(document).encode("ascii"))
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)


main()
