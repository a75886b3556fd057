"""The C runner binary, run for real on tiny shared-object benchmarks."""

from __future__ import annotations

import signal

import pytest

from iteration_runners import c_runner_path
from runner_helpers import build_c_benchmark, check_success, run, run_runner

COUNTING = """
    #include <stdio.h>
    void run_iter(int param) {
        volatile long s = 0;
        for (long i = 0; i < param * 1000L; i++) s += i;
        printf("param %d\\n", param);
        fflush(stdout);
    }
"""


def test_runs_benchmark_and_writes_a_valid_document(tmp_path):
    bench = build_c_benchmark(tmp_path, COUNTING)
    outcome = run("c", "", bench, iterations=6, param=4)
    doc = check_success(outcome, 6)
    assert outcome.stdout.splitlines() == ["param 4"] * 6
    assert all(0 < t < 5 for t in doc["wallclock_times"])


def test_measures_the_benchmark(tmp_path):
    bench = build_c_benchmark(tmp_path, """
        #include <time.h>
        void run_iter(int param) {
            struct timespec ts = {0, param * 1000000L};
            nanosleep(&ts, 0);
        }
    """)
    doc = check_success(run("c", "", bench, iterations=3, param=15), 3)
    assert all(0.0149 < t < 1.0 for t in doc["wallclock_times"]), doc["wallclock_times"]


def test_wallclock_floats_round_trip_from_the_ns_delta(tmp_path):
    bench = build_c_benchmark(tmp_path, "void run_iter(int p) { (void)p; }\n")
    doc = check_success(run("c", "", bench, iterations=50), 50)
    for t in doc["wallclock_times"]:
        ns = round(t * 1e9)
        assert ns / 1e9 == t  # exactly the correctly rounded ns/1e9, as the Python runner writes


def test_counters_off_is_reported(tmp_path):
    bench = build_c_benchmark(tmp_path, COUNTING)
    doc = check_success(run("c", "", bench, iterations=2, extra_env={"COLDRUN_COUNTERS": "off"}), 2)
    assert doc["counters"]["available"] is False
    assert "COLDRUN_COUNTERS=off" in doc["counters"]["reason"]


def test_debug_lines_go_to_stderr(tmp_path):
    bench = build_c_benchmark(tmp_path, COUNTING)
    outcome = run("c", "", bench, iterations=3, debug=True)
    check_success(outcome, 3)
    assert sum("took" in line for line in outcome.stderr.splitlines()) == 3


def test_crashing_benchmark_exits_nonzero_without_document(tmp_path):
    bench = build_c_benchmark(tmp_path, """
        #include <stdlib.h>
        void run_iter(int param) { if (param) abort(); }
    """)
    outcome = run("c", "", bench, iterations=3, param=1)
    assert outcome.returncode == -signal.SIGABRT
    assert outcome.document == b""


def test_benchmark_without_run_iter_is_a_usage_error(tmp_path):
    bench = build_c_benchmark(tmp_path, "int not_run_iter(void) { return 0; }\n")
    outcome = run("c", "", bench)
    assert outcome.returncode == 2
    assert "has no run_iter(int) symbol" in outcome.stderr
    assert outcome.document == b""


@pytest.mark.parametrize("args, message", [
    ([], "expected 4 arguments, got 0"),
    (["{bench}", "lots", "1", "0"], "iterations lots is not an integer"),
    (["{bench}", "0", "1", "0"], "iterations 0 is not an integer in 1.."),
    (["{bench}", "3", "1.5", "0"], "param 1.5 is not an integer"),
    (["{bench}", "3", "1", "2"], "debug flag must be 0 or 1"),
    (["/nonexistent/bench.so", "3", "1", "0"], "benchmark file /nonexistent/bench.so does not exist"),
    (["{notso}", "3", "1", "0"], "cannot load benchmark"),
])
def test_wrong_arguments_give_one_clear_error(tmp_path, args, message):
    bench = build_c_benchmark(tmp_path, COUNTING)
    notso = tmp_path / "plain.txt"
    notso.write_text("not a shared object")
    argv = [str(c_runner_path()), *(a.format(bench=bench, notso=notso) for a in args)]
    outcome = run_runner(argv, {})
    assert outcome.returncode == 2
    assert message in outcome.stderr
    assert outcome.document == b""


def test_missing_results_channel_is_reported(tmp_path):
    import subprocess

    bench = build_c_benchmark(tmp_path, COUNTING)
    proc = subprocess.run([str(c_runner_path()), str(bench), "1", "1", "0"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "results channel fd 3 is not open" in proc.stderr
    assert proc.stdout == ""  # the benchmark never ran

