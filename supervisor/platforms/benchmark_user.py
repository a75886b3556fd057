"""A fresh unprivileged account per process execution.

Created with an empty home (skeleton: an empty directory) just before the
run and deleted with its home just after, so no state carries over between
executions: what it left in the machine's shared directories and its System V
IPC objects go first (user_leftovers.py), and no two executions of an
experiment get the same uid (the next one to try is kept in the state dir), so
no file of an earlier execution's user could be its own.  An account of that
name that coldrun did not create is never touched: the marker file in the
state dir says which one is ours, and it is written before useradd so a crash
in between is still recognised.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from supervisor.errors import PlatformError
from supervisor.platforms.user_leftovers import SHARED_DIRS, remove_files_of, remove_ipc_listed, remove_ipc_of
from supervisor.system import Commands, SystemRoot
from supervisor.durable import write_atomic
from supervisor.platforms.base import LaunchPrefix
from supervisor.state import layout

MARKER = layout.BENCHMARK_USER
NEXT_UID = layout.BENCHMARK_NEXT_UID
FIRST_UID = 1000            # useradd's UID_MIN (login.defs; OpenBSD's adduser too): no system account's range
LAST_UID = 60000            # UID_MAX: above are nobody (65534) and the ranges systemd reserves
LOCK_RETRY_SECONDS = 10.0   # useradd refuses while another tool holds /etc/passwd's lock
UID_ATTEMPTS = 20           # uids tried when others keep taking the one found unused


def simulated_user_name(name: str, state_dir: Path) -> str:
    """The benchmark user of a simulated experiment run as root: one per state dir.

    Simulated experiments may run side by side (and beside a real one, which
    owns ``name``); a suffix from the state dir keeps their accounts apart.
    """
    return f"{name[:22]}-{hashlib.sha256(str(Path(state_dir).absolute()).encode()).hexdigest()[:8]}"


class BenchmarkUser:
    def __init__(self, name: str, commands: Commands, state_dir: Path, log, os_name: str,
                 root: SystemRoot | None = None):
        self.name = name
        self.commands = commands
        self.state_dir = Path(state_dir)
        self.log = log
        self.os_name = os_name
        self.home = f"/home/{name}"
        self.root = root or SystemRoot()     # where the shared directories and /proc/sysvipc are

    @property
    def _marker(self) -> Path:
        return self.state_dir / MARKER

    def _ours(self) -> bool:
        try:
            return self._marker.read_text().strip() == self.name
        except FileNotFoundError:
            return False

    def exists(self) -> bool:
        return self.commands.run(["id", "-u", self.name]).ok

    def check_not_foreign(self) -> str | None:
        """A problem line when an account of this name exists that coldrun did not create."""
        if self.exists() and not self._ours():
            return (f"benchmark user {self.name!r} already exists and was not created by coldrun; "
                    "set benchmark_user_name in [platform] to an unused name")
        return None

    def _skeleton(self) -> str:
        skel = self.state_dir / layout.EMPTY_SKEL
        skel.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(skel)

    def switch(self) -> LaunchPrefix:
        """The drop from root to this user that keeps inherited fds (the results channel, fd 3).

        setpriv switches uid/gid/groups and execs (sudo and doas would close the fds);
        OpenBSD has no setpriv, so coldrun's own runas does the same there (and sets
        HOME, USER and LOGNAME itself).
        """
        if self.os_name == "openbsd":
            return LaunchPrefix([sys.executable, "-m", "supervisor.platforms.runas", self.name, "--"],
                                user=self.name)
        u = self.name
        return LaunchPrefix(["setpriv", f"--reuid={u}", f"--regid={u}", "--init-groups", "--"],
                            {"HOME": str(self.home), "USER": u, "LOGNAME": u}, user=u)

    def _run_retrying(self, argv: list[str]):
        """Run useradd/userdel, again while another process holds the password file's lock."""
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            r = self.commands.run(argv)
            if r.ok or "lock" not in r.stderr.lower() or time.monotonic() > deadline:
                return r
            time.sleep(0.2)   # nothing to wait on but the other tool letting go of the lock

    def create(self) -> None:
        problem = self.check_not_foreign()
        if problem:
            raise PlatformError(problem)
        if self.exists():  # ours, left by a crash: start from scratch
            self.delete()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        for _ in range(UID_ATTEMPTS):
            uid = self._unused_uid()
            # Durable before useradd: after a power cut the marker must still say the user is ours, and the
            # uid must count as used.
            write_atomic(self.state_dir / NEXT_UID, f"{uid + 1}\n".encode())
            write_atomic(self._marker, (self.name + "\n").encode())
            r = self._run_retrying(self._useradd(uid))
            # Another tool (another experiment's coldrun, an admin) may take the uid between the check and
            # useradd, which then refuses it: the next one.
            if r.ok or self.exists() or not self._uid_taken(uid):
                break
        if not r.ok or not self.exists():
            raise PlatformError(f"could not create benchmark user {self.name!r}: "
                                f"{r.stderr.strip() or 'useradd exit ' + str(r.returncode)}")
        self.log.info("benchmark user created", user=self.name, uid=uid)

    def _useradd(self, uid: int) -> list[str]:
        if self.os_name == "openbsd":
            return ["useradd", "-m", "-k", self._skeleton(), "-u", str(uid), "-g", "=uid", "-s", "/bin/sh",
                    self.name]
        return ["useradd", "--create-home", "--skel", self._skeleton(), "--uid", str(uid), "--user-group",
                "--shell", "/bin/sh", self.name]

    def _uid_taken(self, uid: int) -> bool:
        return self.commands.run(["getent", "passwd", str(uid)]).ok

    def _unused_uid(self) -> int:
        """The lowest uid above every one this experiment used that no account has (NSS included)."""
        try:
            uid = max(FIRST_UID, int((self.state_dir / NEXT_UID).read_text()))
        except (FileNotFoundError, ValueError):
            uid = FIRST_UID
        while self._uid_taken(uid):
            uid += 1
        if uid > LAST_UID:
            raise PlatformError(f"no unused uid left for the benchmark user below {LAST_UID} (this experiment used "
                                f"each one once; {self.state_dir / NEXT_UID} holds the next)")
        return uid

    def _uid(self) -> int | None:
        r = self.commands.run(["id", "-u", self.name])
        return int(r.stdout.strip()) if r.ok and r.stdout.strip().isdigit() else None

    def _remove_leftovers(self) -> None:
        """Its files outside its home and its System V IPC objects (its processes are gone by now)."""
        uid = self._uid()
        if uid is None or uid == 0:
            return
        dirs = tuple(str(self.root.path(d)) for d in SHARED_DIRS)
        if self.os_name == "openbsd":
            ipc = remove_ipc_listed(uid, self.name, self.commands)
        else:
            ipc = remove_ipc_of(uid, self.commands, str(self.root.path("/proc/sysvipc")))
        files, left = remove_files_of(uid, dirs)
        removed = files + ipc
        if left:
            self.log.warning("left what the benchmark user nested too deep to remove", user=self.name, uid=uid,
                             count=len(left), first=left[:5])
        if removed:
            self.log.info("removed what the benchmark user left outside its home", user=self.name, uid=uid,
                          count=len(removed), first=removed[:5])

    def remove_leftover(self) -> str | None:
        """The account of ours that a supervisor killed mid-run left behind: deleted, with its home; what was
        done (None: nothing was left).  Its name is the state dir's marker's, so no other account is touched."""
        if not self._ours() or not self.exists():
            return None
        try:
            self.delete()
        except PlatformError as e:
            return f"{e} (left by a supervisor that died mid-run)"
        return f"deleted the benchmark user {self.name!r} and its home (left by a supervisor that died mid-run)"

    def delete(self) -> None:
        self._remove_leftovers()
        if self.os_name == "openbsd":
            argv = ["userdel", "-r", self.name]
        else:
            argv = ["userdel", "--remove", "--force", self.name]  # -f: the mail spool is not ours
        r = self._run_retrying(argv)
        if self.exists():
            raise PlatformError(f"could not delete benchmark user {self.name!r}: "
                                f"{r.stderr.strip() or 'userdel exit ' + str(r.returncode)}")
        self._marker.unlink(missing_ok=True)
        self.log.info("benchmark user deleted", user=self.name)
