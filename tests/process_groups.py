"""Process groups a test starts and must not outlive it (qemu guests above all): killed at teardown,
and also when the test run itself is interrupted or killed.

Fixture finalizers kill a group at teardown, but a test process killed with SIGKILL (a timeout, an xdist
worker shut down) runs none.  So three nets, each enough alone for its case:

- ``dies_with_us(argv)``: the child gets SIGKILL from the kernel when the process that started it dies
  (util-linux ``setpriv --pdeathsig``, which execs the command: no preexec_fn, safe beside threads);
- ``register(pid)``: each group leader is written to a registry directory with its owner; every
  session's start (``sweep_orphans``) kills the groups whose owner is gone;
- ``kill_own_groups`` on SIGTERM (passed on to child processes: xdist's controller to its workers)
  and at exit (``install_exit_nets``).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
from pathlib import Path

import psutil

# One directory per user, shared by every test run on the machine (each file names its owner, so a
# run sweeps only groups whose owning test process is dead, never another live run's).
REGISTRY = Path(os.environ.get("COLDRUN_TEST_GROUPS", f"/tmp/coldrun-test-groups-{os.getuid()}"))


def dies_with_us(argv: list[str]) -> list[str]:
    """``argv`` run so that it is SIGKILLed when this process dies (as is, where setpriv is missing)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


def _started(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def register(pid: int) -> None:
    """``pid`` leads a process group (start_new_session=True) that this test process owns."""
    REGISTRY.mkdir(mode=0o700, parents=True, exist_ok=True)
    entry = {"pid": pid, "started": _started(pid), "owner": os.getpid(), "owner_started": _started(os.getpid())}
    (REGISTRY / f"{pid}.json").write_text(json.dumps(entry))


def kill_group(pid: int) -> None:
    """SIGKILL ``pid``'s group if ``pid`` is still the process registered (a reused pid, or one never
    registered, is spared), and forget it."""
    path = REGISTRY / f"{pid}.json"
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        entry = None
    if entry is not None and entry["started"] is not None and entry["started"] == _started(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    path.unlink(missing_ok=True)


def _entries():
    if not REGISTRY.is_dir():
        return
    for path in REGISTRY.glob("*.json"):
        try:
            yield json.loads(path.read_text())
        except (OSError, ValueError):
            continue


def sweep_orphans() -> list[int]:
    """Kill the registered groups whose owning test process is gone; return their pids."""
    swept = []
    for entry in _entries():
        if _started(entry["owner"]) != entry["owner_started"]:
            if entry["started"] is not None and _started(entry["pid"]) == entry["started"]:
                swept.append(entry["pid"])
            kill_group(entry["pid"])
    return swept


def kill_own_groups() -> None:
    me = os.getpid()
    for entry in list(_entries()):
        if entry["owner"] == me:
            kill_group(entry["pid"])


def install_exit_nets() -> None:
    """At exit and on SIGTERM, kill this process's registered groups (SIGTERM then ends it as before)."""
    atexit.register(kill_own_groups)
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum, frame):
        kill_own_groups()
        for child in psutil.Process().children():   # the controller's xdist workers, a test's commands
            try:
                child.terminate()
            except psutil.Error:
                pass
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
