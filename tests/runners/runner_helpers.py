"""Shared helpers for the runner tests: build benchmarks, run a runner, parse its document."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

from iteration_runners import runner_command
from iteration_runners.launch import RunnerOutcome, run_runner
from iteration_runners.protocol import parse_document
from real_parts import missing_real_part


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
    argv, env = runner_command(runner, executable, [], str(benchmark), iterations, param, debug)
    env.update(extra_env or {})
    for key in drop_env:
        env.pop(key, None)
    return run_runner(argv, env, timeout=120)


def check_success(outcome: RunnerOutcome, iterations: int) -> dict:
    assert outcome.returncode == 0, outcome.stderr
    doc = parse_document(outcome.document)
    assert len(doc["wallclock_times"]) == iterations
    if not doc["counters"]["available"]:
        assert doc["core_cycle_counts"] == doc["aperf_counts"] == doc["mperf_counts"] == []
    return doc
