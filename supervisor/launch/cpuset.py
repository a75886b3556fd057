"""A pair side's CPU by cgroup v2 cpuset: its execution cgroup gets ``cpuset.cpus`` = that one CPU.

The kernel then keeps the runner and everything it forks on that CPU whatever
they do with sched_setaffinity, which affinity alone cannot promise.  A cgroup
has cpuset files only when its parent lists ``cpuset`` in
``cgroup.subtree_control``, and the parent only when its own parent does, and so
on up from the cgroup v2 root: ``delegated`` enables it where it is missing, for
the pair's whole run (both sides' cgroups share the parent, so it is not per
side), and disables again exactly what it enabled.  ``pin`` writes the CPU and
reads ``cpuset.cpus.effective`` back before the runner starts.

Where cgroup v2 lacks the cpuset controller (a hybrid host whose cpuset is bound
to v1) or cannot be written, the side is placed by affinity alone, and the
record says so.  All file access goes through ``CgroupFiles`` so tests can play
the kernel (tests/cgroup_doubles.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, Protocol

from supervisor.cpulist import parse_cpulist

CPUSET = "cpuset"
Mechanism = Literal["cpuset", "affinity"]


class CgroupFiles(Protocol):
    def read(self, path: str) -> str | None:
        """The file's text, None when it cannot be read (absent, no such controller)."""

    def write(self, path: str, text: str) -> None:
        """Write ``text``; OSError as the kernel refuses it."""


class RealCgroupFiles:
    def read(self, path: str) -> str | None:
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return None

    def write(self, path: str, text: str) -> None:
        with open(path, "w") as f:
            f.write(text)


REAL = RealCgroupFiles()


@dataclass(frozen=True)
class Placement:
    """How a side was kept on its CPU: ``cpuset`` (``effective_cpus`` read back) or ``affinity`` (``note``: why)."""

    mechanism: Mechanism
    effective_cpus: list[int] | None = None
    note: str | None = None


@dataclass(frozen=True)
class PlacementAtEnd:
    """Where a placed run could run when it ended (read before its leftovers are killed): the union of the
    CPU affinities of the runner (exited, not yet reaped) and of every process still in its containment,
    and its cgroup's ``cpuset.cpus.effective`` (None: no cpuset).  A thread that widened its affinity and
    ended before the runner is not seen; a cpuset bounds it anyway."""

    affinity_cpus: list[int]
    effective_cpus: list[int] | None = None

    def widened(self, cpu: int) -> bool:
        return self.affinity_cpus != [cpu] or self.effective_cpus not in (None, [cpu])


@dataclass(frozen=True)
class PlacementRequest:
    """Keep a runner on ``cpu``; ``on_placed`` hears how (a pair side's record says it), ``on_ended`` where it
    could run at its end."""

    cpu: int
    on_placed: Callable[[Placement], None] | None = None
    on_ended: Callable[[PlacementAtEnd], None] | None = None


def affinity_of(pids: list[int]) -> list[int]:
    """The union of these processes' CPU affinities (a process gone meanwhile is left out)."""
    cpus: set[int] = set()
    for pid in pids:
        try:
            cpus |= os.sched_getaffinity(pid)
        except OSError:
            pass
    return sorted(cpus)


def effective_cpus(cgroup: str, files: CgroupFiles = REAL) -> list[int] | None:
    """The cgroup's cpuset.cpus.effective; None when it has no cpuset files."""
    if files.read(os.path.join(cgroup, "cpuset.cpus")) is None:
        return None
    return sorted(parse_cpulist(files.read(os.path.join(cgroup, "cpuset.cpus.effective")) or ""))


class PlacementError(Exception):
    """The cpuset was written but the kernel does not run the cgroup on the wanted CPU (one line)."""


def _listed(files: CgroupFiles, path: str) -> bool:
    return CPUSET in (files.read(path) or "").split()


def _chain(mount: str, parent: str) -> list[str]:
    """The cgroups from the v2 root down to ``parent``, both included."""
    rel = os.path.relpath(parent, mount)
    if rel.startswith(".."):
        raise ValueError(f"{parent} is not under the cgroup v2 mount {mount}")
    parts = [] if rel == "." else rel.split(os.sep)
    return [os.path.join(mount, *parts[:i]) for i in range(len(parts) + 1)]


@contextmanager
def delegated(mount: str | None, parent: str, files: CgroupFiles = REAL) -> Iterator[str | None]:
    """While open, children of ``parent`` have cpuset files; yields None then, else why not.

    Enables +cpuset in each ``cgroup.subtree_control`` from the root down that
    lacks it; on exit disables those, deepest first (a parent cannot drop a
    controller its child still hands on)."""
    if mount is None:
        yield "no cgroup v2 is mounted"
        return
    if not _listed(files, os.path.join(mount, "cgroup.controllers")):
        yield f"cgroup v2 at {mount} has no cpuset controller"
        return
    enabled: list[str] = []
    why = None
    try:
        for cg in _chain(mount, parent):
            control = os.path.join(cg, "cgroup.subtree_control")
            if not _listed(files, control):
                files.write(control, f"+{CPUSET}")
                enabled.append(control)
    except (OSError, ValueError) as e:
        why = f"cannot enable cpuset for {parent}: {getattr(e, 'strerror', None) or e}"
    try:
        yield why
    finally:
        for control in reversed(enabled):
            try:
                files.write(control, f"-{CPUSET}")
            except OSError:     # still in use (another execution's child): leave it, as systemd would
                pass


def pin(cgroup: str, cpu: int, files: CgroupFiles = REAL) -> Placement:
    """Restrict ``cgroup`` (still empty) to ``cpu`` and verify; affinity Placement when it has no cpuset files.

    PlacementError when the kernel's effective set is not exactly ``{cpu}``
    (the CPU is outside the parent's, e.g. not in the pinning partition)."""
    cpus_file = os.path.join(cgroup, "cpuset.cpus")
    if files.read(cpus_file) is None:
        return Placement("affinity", note=f"{cgroup} has no cpuset files")
    try:
        files.write(cpus_file, str(cpu))
    except OSError as e:
        raise PlacementError(f"cannot set {cpus_file} to {cpu}: {e.strerror or e}") from None
    text = files.read(os.path.join(cgroup, "cpuset.cpus.effective"))
    effective = effective_cpus(cgroup, files) or []
    if effective != [cpu]:
        raise PlacementError(f"{cgroup}: cpuset.cpus is {cpu} but cpuset.cpus.effective is "
                             f"{text.strip() if text else '(unreadable)'}")
    return Placement("cpuset", effective)
