"""The run's memory cgroup (supervisor/launch/memory_limit.py) on cgroup v2's files, as
Documentation/admin-guide/cgroup-v2.rst names them (a directory stands in for the execution's cgroup;
tests/integration/test_containment.py runs the real thing on whichever hierarchy this machine has)."""

from supervisor.launch.memory_limit import MemoryBound, memory_v1_mount


def test_cgroup2_gets_memory_max_and_no_swap_and_reads_the_oom_kills(tmp_path):
    for name in ("memory.max", "memory.swap.max"):
        (tmp_path / name).write_text("max\n")
    limit = MemoryBound(72 << 20, str(tmp_path), v1_mount="/nonexistent")
    assert (tmp_path / "memory.max").read_text() == str(72 << 20)
    assert (tmp_path / "memory.swap.max").read_text() == "0"
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n")
    (tmp_path / "memory.peak").write_text(f"{72 << 20}\n")
    reading = limit.reading()
    assert reading.as_dict() == {"mechanism": "cgroup2", "limit_bytes": 72 << 20, "swap_off": True, "hits": 12,
                                 "oom_kills": 1, "peak_bytes": 72 << 20}
    assert reading.hit and limit.close() is None


def test_without_a_memory_cgroup_the_record_says_why(tmp_path):
    reading = MemoryBound(72 << 20, str(tmp_path), v1_mount=str(tmp_path / "absent")).reading()
    assert reading.mechanism == "none" and "cannot make the memory cgroup" in reading.note and not reading.hit
    assert MemoryBound(None, str(tmp_path)).reading().note == "no heap_limit"


def test_v1_memory_hierarchy_found_in_mountinfo(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text("31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                    "35 31 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
                    "40 31 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
    assert memory_v1_mount(str(info)) == "/sys/fs/cgroup/memory"
    info.write_text("40 31 0:36 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n")
    assert memory_v1_mount(str(info)) is None
