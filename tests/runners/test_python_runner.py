"""The Python runner, run for real on tiny benchmarks (venv python and /usr/bin/python3)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from iteration_runners import PYTHON_RUNNER
from iteration_runners.protocol import parse_document
from runner_helpers import check_success, run, run_runner, supervisor_launch, write_python_benchmark

SYSTEM_PYTHON = "/usr/bin/python3"

COUNTING = """
    def run_iter(param):
        print("param", param)
        return sum(range(param * 1000))
"""


def interpreters():
    found = [pytest.param(sys.executable, id="venv-python")]
    if os.path.exists(SYSTEM_PYTHON) and os.path.realpath(SYSTEM_PYTHON) != os.path.realpath(sys.executable):
        found.append(pytest.param(SYSTEM_PYTHON, id="system-python"))
    else:
        found.append(pytest.param(SYSTEM_PYTHON, id="system-python", marks=pytest.mark.skip(
            reason=f"{SYSTEM_PYTHON} is missing or is the test interpreter itself; nothing extra to show")))
    return found


@pytest.mark.parametrize("python", interpreters())
def test_runs_benchmark_and_writes_a_valid_document(tmp_path, python):
    bench = write_python_benchmark(tmp_path, COUNTING)
    outcome = run("python", python, bench, iterations=7, param=3)
    doc = check_success(outcome, 7)
    assert all(0 < t < 5 for t in doc["wallclock_times"])
    # The benchmark's stdout is its own, not the results channel.
    assert outcome.stdout.splitlines() == ["param 3"] * 7


def test_runs_outside_the_venv_without_coldrun_on_sys_path(tmp_path):
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"{SYSTEM_PYTHON} not present on this machine")
    # The benchmark proves the runner did not leak coldrun's packages to it.
    bench = write_python_benchmark(tmp_path, """
        import importlib.util
        assert importlib.util.find_spec("supervisor") is None, "coldrun leaked onto sys.path"
        def run_iter(param):
            pass
    """)
    outcome = run("python", SYSTEM_PYTHON, bench, iterations=2, debug=True)
    check_success(outcome, 2)
    assert "libkruntime via extension" in outcome.stderr


def test_falls_back_to_ctypes_over_the_shared_library(tmp_path):
    bench = write_python_benchmark(tmp_path, COUNTING)
    outcome = run("python", sys.executable, bench, iterations=3, debug=True,
                  drop_env=("COLDRUN_KRUNTIME_EXTENSION",))
    check_success(outcome, 3)
    assert "libkruntime via ctypes" in outcome.stderr or "libkruntime via cffi" in outcome.stderr


def test_debug_writes_one_line_per_iteration_to_stderr(tmp_path):
    bench = write_python_benchmark(tmp_path, COUNTING)
    outcome = run("python", sys.executable, bench, iterations=4, debug=True)
    check_success(outcome, 4)
    assert sum("took" in line for line in outcome.stderr.splitlines()) == 4


def test_measures_the_benchmark_not_just_the_clock(tmp_path):
    bench = write_python_benchmark(tmp_path, """
        import time
        def run_iter(param):
            time.sleep(param / 1000.0)
    """)
    doc = check_success(run("python", sys.executable, bench, iterations=3, param=20), 3)
    assert all(0.019 < t < 1.0 for t in doc["wallclock_times"]), doc["wallclock_times"]


def test_counters_off_is_reported_not_zeroed(tmp_path):
    bench = write_python_benchmark(tmp_path, COUNTING)
    doc = check_success(run("python", sys.executable, bench, iterations=2,
                            extra_env={"COLDRUN_COUNTERS": "off"}), 2)
    assert doc["counters"] == {"available": False,
                               "reason": "per-core counters switched off (COLDRUN_COUNTERS=off)"}


def test_benchmark_cannot_write_into_the_results_channel(tmp_path):
    bench = write_python_benchmark(tmp_path, """
        import os
        def run_iter(param):
            try:
                os.write(3, b"garbage")
            except OSError:
                pass
    """)
    check_success(run("python", sys.executable, bench, iterations=2), 2)


@pytest.mark.parametrize("body, expected", [
    ("def run_iter(param):\n    raise ZeroDivisionError('boom in benchmark')\n", "ZeroDivisionError: boom in benchmark"),
    ("raise ImportError('broken import')\ndef run_iter(param):\n    pass\n", "ImportError: broken import"),
    ("import sys\ndef run_iter(param):\n    sys.exit(0)\n", "the benchmark called sys.exit(0)"),
])
def test_failing_benchmark_exits_nonzero_with_traceback_and_no_document(tmp_path, body, expected):
    bench = write_python_benchmark(tmp_path, body)
    outcome = run("python", sys.executable, bench, iterations=3)
    assert outcome.returncode == 1
    assert expected in outcome.stderr
    assert outcome.document == b""


def test_benchmark_without_run_iter_is_a_usage_error(tmp_path):
    bench = write_python_benchmark(tmp_path, "x = 1\n")
    outcome = run("python", sys.executable, bench)
    assert outcome.returncode == 2
    assert "has no run_iter(param) function" in outcome.stderr
    assert outcome.document == b""


def _raw(args: list[str], fd3: bool = True) -> subprocess.CompletedProcess:
    """Run the runner with hand-made argv (bypassing runner_command's own checks)."""
    if fd3:
        return run_runner([sys.executable, str(PYTHON_RUNNER), *args], {})
    return subprocess.run([sys.executable, str(PYTHON_RUNNER), *args], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("args, message", [
    ([], "expected 4 arguments, got 0"),
    (["b.py", "5", "1"], "expected 4 arguments, got 3"),
    (["{bench}", "many", "1", "0"], "iterations 'many' is not an integer"),
    (["{bench}", "0", "1", "0"], "iterations must be at least 1"),
    (["{bench}", "5", "x", "0"], "param 'x' is not an integer"),
    (["{bench}", "5", "1", "yes"], "debug flag must be 0 or 1"),
    (["/nonexistent/bench.py", "5", "1", "0"], "benchmark file /nonexistent/bench.py does not exist"),
])
def test_wrong_arguments_give_one_clear_error(tmp_path, args, message):
    bench = write_python_benchmark(tmp_path, COUNTING)
    outcome = _raw([a.format(bench=bench) for a in args])
    assert outcome.returncode == 2
    assert message in outcome.stderr
    assert "Traceback" not in outcome.stderr
    assert outcome.document == b""


def test_missing_results_channel_is_reported_before_running(tmp_path):
    marker = tmp_path / "ran"
    bench = write_python_benchmark(tmp_path, f"""
        open({str(marker)!r}, "w").close()
        def run_iter(param):
            pass
    """)
    proc = _raw([str(bench), "1", "1", "0"], fd3=False)
    assert proc.returncode == 2
    assert "results channel fd 3 is not open" in proc.stderr
    assert not marker.exists()


def test_missing_libkruntime_is_a_clear_error(tmp_path):
    bench = write_python_benchmark(tmp_path, COUNTING)
    outcome = run("python", sys.executable, bench,
                  drop_env=("COLDRUN_KRUNTIME_EXTENSION", "COLDRUN_LIBKRUNTIME"))
    assert outcome.returncode == 2
    assert "cannot load libkruntime" in outcome.stderr


@pytest.mark.parametrize("vm_args", [[], ["-I"]], ids=["plain", "isolated-mode"])
def test_benchmark_can_import_modules_beside_it(tmp_path, vm_args):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    bench = write_python_benchmark(tmp_path, """
        import helper_mod
        def run_iter(param):
            assert helper_mod.VALUE + param == 42
    """)
    argv, env = supervisor_launch("python", sys.executable, bench, 2, 1, vm_args=vm_args)
    outcome = run_runner(argv, env, base_env={})
    assert outcome.returncode == 0, outcome.stderr
    assert len(parse_document(outcome.document)["wallclock_times"]) == 2
