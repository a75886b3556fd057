"""Shared helpers for the runner tests: build benchmarks, run a runner as the supervisor does, parse its document.

Runners are launched by the supervisor's own process execution (supervisor/launch/process.py: fd 3 on a pipe,
containment, the 64 MiB results limit), so these tests exercise the launcher users run; a plain benchmark's argv
and environment come from the supervisor's runner_launch (supervisor/launch/runner_command.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

from iteration_runners.protocol import parse_document
from real_parts import missing_real_part
from supervisor.experiment.model import VM, Experiment, Variant
from supervisor.launch.process import run_process
from supervisor.launch.runner_command import runner_launch

# A test reads whole outputs (a failing runner's traceback, debug lines): keep far more than the supervisor's tails.
OUTPUT_BYTES = 16 << 20
BASE_ENV = {"PATH": "/usr/bin:/bin"}


@dataclass(frozen=True)
class RunnerOutcome:
    returncode: int    # negative: ended by that signal (as subprocess says it)
    stdout: str
    stderr: str
    document: bytes    # what the runner wrote to fd 3 (empty if nothing)


def run_runner(argv: list[str], env: dict[str, str], *, timeout: float | None = None,
               base_env: dict[str, str] | None = None) -> RunnerOutcome:
    """Run ``argv`` with ``base_env`` (default: a minimal PATH) plus ``env`` through the supervisor's launcher."""
    full_env = {**(BASE_ENV if base_env is None else base_env), **env}
    res = run_process(argv, full_env, cwd=os.getcwd(), heap_limit=None, stack_limit=None, timeout=timeout,
                      tail_bytes=OUTPUT_BYTES)
    if res.launch_error:
        raise RuntimeError(f"{argv[0]} could not be started: {res.launch_error}")
    if res.timed_out:
        raise TimeoutError(f"{argv[0]} did not finish within {timeout}s; stderr: {res.stderr.text()[-2000:]}")
    assert not res.results_oversize, "the results document exceeds the supervisor's limit"
    returncode = -res.signal if res.signal is not None else res.exit_code
    return RunnerOutcome(returncode, res.stdout.text(), res.stderr.text(), res.results)


def one_key_experiment(runner: str, executable: str, benchmark: Path, iterations: int, param: int,
                       vm_args: list[str] | tuple[str, ...] = ()) -> Experiment:
    """An experiment whose one key runs ``benchmark`` (its directory is the benchmark, Krun's layout)."""
    return Experiment(
        name="runner-test", executions=1, benchmarks_dir=str(benchmark.parent.parent),
        benchmarks={benchmark.parent.name: param}, variants={"default": Variant(target=benchmark.name)},
        vms={"vm": VM(runner=runner, executable=executable or None, args=list(vm_args), iterations=iterations,
                      variants=["default"])})


def supervisor_launch(runner: str, executable: str, benchmark: Path, iterations: int, param: int,
                      debug: bool = False, vm_args: list[str] | tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """The argv and environment the supervisor gives this benchmark's runner."""
    exp = one_key_experiment(runner, executable, benchmark, iterations, param, vm_args)
    launch = runner_launch(exp, benchmark.parent.parent, "runner-test.toml", benchmark.parent.name, "vm",
                           "default", home=str(benchmark.parent), debug=debug)
    return launch.argv, launch.env


def write_python_benchmark(directory: Path, body: str, name: str = "bench.py") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


def build_c_benchmark(directory: Path, body: str, name: str = "bench.so") -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        missing_real_part("no C compiler (cc/gcc) on PATH to build C benchmarks (apt-get install gcc)")
    src = directory / (name + ".c")
    src.write_text(textwrap.dedent(body))
    out = directory / name
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


def run(runner: str, executable: str, benchmark: Path, iterations: int = 5, param: int = 3,
        debug: bool = False, extra_env: dict[str, str] | None = None,
        drop_env: tuple[str, ...] = ()) -> RunnerOutcome:
    argv, env = supervisor_launch(runner, executable, benchmark, iterations, param, debug)
    env.update(extra_env or {})
    for key in drop_env:
        env.pop(key, None)
    return run_runner(argv, env, timeout=120, base_env={})


def check_success(outcome: RunnerOutcome, iterations: int) -> dict:
    assert outcome.returncode == 0, outcome.stderr
    doc = parse_document(outcome.document)
    assert len(doc["wallclock_times"]) == iterations
    if not doc["counters"]["available"]:
        assert doc["core_cycle_counts"] == doc["aperf_counts"] == doc["mperf_counts"] == []
    return doc
