"""Containment of one execution: every process a runner starts is found and killed at its end.

Preferred: a fresh cgroup v2 directory per execution.  The supervisor (root)
creates it and the forked child moves itself in before exec, so the runner and
everything it forks -- setsid daemons and double-fork escapees included -- stay
inside: an unprivileged runner cannot leave (that needs write access to the
cgroup.procs of a common ancestor).  With pinning the directory is a child of
the `coldrun.bench` cpuset partition, so the partition's cpuset governs it; a
pair's side narrows it to its own CPU (``place``, launch/cpuset.py).  At the end cgroup.kill (Linux >= 5.14; a
kill loop over cgroup.procs before that) ends them all and the directory goes.

Fallback, where no cgroup v2 is writable (simulated mode without root,
OpenBSD): the runner's process group plus every descendant of the supervisor
that appeared during the execution.  On Linux the supervisor first makes itself
a child subreaper (PR_SET_CHILD_SUBREAPER), so an escapee whose parent exits is
re-parented to the supervisor rather than to init and stays a descendant.  That
was chosen over a /proc scan by session or by an environment marker: a daemon
defeats the first with setsid, and the second needs a variable in the runner's
environment, which changes what is measured.  Without a subreaper an escapee
whose parent has exited is not found; the bounded output drain still keeps
it from hanging the supervisor.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import select
import signal
import sys
import time

import psutil

from supervisor.launch.cpuset import (REAL, CgroupFiles, Placement, PlacementAtEnd, affinity_of, effective_cpus,
                                      pin)
from supervisor.platforms.linux_facts import parse_cgroup2_mount

_PR_SET_CHILD_SUBREAPER = 36
_KILL_WAIT = 5.0          # seconds for killed processes to go
_ROUNDS = 5               # fallback kill rounds: a process forking while we kill is caught next round
CPU_WEIGHT_MAX = 10000


def cgroup2_mount(mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts)."""
    try:
        with open(mountinfo) as f:
            return parse_cgroup2_mount(f.read())
    except OSError:
        return None


def outrank(path: str) -> None:
    """The highest cpu.weight (10000, Documentation/admin-guide/cgroup-v2.rst), where the parent
    hands on the cpu controller: a sibling such as system.slice (100) never outranks the benchmark."""
    try:
        fd = os.open(os.path.join(path, "cpu.weight"), os.O_WRONLY)   # never created: cgroupfs makes it
    except FileNotFoundError:
        return   # no cpu controller here: tasks compete by nice alone
    try:
        os.write(fd, str(CPU_WEIGHT_MAX).encode())
    finally:
        os.close(fd)


def cgroup_members(path: str) -> list[int]:
    """Live processes in the cgroup and its descendants (zombies are no longer listed)."""
    pids: list[int] = []
    for dirpath, _, files in os.walk(path):
        if "cgroup.procs" in files:
            try:
                with open(os.path.join(dirpath, "cgroup.procs")) as f:
                    pids += [int(p) for p in f.read().split()]
            except OSError:   # removed while we walked
                pass
    return pids


def _populated(path: str) -> bool:
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            return "populated 1" in f.read().splitlines()
    except FileNotFoundError:
        return False


def kill_cgroup(path: str, wait: float = _KILL_WAIT) -> list[int]:
    """SIGKILL everything in the cgroup subtree and wait until it is empty; returns who was there."""
    found = cgroup_members(path)
    kill_file = os.path.join(path, "cgroup.kill")
    deadline = time.monotonic() + wait
    events = os.open(os.path.join(path, "cgroup.events"), os.O_RDONLY | os.O_CLOEXEC)
    poller = select.poll()
    poller.register(events, select.POLLPRI)   # the kernel signals each change of "populated"
    try:
        while _populated(path) and time.monotonic() < deadline:
            if os.path.exists(kill_file):
                with open(kill_file, "w") as f:
                    f.write("1")
            else:
                for pid in cgroup_members(path):
                    _kill(pid)
            poller.poll(50)
    finally:
        os.close(events)
    return found


def remove_cgroup(path: str, wait: float = _KILL_WAIT) -> None:
    """rmdir the (emptied) cgroup subtree, deepest first; EBUSY is retried until ``wait`` runs out."""
    deadline = time.monotonic() + wait
    for dirpath, _, _ in sorted(os.walk(path), key=lambda w: -w[0].count("/")):
        while True:
            try:
                os.rmdir(dirpath)
                break
            except FileNotFoundError:
                break
            except OSError as e:
                if e.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class CgroupContainment:
    """One execution in its own cgroup v2 directory."""

    kind = "cgroup"

    def __init__(self, path: str):
        os.mkdir(path)
        self.cgroup: str = path
        try:
            outrank(path)
            self._procs = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            os.rmdir(path)
            raise

    def runner_started(self, pid: int) -> None:
        """The cgroup holds the runner: nothing to note."""

    def place(self, cpu: int, files: CgroupFiles = REAL) -> Placement:
        """Before the runner is in it: its cpuset is that CPU, where the parent hands cpuset on
        (cpuset.PlacementError when the kernel disagrees)."""
        return pin(self.cgroup, cpu, files)

    def placement_at_end(self, runner_pid: int) -> PlacementAtEnd:
        """Where the runner (exited, unreaped) and what it left could run, and the cgroup's effective cpuset."""
        return PlacementAtEnd(affinity_of([runner_pid, *cgroup_members(self.cgroup)]), effective_cpus(self.cgroup))

    def enter(self) -> None:
        """In the forked child, before exec: move this process in (it is still root here)."""
        os.write(self._procs, str(os.getpid()).encode())

    def kill_all(self, runner_pid: int) -> int:
        """Kill everything still in the cgroup (the runner too, on timeout); how many besides the runner."""
        return len([p for p in kill_cgroup(self.cgroup) if p != runner_pid])

    def close(self) -> str | None:
        """Remove the cgroup; a failure is reported, not raised: the execution's record matters more."""
        os.close(self._procs)
        try:
            remove_cgroup(self.cgroup)
        except OSError as e:
            return f"cgroup {self.cgroup} not removed: {e.strerror}"
        return None


