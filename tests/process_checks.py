"""Shared checks for tests with real processes: is a pid gone, and an unrelated process group to spare."""

from __future__ import annotations

import subprocess
import sys

import pytest


def gone(pid: int) -> bool:
    """Dead: no such process, or a zombie its new parent has not reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def bystander():
    """An unrelated process leading its own process group, as a reused pid would."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    yield p
    p.kill()
    p.wait()
