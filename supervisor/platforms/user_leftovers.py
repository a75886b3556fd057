"""What a benchmark user leaves outside its home, removed before its account goes.

``userdel --remove`` takes the home only.  A fresh user may also create files
in the machine's world-writable directories (``/tmp``, ``/var/tmp``, which
survives reboots, ``/dev/shm``: POSIX shared memory, ``/dev/mqueue``: POSIX
message queues, the lock dirs) and System V IPC objects (shared memory,
message queues, semaphores).  Left there, a later execution's user could read
them, or, were its uid the same, own them.  So, while the uid is still known
and all the run's processes are gone, every entry that uid owns in those
directories (walked without following symlinks, not across file systems) and
every IPC object it owns (Linux lists them in /proc/sysvipc, OpenBSD's ipcs)
are removed.  Together with a uid never used twice in an experiment
(benchmark_user.py), each execution starts with none of an earlier benchmark
user's files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from supervisor.system import Commands

# Where an unprivileged account can create files besides its home: the world-writable directories
# a Linux (FHS, systemd's tmpfiles.d) or OpenBSD (hier(7)) system has.
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock", "/var/spool/uucppublic")
# /proc/sysvipc/<kind>: the owner's uid column (proc(5)); ipcrm's option per kind.
SYSV_IPC = {"shm": "-m", "msg": "-q", "sem": "-s"}
# ipcs(1) on OpenBSD (no /proc): one line per object under a "T ID KEY MODE OWNER GROUP" header, T being
# q, m or s, which is also ipcrm's option letter; OWNER is the owner's name (its uid when it has none).
IPCS_KINDS = {"q": "msg", "m": "shm", "s": "sem"}


def remove_files_of(uid: int, dirs: tuple[str, ...] = SHARED_DIRS) -> tuple[list[str], list[str]]:
    """Remove every entry owned by ``uid`` under ``dirs`` (a directory with all it holds); what was removed,
    and what of the uid's was nested too deep to reach (``MAX_DEPTH``) and so left.

    Root does this in directories other users can change while it works: a local user who owns a
    directory on the way can swap it for a symlink between any two calls.  So nothing is ever reached by
    path: each directory is opened with O_NOFOLLOW relative to the directory holding it, checked by
    fstat to be the one just looked at, and its entries are judged (fstatat) and removed (unlinkat)
    relative to that open descriptor; a swap then only makes an open fail, never a removal land
    elsewhere.  A top that is itself a symlink (/var/lock -> /run/lock on Debian) is skipped: its
    target is listed in its own right.
    """
    removed: list[str] = []
    left: list[str] = []
    for top in dirs:
        try:
            fd = os.open(top, _DIR_FLAGS)
        except OSError:
            continue
        _sweep(_Dir(fd, top, "", owned=False, names=iter(_list(fd))), uid, os.fstat(fd).st_dev, removed, left)
    return removed, left


# A directory is opened only as what it was when looked at: never through a symlink, never a device's.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
MAX_DEPTH = 256   # levels held open at once; deeper than that (a hostile tree) is left, and said so


@dataclass
class _Dir:
    fd: int
    path: str        # for the report alone; never used to reach anything
    name: str        # its entry in the directory below it on the stack
    owned: bool      # the uid's own directory: everything in it goes, with it
    names: Iterator[str]   # its entries, listed when it was opened


def _sweep(top: _Dir, uid: int, device: int, removed: list[str], left: list[str]) -> None:
    """Walk ``top`` depth first, one descriptor per level held, removing what ``uid`` owns."""
    stack = [top]
    while stack:
        here = stack[-1]
        name = next(here.names, None)
        if name is None:
            stack.pop()
            os.close(here.fd)
            if here.owned:
                _remove(stack[-1], here.name, here.path, removed, directory=True)
            continue
        try:
            st = os.stat(name, dir_fd=here.fd, follow_symlinks=False)
        except OSError:
            continue
        mine = here.owned or st.st_uid == uid
        path = os.path.join(here.path, name)
        if not stat.S_ISDIR(st.st_mode):
            if mine:
                _remove(here, name, path, removed, directory=False)
            continue
        if st.st_dev != device:
            continue        # another file system (a mount in a shared dir): not ours to walk
        if len(stack) >= MAX_DEPTH:
            if mine:
                left.append(path)
            continue
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=here.fd)
        except OSError:
            continue        # gone, or swapped for a symlink since the fstatat
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or (mine and not here.owned and now.st_uid != uid):
            os.close(fd)    # not the directory judged a moment ago
            continue
        stack.append(_Dir(fd, path, name, owned=mine, names=iter(_list(fd))))


def _list(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def _remove(parent: _Dir, name: str, path: str, removed: list[str], *, directory: bool) -> None:
    """unlinkat ``name`` in ``parent``'s open directory; reported when it is the top of what went."""
    try:
        if directory:
            os.rmdir(name, dir_fd=parent.fd)
        else:
            os.unlink(name, dir_fd=parent.fd)     # a symlink itself, never its target
    except OSError:
        return
    if not parent.owned:
        removed.append(path)


def remove_ipc_listed(uid: int, name: str, commands: Commands) -> list[str]:
    """Remove the System V IPC objects ``uid`` (account ``name``) owns, as ipcs lists them (OpenBSD);
    what was removed."""
    listing = commands.run(["ipcs"])
    if not listing.ok:
        return []
    removed = []
    for line in listing.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0] in IPCS_KINDS and fields[1].isdigit() and fields[4] in (name, str(uid)):
            if commands.run(["ipcrm", f"-{fields[0]}", fields[1]]).ok:
                removed.append(f"System V {IPCS_KINDS[fields[0]]} {fields[1]}")
    return removed


def remove_ipc_of(uid: int, commands: Commands, sysvipc: str = "/proc/sysvipc") -> list[str]:
    """Remove the System V IPC objects ``uid`` owns (Linux: listed in /proc/sysvipc); what was removed."""
    removed = []
    for kind, option in SYSV_IPC.items():
        try:
            lines = Path(sysvipc, kind).read_text().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        header = lines[0].split()
        if "uid" not in header:
            continue
        for line in lines[1:]:
            fields = line.split()
            if len(fields) == len(header) and fields[header.index("uid")] == str(uid):
                ident = fields[1]     # key, then the id ipcrm takes
                if commands.run(["ipcrm", option, ident]).ok:
                    removed.append(f"System V {kind} {ident}")
    return removed
