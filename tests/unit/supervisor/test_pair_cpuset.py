"""A pair side's cgroup v2 cpuset (supervisor/launch/cpuset.py) against the in-memory kernel of tests/cgroup_doubles.py,
and the affinity fallback on this host through the real launcher."""

from __future__ import annotations

import os
import sys

import pytest

from cgroup_doubles import FakeCgroupFs
from supervisor.launch.cpuset import Placement, PlacementError, PlacementRequest, delegated, pin
from supervisor.launch.process import run_process

MOUNT = "/sys/fs/cgroup"


def test_cpuset_is_handed_down_for_the_run_and_each_side_gets_one_cpu_verified():
    fs = FakeCgroupFs(MOUNT)
    part = fs.mkdir(f"{MOUNT}/coldrun.bench")
    with delegated(MOUNT, part, fs) as why:
        assert why is None
        assert fs.read(f"{MOUNT}/cgroup.subtree_control").split() == ["cpuset"]
        assert fs.read(f"{part}/cgroup.subtree_control").split() == ["cpuset"]
        a, b = fs.mkdir(f"{part}/exec-a"), fs.mkdir(f"{part}/exec-b")
        assert pin(a, 2, fs) == Placement("cpuset", [2])
        assert pin(b, 3, fs) == Placement("cpuset", [3])
        assert fs.effective(a) == {2} and fs.effective(b) == {3}
        del fs.subtree[a], fs.subtree[b]          # the execution cgroups are removed before the pair ends
    # what was enabled is disabled again, deepest first
    assert fs.writes[-2:] == [(f"{part}/cgroup.subtree_control", "-cpuset"),
                              (f"{MOUNT}/cgroup.subtree_control", "-cpuset")]
    assert fs.read(f"{MOUNT}/cgroup.subtree_control").strip() == ""


def test_a_controller_already_handed_down_is_left_as_it_was():
    fs = FakeCgroupFs(MOUNT)
    fs.subtree[MOUNT].add("cpuset")        # systemd enables it at the root
    with delegated(MOUNT, MOUNT, fs) as why:
        assert why is None
        assert pin(fs.mkdir(f"{MOUNT}/exec"), 1, fs).mechanism == "cpuset"
    assert fs.writes == [(f"{MOUNT}/exec/cpuset.cpus", "1")]
    assert "cpuset" in fs.subtree[MOUNT]


def test_without_a_cpuset_controller_the_side_is_placed_by_affinity_and_says_why():
    fs = FakeCgroupFs("/sys/fs/cgroup/unified", controllers=("memory", "pids"))    # hybrid host: cpuset is v1's
    with delegated(fs.mount, fs.mount, fs) as why:
        assert why == "cgroup v2 at /sys/fs/cgroup/unified has no cpuset controller"
        placed = pin(fs.mkdir(f"{fs.mount}/exec"), 1, fs)
    assert placed.mechanism == "affinity" and placed.effective_cpus is None and "no cpuset files" in placed.note
    assert fs.writes == []
    with delegated(None, "/", fs) as why:
        assert why == "no cgroup v2 is mounted"


def test_a_refused_enable_is_a_reason_not_an_error_and_leaves_nothing_enabled():
    fs = FakeCgroupFs(MOUNT, refuse_writes=True)
    with delegated(MOUNT, MOUNT, fs) as why:
        assert why == f"cannot enable cpuset for {MOUNT}: Permission denied"
    assert fs.subtree[MOUNT] == set()


def test_a_cpu_outside_the_parents_cpus_is_refused_before_the_runner_starts():
    fs = FakeCgroupFs(MOUNT, cpus={0, 1, 2, 3})
    part = fs.mkdir(f"{MOUNT}/coldrun.bench")
    with delegated(MOUNT, part, fs):
        fs.cpus[part] = {2, 3}                    # the partition
        side = fs.mkdir(f"{part}/exec")
        with pytest.raises(PlacementError, match=r"cpuset.cpus is 0 but cpuset.cpus.effective is 2,3"):
            pin(side, 0, fs)


def test_on_this_host_the_launcher_says_how_the_runner_was_placed(tmp_path):
    """Whatever this host offers (cpuset in a writable cgroup v2 or not), the placement is reported and holds."""
    placed: list[Placement] = []
    cpu = sorted(os.sched_getaffinity(0))[-1]     # one this process may use
    res = run_process([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"], {},
                      cwd=str(tmp_path), heap_limit=None, stack_limit=None, timeout=30,
                      placement=PlacementRequest(cpu, on_placed=placed.append))
    assert res.exit_code == 0 and res.stdout.text().strip() == f"[{cpu}]"
    assert len(placed) == 1
    if placed[0].mechanism == "cpuset":
        assert placed[0].effective_cpus == [cpu]
    else:
        assert placed[0].note, placed


class _MisplacedBox:
    """An execution cgroup whose cpuset the kernel does not honour (what cpuset.pin raises then)."""
    kind, cgroup, closed = "cgroup", "/sys/fs/cgroup/exec", False

    def place(self, cpu):
        raise PlacementError(f"{self.cgroup}: cpuset.cpus is {cpu} but cpuset.cpus.effective is 2-3")

    def close(self):
        self.closed = True
        return None


def test_a_cpuset_the_kernel_does_not_honour_is_a_launch_error_and_nothing_starts(tmp_path, monkeypatch):
    box = _MisplacedBox()
    monkeypatch.setattr("supervisor.launch.process.open_containment", lambda parent: (box, "cgroup " + box.cgroup))
    started = []
    marker = tmp_path / "ran"
    res = run_process([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], {}, cwd=str(tmp_path), heap_limit=None,
                      stack_limit=None, timeout=30, placement=PlacementRequest(0), on_started=lambda *a: started.append(a))
    assert res.launch_error == "cpuset placement: /sys/fs/cgroup/exec: cpuset.cpus is 0 but cpuset.cpus.effective is 2-3"
    assert box.closed and started == [] and not marker.exists()