def become_subreaper() -> bool:
    """Orphaned descendants re-parent to this process, not init (Linux >= 3.4; not inherited by fork)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _identity(p: psutil.Process) -> tuple[int, float] | None:
    try:
        return p.pid, p.create_time()
    except psutil.Error:
        return None


# Runners in flight under the fallback: a pair's two sides run at once, and neither side's clean-up
# may take the other's runner (or its group) for a process its own runner left.
_IN_FLIGHT: set[int] = set()


class ProcessGroupContainment:
    """The runner's process group plus the supervisor's new descendants (see the module doc)."""

    kind = "process_group"
    cgroup = None
    _runner: int | None = None

    def runner_started(self, pid: int) -> None:
        self._runner = pid
        _IN_FLIGHT.add(pid)

    def __init__(self):
        self.subreaper = become_subreaper()
        self._me = psutil.Process()
        self._before = self._descendants()

    def _descendants(self) -> dict[tuple[int, float], psutil.Process]:
        found = {}
        for p in self._me.children(recursive=True):
            key = _identity(p)
            if key:
                found[key] = p
        return found

    def _left(self, runner_pid: int) -> dict[tuple[int, float], psutil.Process]:
        left = {k: p for k, p in self._descendants().items() if k not in self._before}
        for p in psutil.process_iter():   # group members no longer below us (no subreaper)
            try:
                if os.getpgid(p.pid) == runner_pid:
                    key = _identity(p)
                    if key:
                        left[key] = p
            except (ProcessLookupError, psutil.Error):
                pass
        others = _IN_FLIGHT - {runner_pid}
        return {k: p for k, p in left.items() if k[0] != runner_pid and not self._in_group(p, others)}

    @staticmethod
    def _in_group(p: psutil.Process, groups: set[int]) -> bool:
        try:
            return bool(groups) and os.getpgid(p.pid) in groups
        except (ProcessLookupError, psutil.Error):
            return False

    @staticmethod
    def _alive(found: dict[tuple[int, float], psutil.Process]) -> dict[tuple[int, float], psutil.Process]:
        alive = {}
        for k, p in found.items():
            try:
                if p.status() != psutil.STATUS_ZOMBIE:
                    alive[k] = p
            except psutil.Error:
                pass
        return alive

    def enter(self) -> None:
        """The child's own process group is set by the launcher itself."""

    def place(self, cpu: int, files: CgroupFiles = REAL) -> Placement:
        return Placement("affinity", note="no execution cgroup (process-group containment)")

    def placement_at_end(self, runner_pid: int) -> PlacementAtEnd:
        left = self._alive(self._left(runner_pid))
        return PlacementAtEnd(affinity_of([runner_pid, *(pid for pid, _ in left)]))

    def kill_all(self, runner_pid: int) -> int:
        """Kill the group and the new descendants, reaping those re-parented to us; how many besides the runner."""
        # Counted before the group is killed: a group member killed by killpg is a zombie by the first
        # round, and counting only what a round still finds alive missed every one of them.
        killed = set(self._alive(self._left(runner_pid)))
        try:
            os.killpg(runner_pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for _ in range(_ROUNDS):
            left = self._left(runner_pid)
            alive = self._alive(left)
            for p in alive.values():
                try:
                    p.kill()           # psutil checks the create time: no reused pid is hit
                except psutil.Error:
                    pass
            killed |= alive.keys()
            # psutil.wait_procs reaps our own children (zombies re-parented to the subreaper included)
            psutil.wait_procs(list(left.values()), timeout=_KILL_WAIT)
            if not alive:
                break
        return len(killed)

    def close(self) -> str | None:
        _IN_FLIGHT.discard(self._runner)
        return None


def open_containment(parent: str | None = None) -> tuple[CgroupContainment | ProcessGroupContainment, str]:
    """A cgroup under ``parent`` (default: the cgroup v2 root) if one can be made, else the fallback; and why."""
    mount = cgroup2_mount()
    if mount is None and parent is None:
        return ProcessGroupContainment(), "no cgroup v2 is mounted"
    base = parent or mount
    assert base is not None     # neither: returned above
    path = os.path.join(base, f"coldrun.exec-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        return CgroupContainment(path), f"cgroup {path}"
    except OSError as e:
        return ProcessGroupContainment(), f"cannot make cgroup {path}: {e.strerror}"
