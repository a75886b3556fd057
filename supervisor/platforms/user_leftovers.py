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
import shutil
import stat
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


def remove_files_of(uid: int, dirs: tuple[str, ...] = SHARED_DIRS) -> list[str]:
    """Remove every entry owned by ``uid`` under ``dirs`` (a directory with all it holds); what was removed."""
    removed: list[str] = []
    for top in dirs:
        try:
            device = os.lstat(top).st_dev
        except OSError:
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            keep = []
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if st.st_uid == uid:
                    if stat.S_ISDIR(st.st_mode):
                        shutil.rmtree(path, ignore_errors=True)    # fd-based: never follows a symlink out
                    else:
                        try:
                            os.unlink(path)                         # a symlink itself, never its target
                        except OSError:
                            continue
                    removed.append(path)
                elif stat.S_ISDIR(st.st_mode) and st.st_dev == device and name in dirnames:
                    keep.append(name)
            dirnames[:] = keep       # os.walk does not follow symlinks; this keeps it on one file system
    return removed


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
