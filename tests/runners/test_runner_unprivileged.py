"""Runners started as an unprivileged user with another interpreter, as the supervisor does.

The benchmark user is fresh and unprivileged: it cannot read root's home (where
a venv's interpreter may live) and may not open per-CPU perf events.  The
runners must still produce a wall-clock document, and the counter reason must
say that permission was the problem where it was.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from iteration_runners import runner_command
from iteration_runners.protocol import parse_document
from runner_helpers import build_c_benchmark, run_runner, write_python_benchmark

NOBODY = "65534"


@pytest.fixture
def shared_dir():
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) not installed")
    with tempfile.TemporaryDirectory(prefix="coldrun-runner-") as d:
        os.chmod(d, 0o755)
        yield Path(d)


def _as_nobody(argv: list[str], env: dict[str, str]):
    outcome = run_runner(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv],
                         env, base_env={"PATH": "/usr/bin:/bin"}, timeout=120)
    assert outcome.returncode == 0, outcome.stderr
    return parse_document(outcome.document)


def test_python_runner_as_nobody_with_system_python(shared_dir):
    if not os.path.exists("/usr/bin/python3"):
        pytest.skip("/usr/bin/python3 not present")
    bench = write_python_benchmark(shared_dir, "def run_iter(param):\n    return param * 2\n")
    bench.chmod(0o644)
    argv, env = runner_command("python", "/usr/bin/python3", [], str(bench), 3, 5, False)
    doc = _as_nobody(argv, env)
    assert len(doc["wallclock_times"]) == 3


def test_c_runner_as_nobody_explains_missing_counters(shared_dir):
    bench = build_c_benchmark(shared_dir, "void run_iter(int p) { (void)p; }\n")
    bench.chmod(0o755)
    argv, env = runner_command("c", "", [], str(bench), 3, 5, False)
    doc = _as_nobody(argv, env)
    assert len(doc["wallclock_times"]) == 3
    if not doc["counters"]["available"]:
        reason = doc["counters"]["reason"]
        paranoid = Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
        if "No such file or directory" not in reason.split(";")[0] and int(paranoid) > 0:
            assert "Permission denied" in reason and "perf_event_paranoid" in reason, reason
