"""The crash-test hooks: a kill at a named point, and a hold that waits there for a power cut."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from supervisor.boot.crash_points import HOLD_ENV, HOLD_MESSAGE, PAUSE_ENV

PROGRAM = "from supervisor.boot.crash_points import pause_point as p; p('append-intent', 2); p('append-written', 3); print('passed')"


def run(env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=timeout)


def test_no_hook_passes_every_point():
    assert run({}).stdout == "passed\n"


def test_pause_kills_at_the_named_point_and_boot_only():
    assert run({PAUSE_ENV: "append-written@3"}).returncode == -signal.SIGKILL
    assert run({PAUSE_ENV: "append-written@4"}).stdout == "passed\n"   # another boot
    assert run({PAUSE_ENV: "append-intent"}).returncode == -signal.SIGKILL


def test_hold_says_so_and_waits_there():
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM], env={**os.environ, HOLD_ENV: "append-written@3"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert line.startswith(f"{HOLD_MESSAGE} append-written (boot 3)")
        time.sleep(0.5)
        assert proc.poll() is None   # still held, not past the point
    finally:
        proc.kill()
        proc.wait()
    assert run({HOLD_ENV: "append-written@2"}).stdout == "passed\n"
