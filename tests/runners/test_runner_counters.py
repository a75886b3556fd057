"""Per-core counters through the real perf_event plumbing, and their absence on this machine.

A VM usually has no PMU and no APERF/MPERF, so hardware counters cannot be
checked here.  COLDRUN_COUNTERS=test-software-events makes libkruntime open
the software cpu-clock event per CPU in place of all three counters: the
same perf_event_open(pid=-1, cpu=N) / read() path, with a clock we can
reason about.  Since every stand-in counter runs at the same rate, Listing
1's nesting (APERF outermost, then MPERF, then cycles, then the wall clock)
must show in the deltas: aperf >= mperf >= cycles >= wall clock.
"""

from __future__ import annotations

import os
import sys

import pytest

import libkruntime
from runner_helpers import build_c_benchmark, check_success, run, write_python_benchmark

TEST_MODE = {"COLDRUN_COUNTERS": "test-software-events"}


def _software_events_usable() -> str | None:
    os.environ.update(TEST_MODE)
    try:
        libkruntime.krun_init()
        n = libkruntime.krun_get_num_cores()
        reason = libkruntime.krun_counters_unavailable_reason()
        libkruntime.krun_done()
    finally:
        del os.environ["COLDRUN_COUNTERS"]
    return None if n > 0 else reason


@pytest.fixture(scope="module")
def software_events():
    reason = _software_events_usable()
    if reason is not None:
        pytest.skip(f"per-CPU perf events not permitted here: {reason}")


def _check_nesting(doc: dict) -> None:
    ncores = os.cpu_count()
    assert doc["counters"] == {"available": True, "reason": None}
    assert len(doc["core_cycle_counts"]) == ncores
    for core in range(ncores):
        for i, wall in enumerate(doc["wallclock_times"]):
            a, m, c = (doc[k][core][i] for k in ("aperf_counts", "mperf_counts", "core_cycle_counts"))
            assert a >= m >= c > 0, (core, i, a, m, c)
            # Different clocks (sched_clock vs CLOCK_MONOTONIC_RAW): allow 0.1% rate skew.
            assert c >= wall * 1e9 * 0.999, (core, i, c, wall)


def test_c_runner_per_core_counters_nest_around_the_wall_clock(tmp_path, software_events):
    bench = build_c_benchmark(tmp_path, """
        void run_iter(int param) { volatile long s = 0; for (long i = 0; i < param * 10000L; i++) s += i; }
    """)
    _check_nesting(check_success(run("c", "", bench, iterations=20, param=5, extra_env=TEST_MODE), 20))


def test_python_runner_per_core_counters_nest_around_the_wall_clock(tmp_path, software_events):
    bench = write_python_benchmark(tmp_path, "def run_iter(param):\n    sum(range(param * 1000))\n")
    _check_nesting(check_success(run("python", sys.executable, bench, iterations=20, param=5,
                                     extra_env=TEST_MODE), 20))


def test_extension_names_the_test_source(software_events):
    os.environ.update(TEST_MODE)
    try:
        libkruntime.krun_init()
        assert "TEST" in libkruntime.krun_counters_source()
        libkruntime.krun_measure(0)
        libkruntime.krun_measure(1)
        assert libkruntime.krun_get_core_cycles(1, 0) >= libkruntime.krun_get_core_cycles(0, 0)
        assert libkruntime.krun_aperf_delta(0) >= libkruntime.krun_core_cycles_delta(0)
        # Small counts convert exactly for languages without 64-bit integers.
        assert libkruntime.krun_get_mperf_double(1, 0) == float(libkruntime.krun_get_mperf(1, 0))
        with pytest.raises(ValueError, match="out of range"):
            libkruntime.krun_get_aperf(1, os.cpu_count())
    finally:
        libkruntime.krun_done()
        del os.environ["COLDRUN_COUNTERS"]


def test_real_counters_are_all_there_or_each_failure_is_named(tmp_path):
    bench = build_c_benchmark(tmp_path, "void run_iter(int p) { (void)p; }\n")
    doc = check_success(run("c", "", bench, iterations=3), 3)
    if doc["counters"]["available"]:
        assert len(doc["core_cycle_counts"]) == os.cpu_count()
        assert all(v > 0 for v in doc["mperf_counts"][0])
    else:
        reason = doc["counters"]["reason"]
        # One clause per counter that failed, each saying what was tried.
        assert "core cycles:" in reason or "aperf:" in reason or "mperf:" in reason, reason
        assert "perf_event_open" in reason or "msr" in reason, reason
