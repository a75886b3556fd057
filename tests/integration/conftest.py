"""Fixtures for the supervisor integration tests (helpers live in coldrun_helpers.py)."""

import shutil
import subprocess

import pytest
from filelock import FileLock

from coldrun_helpers import REPO, make_experiment
from real_parts import missing_real_part


@pytest.fixture
def exp_factory(tmp_path):
    def make(behaviours, **kw):
        return make_experiment(tmp_path, behaviours, **kw)
    return make


@pytest.fixture(scope="module")
def demo_built():
    """configs/demo's C benchmarks built (make), and the C iteration runner present."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        missing_real_part("no C compiler: the demo's C benchmarks cannot be built (apt-get install gcc make)")
    with FileLock(REPO / "configs" / "demo" / ".make.lock"):   # xdist workers: one make at a time
        p = subprocess.run(["make", "-s", "-C", str(REPO / "configs" / "demo")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    if not (REPO / "iteration_runners" / "c" / "iterations_runner").is_file():
        missing_real_part("C iteration runner not built (scripts/setup builds it)")
