"""A cgroup v2 hierarchy in memory that answers supervisor.launch.cpuset's reads and writes as the kernel would.

Kept rules (Documentation/admin-guide/cgroup-v2.rst): a cgroup's
``cgroup.controllers`` is its parent's ``cgroup.subtree_control`` (the root's is
what the hierarchy has); a controller can be enabled in subtree_control only if
it is in the cgroup's own controllers, and disabled only while no child still
enables it; cpuset files exist in non-root cgroups whose parent enables cpuset;
``cpuset.cpus.effective`` is cpuset.cpus within the parent's effective CPUs, or
the parent's when that is empty (or the cpus were never set).
"""

from __future__ import annotations

import errno
import os


class FakeCgroupFs:
    def __init__(self, mount: str = "/sys/fs/cgroup", controllers: tuple[str, ...] = ("cpuset", "cpu", "memory"),
                 cpus: set[int] | None = None, refuse_writes: bool = False):
        self.mount = mount
        self.controllers = set(controllers)
        self.online = set(cpus if cpus is not None else {0, 1, 2, 3})
        self.subtree: dict[str, set[str]] = {mount: set()}
        self.cpus: dict[str, set[int]] = {}
        self.refuse_writes = refuse_writes
        self.writes: list[tuple[str, str]] = []

    def mkdir(self, path: str) -> str:
        assert os.path.dirname(path) in self.subtree, path
        self.subtree[path] = set()
        return path

    def _own_controllers(self, cg: str) -> set[str]:
        return self.controllers if cg == self.mount else self.subtree[os.path.dirname(cg)]

    def _has_cpuset_files(self, cg: str) -> bool:
        return cg != self.mount and "cpuset" in self.subtree[os.path.dirname(cg)]

    def effective(self, cg: str) -> set[int]:
        if cg == self.mount or not self._has_cpuset_files(cg):
            return self.online if cg == self.mount else self.effective(os.path.dirname(cg))
        parent = self.effective(os.path.dirname(cg))
        return (self.cpus.get(cg, set()) & parent) or parent

    def read(self, path: str) -> str | None:
        cg, name = os.path.split(path)
        if cg not in self.subtree:
            return None
        if name == "cgroup.controllers":
            return " ".join(sorted(self._own_controllers(cg))) + "\n"
        if name == "cgroup.subtree_control":
            return " ".join(sorted(self.subtree[cg])) + "\n"
        if name in ("cpuset.cpus", "cpuset.cpus.effective") and self._has_cpuset_files(cg):
            shown = self.cpus.get(cg, set()) if name == "cpuset.cpus" else self.effective(cg)
            return ",".join(map(str, sorted(shown))) + "\n"
        return None

    def write(self, path: str, text: str) -> None:
        cg, name = os.path.split(path)
        if self.refuse_writes:
            raise PermissionError(errno.EACCES, "Permission denied")
        if cg not in self.subtree or self.read(path) is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        self.writes.append((path, text))
        if name == "cgroup.subtree_control":
            sign, controller = text[0], text[1:]
            if sign == "+":
                if controller not in self._own_controllers(cg):
                    raise OSError(errno.ENOENT, "No such file or directory")
                self.subtree[cg].add(controller)
            else:
                children = [c for c in self.subtree if os.path.dirname(c) == cg and c != cg]
                if any(controller in self.subtree[c] for c in children):
                    raise OSError(errno.EBUSY, "Device or resource busy")
                self.subtree[cg].discard(controller)
        elif name == "cpuset.cpus":
            self.cpus[cg] = {int(c) for c in text.split(",") if c.strip()}
        else:
            raise AssertionError(f"the double does not model writes to {name}")
