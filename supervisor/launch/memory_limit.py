"""The execution's memory limit, by cgroup: every process of the run together, swap off for them.

RLIMIT_DATA (the experiment's heap_limit) bounds each process's private data
alone: a shared mapping, a /dev/shm file or a second process is outside it.
So the run's memory cgroup gets the same bound for everything its processes
charge (anonymous and shared memory, tmpfs pages they write): ``heap_limit +
stack_limit``, what the rlimits allow one process's own memory, and no swap,
so a run over it is killed by the kernel's OOM killer rather than slowed by
paging.  Which cgroup:

- cgroup v2: the execution's own cgroup (launch/containment.py), where its parent hands on the
  memory controller: ``memory.max``, ``memory.swap.max`` = 0; ``memory.events`` says afterwards
  how often usage reached the limit (``max``) and how many processes the OOM killer ended
  (``oom_kill``).
- a cgroup v1 memory hierarchy (a hybrid host, where memory is bound to v1): a cgroup of the run's
  own there, which the child enters before exec as it enters the v2 one; ``memory.limit_in_bytes``,
  ``memory.memsw.limit_in_bytes`` (the same: no swap, where swap accounting is on);
  ``memory.failcnt`` and ``memory.oom_control``'s ``oom_kill`` afterwards.
- neither: the rlimits alone, and the record says why.

What was set and seen goes into the record (``MemoryReading``); an execution the
OOM killer reached is flagged ``memory_limit``.
"""

from __future__ import annotations

import errno
import os
import secrets
import time
from dataclasses import dataclass

LIMIT_FLAG = "memory_limit"
_RMDIR_WAIT = 5.0


@dataclass
class MemoryReading:
    """The record's ``memory_limit``: how the run's memory was bounded and what the kernel counted."""

    mechanism: str                    # "cgroup2", "cgroup1" or "none"
    limit_bytes: int | None = None
    swap_off: bool | None = None      # None: the cgroup has no swap file to set (no swap accounting)
    hits: int | None = None           # times usage reached the limit (v2 memory.events max, v1 failcnt)
    oom_kills: int | None = None      # processes the OOM killer ended in the run's cgroup
    peak_bytes: int | None = None     # the most the run's cgroup used (memory.peak, max_usage_in_bytes)
    note: str | None = None           # none: why; otherwise what could not be set

    @property
    def hit(self) -> bool:
        return bool(self.oom_kills)

    def as_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if v is not None}


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(text)
        return True
    except OSError:
        return False


def _keyed(text: str | None) -> dict[str, int]:
    """"name N" lines (memory.events, memory.oom_control) as a dict."""
    out = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def memory_v1_mount(mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """Where a cgroup v1 hierarchy with the memory controller is mounted (proc(5): type "cgroup", the
    controllers among the super options after the " - " separator)."""
    text = _read(mountinfo) or ""
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = tail.split()
        if sep and fields[:1] == ["cgroup"] and len(fields) >= 3 and "memory" in fields[2].split(","):
            return head.split()[4].replace("\\040", " ")
    return None


class MemoryBound:
    """The bound on one execution's memory; ``enter`` in the forked child, ``reading`` once it ended."""

    def __init__(self, limit: int | None, cgroup2: str | None, v1_mount: str | None = None):
        self.limit = limit
        self.v2: str | None = None
        self.v1: str | None = None
        self._procs: int | None = None
        self.swap_off: bool | None = None
        self.why: str | None = None
        if limit is None:
            self.why = "no heap_limit"
            return
        if cgroup2 is not None and os.path.exists(os.path.join(cgroup2, "memory.max")):
            if _write(os.path.join(cgroup2, "memory.max"), str(limit)):
                self.v2 = cgroup2
                swap = os.path.join(cgroup2, "memory.swap.max")
                self.swap_off = _write(swap, "0") if os.path.exists(swap) else None
                return
        mount = v1_mount if v1_mount is not None else memory_v1_mount()
        if mount is None:
            self.why = ("no cgroup has the memory controller (cgroup v2: the execution's cgroup has no memory.max; "
                        "no cgroup v1 memory hierarchy): bounded by RLIMIT_DATA and RLIMIT_STACK per process only")
            return
        path = os.path.join(mount, f"coldrun.exec-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.mkdir(path)
        except OSError as e:
            self.why = f"cannot make the memory cgroup {path}: {e.strerror}"
            return
        if not _write(os.path.join(path, "memory.limit_in_bytes"), str(limit)):
            os.rmdir(path)
            self.why = f"cannot set {path}/memory.limit_in_bytes"
            return
        memsw = os.path.join(path, "memory.memsw.limit_in_bytes")
        self.swap_off = _write(memsw, str(limit)) if os.path.exists(memsw) else None
        self.v1 = path
        self._procs = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)

    def enter(self) -> None:
        """In the forked child, before exec (still root): into the v1 memory cgroup (v2: the containment's)."""
        if self._procs is not None:
            os.write(self._procs, str(os.getpid()).encode())

    def reading(self) -> MemoryReading:
        """What was set and what the kernel counted; call once the run's processes are gone."""
        if self.v2 is not None:
            events = _keyed(_read(os.path.join(self.v2, "memory.events")))
            return MemoryReading("cgroup2", self.limit, self.swap_off, events.get("max"), events.get("oom_kill"),
                                 _int(_read(os.path.join(self.v2, "memory.peak"))))
        if self.v1 is not None:
            oom = _keyed(_read(os.path.join(self.v1, "memory.oom_control")))
            return MemoryReading("cgroup1", self.limit, self.swap_off,
                                 _int(_read(os.path.join(self.v1, "memory.failcnt"))), oom.get("oom_kill"),
                                 _int(_read(os.path.join(self.v1, "memory.max_usage_in_bytes"))))
        return MemoryReading("none", self.limit, note=self.why)

    def close(self) -> str | None:
        """Remove the v1 cgroup (its processes already killed); a problem is reported, not raised."""
        if self._procs is not None:
            os.close(self._procs)
            self._procs = None
        if self.v1 is None:
            return None
        deadline = time.monotonic() + _RMDIR_WAIT
        while True:
            try:
                os.rmdir(self.v1)
                return None
            except FileNotFoundError:
                return None
            except OSError as e:
                if e.errno != errno.EBUSY or time.monotonic() > deadline:
                    return f"memory cgroup {self.v1} not removed: {e.strerror}"
                time.sleep(0.01)
