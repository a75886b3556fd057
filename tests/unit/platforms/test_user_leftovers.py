"""Leftover removal as root in directories a hostile local user can change while it runs (issue 34, 1)."""

import ctypes
import os
import subprocess
import sys
import time

import pytest

from supervisor.platforms.user_leftovers import MAX_DEPTH, remove_files_of

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files other owners")

BENCH, LOCAL = 54331, 54332       # the benchmark user, and a local user who owns a directory it wrote into
FILES = 20_000                    # the probe's size: the old walk deleted 4,850 of root's 20,000

# The local user's swapper: renameat2(RENAME_EXCHANGE) of its directory and its symlink to root's, as fast
# as it can (glibc >= 2.28 has renameat2; the exchange is atomic, so the name is always one or the other).
# It opens the shared directory before it drops to the local user, as pytest's tmp dirs are root's 0700.
SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
shared = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[2]))
print("ready", flush=True)
n = 0
while True:
    if libc.renameat2(shared, b"work", shared, b"swap", RENAME_EXCHANGE) == 0:
        n += 1
        if n % 1000 == 0:
            print(n, flush=True)
"""


def _owned_files(directory, names, uid):
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = directory / name
        path.write_bytes(b"")
        os.lchown(path, uid, uid)


def test_a_directory_swapped_for_a_symlink_mid_walk_never_makes_root_delete_through_it(tmp_path):
    shared = tmp_path / "tmp"                  # /tmp's shape: 1777
    shared.mkdir()
    os.chmod(shared, 0o1777)
    names = [f"f{i}" for i in range(FILES)]
    target = tmp_path / "root-files"           # root's files, with the benchmark's names
    _owned_files(target, names, 0)
    work = shared / "work"                     # the local user's world-writable directory ...
    _owned_files(work, names, BENCH)           # ... that the benchmark user wrote into
    os.chown(work, LOCAL, LOCAL)
    os.chmod(work, 0o777)
    swap = shared / "swap"
    swap.symlink_to(target)
    os.lchown(swap, LOCAL, LOCAL)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(shared), str(LOCAL)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert swapper.stdout.readline() == "ready\n"
        for _ in range(3):
            remove_files_of(BENCH, (str(shared),))
        time.sleep(0.2)
    finally:
        swapper.kill()
        swapper.wait()
    swaps = int(([line for line in swapper.stdout.read().split() if line.isdigit()] or ["0"])[-1])
    assert swaps >= 1000, "the swapper never ran: the test proves nothing"
    if work.is_symlink():
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.renameat2(-100, bytes(work), -100, bytes(swap), 2) == 0
    assert sorted(os.listdir(target)) == sorted(names), \
        f"root deleted {FILES - len(os.listdir(target))} of its own files through the swapped symlink"
    removed, left = remove_files_of(BENCH, (str(shared),))      # the race over, the benchmark's files go
    assert os.listdir(work) == [] and left == []
    assert sorted(os.listdir(target)) == sorted(names)


def test_a_top_that_is_a_symlink_is_skipped(tmp_path):
    real = tmp_path / "run-lock"
    _owned_files(real, ["lock"], BENCH)
    (tmp_path / "var-lock").symlink_to(real)   # Debian's /var/lock -> /run/lock
    assert remove_files_of(BENCH, (str(tmp_path / "var-lock"),)) == ([], [])
    assert remove_files_of(BENCH, (str(real),)) == ([str(real / "lock")], [])


def test_a_tree_nested_deeper_than_the_limit_is_left_and_said(tmp_path):
    shared = tmp_path / "tmp"
    shared.mkdir()
    deep = shared / "deep"
    fd = os.open(shared, os.O_RDONLY)
    try:                                        # nested by descriptor: the path is longer than PATH_MAX
        for _ in range(MAX_DEPTH + 10):
            os.mkdir("d", dir_fd=fd)
            os.chown("d", BENCH, BENCH, dir_fd=fd, follow_symlinks=False)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("leaf", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    finally:
        os.close(fd)
    removed, left = remove_files_of(BENCH, (str(shared),))
    assert removed == [] and len(left) == 1 and left[0].startswith(str(shared / "d" / "d"))
    assert not deep.exists() and (shared / "d").is_dir()


def test_a_users_directory_holding_others_entries_goes_whole_and_links_only_as_links(tmp_path):
    shared = tmp_path / "tmp"
    outside = tmp_path / "outside"
    _owned_files(outside, ["keep"], 0)
    mine = shared / "mine"
    _owned_files(mine, ["a"], BENCH)
    (mine / "sub").mkdir()
    (mine / "sub" / "b").write_text("x")       # root's and another's entries in the user's directory go too
    (mine / "link").symlink_to(outside)
    os.chown(mine, BENCH, BENCH)
    removed, left = remove_files_of(BENCH, (str(shared),))
    assert removed == [str(mine)] and left == []
    assert os.listdir(outside) == ["keep"] and os.listdir(shared) == []
