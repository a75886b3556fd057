"""The state dir: its files, creation, the single-instance lock and the experiment copy.

The state dir belongs to whoever runs the experiment (root on a real
machine) alone: it is created 0700, every file in it is created with an
explicit mode, and every command refuses a state dir that someone else could
write into (see ``location_problem``), because the supervisor writes there as
root and a planted symlink would make it overwrite any file.
"""

from __future__ import annotations

import fcntl
import grp
import json
import os
import pwd
import stat
import time
from pathlib import Path

from contracts.state_dir import enclosing_state_dir
from iteration_runners.protocol import document_bytes
from supervisor.errors import ColdrunError
from supervisor.experiment.model import Experiment, experiment_sha256, parse_experiment
from supervisor.durable import fsync_dir, is_temp_name, write_atomic
from supervisor.state import layout, posix_acl
from supervisor.state.records import executions_dir
from supervisor.state.schedule import Schedule

DIR_MODE = 0o700     # the state dir, executions/, the skeleton
HOME_MODE = 0o755    # the runners' working directory: a runner dropped to the benchmark user must read it
MIN_FREE_BYTES = 16 * 1024 * 1024   # log, schedule, undo log and a margin, whatever the experiment's size

# What a state dir may hold, and of which type.  Anything coldrun reads must be a
# plain file or directory coldrun made: never a symlink, never the other type.
FILES = (layout.SCHEDULE, layout.EXPERIMENT, layout.META, layout.AUDIT, layout.KEY_FILES, layout.UNDO, layout.LOCK,
         layout.LOG, layout.RUNNER, layout.STOP_REASON, layout.BENCHMARK_USER, layout.RUN_LENGTH, layout.SCREENING,
         layout.SCREENING_SWITCH, layout.BOOT_BASELINES)
DIRS = (layout.EXECUTIONS, layout.HOME, layout.EMPTY_SKEL)


def _group_shared(gid: int, owner: int) -> bool:
    """Whether anyone but ``owner`` is in group ``gid`` (a member, or with it as primary group)."""
    try:
        members = grp.getgrgid(gid).gr_mem
    except KeyError:
        return True   # an unknown group: assume the worst
    for name in members:
        try:
            if pwd.getpwnam(name).pw_uid != owner:
                return True
        except KeyError:
            return True
    return any(pw.pw_gid == gid and pw.pw_uid != owner for pw in pwd.getpwall())


def _writable_by_others(path: Path, st: os.stat_result, *, allow_sticky: bool,
                        euid: int) -> tuple[str, str] | None:
    """Who besides the owner, root and ``euid`` may create, rename or delete entries in directory ``path``,
    and the setfacl command that stops an ACL letting them ('' for the mode bits):
    ("others (mode 0777)", ""), ("user nobody (ACL)", "setfacl -x u:nobody")."""
    if allow_sticky and st.st_mode & stat.S_ISVTX:
        return None   # /tmp: others may add entries but not touch ours
    mode = f"mode {stat.S_IMODE(st.st_mode):04o}"
    if st.st_mode & stat.S_IWOTH:
        return f"others ({mode})", ""
    # With an ACL these are its mask's bits: they bound the owning group's too.
    if st.st_mode & stat.S_IWGRP and _group_shared(st.st_gid, st.st_uid):
        return f"group ({mode})", ""
    try:
        acl = posix_acl.access_acl(path) or []
    except posix_acl.UnreadableAcl as e:
        return f"whoever its ACL names (unreadable: {e})", "setfacl -b"
    for uid in posix_acl.named_writers(acl, posix_acl.USER):
        if uid not in (st.st_uid, 0, euid):
            name = _entry_name(pwd.getpwuid, uid)
            return f"user {name} (ACL)", f"setfacl -x u:{name}"
    for gid in posix_acl.named_writers(acl, posix_acl.GROUP):
        if _group_shared(gid, st.st_uid):
            name = _entry_name(grp.getgrgid, gid)
            return f"group {name} (ACL)", f"setfacl -x g:{name}"
    return None


def _entry_name(lookup, ident: int) -> str:
    """A user's or group's name as setfacl takes it: the number when it has none."""
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def _owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def location_problem(path: Path, euid: int | None = None) -> str | None:
    """One line saying why ``path`` is not a safe state dir for ``euid``, or None.

    Rules: the state dir is owned by the invoking user and not writable by its
    group or others; every parent is owned by root or the invoking user and
    not writable by others, unless it has the sticky bit (/tmp); a symlink on the
    way is owned by root or the invoking user.  "Writable" reads the mode bits
    and the POSIX ACL (users and groups it names).
    """
    euid = os.geteuid() if euid is None else euid
    me = _owner_name(euid)
    walked = Path("/")
    for part in path.absolute().parts[1:]:
        walked = walked / part
        try:
            lst = os.lstat(walked)
        except OSError:
            break      # not there (yet): its parents were checked
        if stat.S_ISLNK(lst.st_mode) and lst.st_uid not in (0, euid):
            return (f"{path}: {walked} is a symlink owned by {_owner_name(lst.st_uid)}, who could point the state "
                    f"dir anywhere; use a path without it as --state-dir")
    real = Path(os.path.realpath(path))
    try:
        st = os.stat(real)
    except (FileNotFoundError, NotADirectoryError):   # start creates it, or says why it cannot
        st = None
    except OSError as e:
        return f"{path}: cannot inspect the state dir ({e.strerror})"
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            return f"{path}: is not a directory; choose another --state-dir"
        if st.st_uid != euid:
            return (f"{path}: state dir is owned by {_owner_name(st.st_uid)}, not {me}; only its owner may run "
                    f"an experiment in it: chown {me} {path}, or choose another --state-dir")
        writer = _writable_by_others(real, st, allow_sticky=False, euid=euid)
        if writer:
            who, acl_fix = writer
            return f"{path}: state dir is writable by {who}; run {'setfacl -b' if acl_fix else 'chmod 700'} {path}"
    for parent in real.parents:
        try:
            pst = os.stat(parent)
        except (FileNotFoundError, NotADirectoryError):
            continue   # created by start, with safe modes
        except OSError as e:
            return f"{path}: cannot inspect its parent {parent} ({e.strerror})"
        if pst.st_uid not in (0, euid):
            return (f"{path}: parent directory {parent} is owned by {_owner_name(pst.st_uid)}, who could replace "
                    f"the state dir; choose a --state-dir under a directory owned by {me} or root"
                    f"{' (e.g. /var/lib/coldrun/' + real.name + ')' if euid == 0 else ''}")
        writer = _writable_by_others(parent, pst, allow_sticky=True, euid=euid)
        if writer:
            who, acl_fix = writer
            return (f"{path}: parent directory {parent} is writable by {who} without the sticky bit, so they "
                    f"could replace the state dir; run {acl_fix or 'chmod go-w'} {parent} or choose another "
                    f"--state-dir")
    inside = enclosing_state_dir(real.parent)
    if inside is not None:
        return (f"{path}: lies inside the state dir {inside}, where only its own supervisor writes; choose "
                f"another --state-dir")
    return None


def space_needed(records: int, most_iterations: int) -> int:
    """Bytes an experiment's state dir needs, estimated before the first boot.

    A record holds the stdout/stderr tails, argv, environment and kernel log
    lines (16 KiB is generous for a runner that behaves) plus the runner's
    measurements, as large as its document (protocol.document_bytes: per
    in-process iteration its times and three counts per core).  Re-runs are not counted: the
    floor of MIN_FREE_BYTES covers them, the log and the undo log.  ``records``
    comes from the planned jobs (the experiment's kind, boot/kinds); every
    record is counted at ``most_iterations``, the most any VM may run.
    """
    cores = os.cpu_count() or 1
    per_record = 16 * 1024 + document_bytes(most_iterations, cores)
    return MIN_FREE_BYTES + records * per_record


def check_free_space(path: Path, needed: int) -> None:
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    if free < needed:
        raise ColdrunError(f"{path}: only {free / 2**20:.1f} MiB free on its filesystem, but the experiment needs "
                           f"about {needed / 2**20:.1f} MiB for its records and log; free space or choose a "
                           f"--state-dir on another filesystem")


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0.0


class AlreadyRunning(ColdrunError):
    exit_code = 5


class StateDir:
    def __init__(self, path: str | Path):
        self.path = Path(path).absolute()

    # File names, in one place.
    @property
    def schedule_path(self) -> Path:
        return self.path / layout.SCHEDULE

    @property
    def experiment_path(self) -> Path:
        return self.path / layout.EXPERIMENT

    @property
    def meta_path(self) -> Path:
        return self.path / layout.META

    @property
    def lock_path(self) -> Path:
        return self.path / layout.LOCK

    @property
    def log_path(self) -> Path:
        return self.path / layout.LOG

    @property
    def runner_path(self) -> Path:
        """pid and start time of the runner in flight (simulated mode orphan clean-up)."""
        return self.path / layout.RUNNER

    @property
    def stop_reason_path(self) -> Path:
        return self.path / layout.STOP_REASON

    @property
    def home_path(self) -> Path:
        """HOME for runners in simulated mode (fresh users get their own on real machines)."""
        return self.path / layout.HOME

    def exists(self) -> bool:
        return self.schedule_path.is_file()

    # -- creation ------------------------------------------------------------
    def prepare_new(self, records: int, most_iterations: int) -> None:
        """Create the directory (or accept an empty one); refuse one that holds an experiment.

        Also refuses an unsafe location (see ``location_problem``) and a
        filesystem without room for ``records`` execution records of up to
        ``most_iterations`` in-process iterations each.
        """
        self.check_location()
        if self.exists():
            raise ColdrunError(f"{self.path}: state dir already holds an experiment; continue it with "
                               f"coldrun resume {self.path}, or choose another --state-dir")
        try:
            self._make_dirs()
        except OSError as e:
            raise ColdrunError(f"{self.path}: cannot create the state dir ({e.strerror}); choose a writable "
                               f"--state-dir") from None
        self.check_location()    # the dirs just made, and a path that changed under us
        # Files of a start that failed before its schedule existed hold no results: reuse the dir.
        ours = set(FILES) | set(DIRS)
        # Temp files of durable writes cut short (supervisor.durable) are ours too.
        leftovers = [p.name for p in self.path.iterdir()
                     if p.name not in ours and not is_temp_name(p.name)]
        ex = executions_dir(self.path)
        if ex.is_dir() and any(ex.iterdir()):
            leftovers.append("executions/...")
        if leftovers:
            raise ColdrunError(f"{self.path}: state dir is not empty ({', '.join(sorted(leftovers)[:3])} ...) "
                               f"but holds no schedule; choose an empty or new --state-dir")
        self.check_files()
        if not os.access(self.path, os.W_OK):
            raise ColdrunError(f"{self.path}: state dir is not writable; choose a writable --state-dir")
        check_free_space(self.path, space_needed(records, most_iterations))
        try:
            for d, mode in ((executions_dir(self.path), DIR_MODE), (self.home_path, HOME_MODE)):
                if not d.is_dir():
                    os.mkdir(d, mode)
                os.chmod(d, mode)
            fsync_dir(self.path)
        except OSError as e:
            raise ColdrunError(f"{self.path}: cannot write in the state dir ({e.strerror})") from None

    def _make_dirs(self) -> None:
        """The state dir 0700 and missing parents 0755, whatever the umask."""
        missing = []
        for p in [self.path, *self.path.parents]:
            if os.path.lexists(p):
                break
            missing.append(p)
        for p in reversed(missing):
            os.mkdir(p, DIR_MODE if p == self.path else 0o755)
            os.chmod(p, DIR_MODE if p == self.path else 0o755)
        if not missing and self.path.is_dir() and not self.path.is_symlink():
            os.chmod(self.path, DIR_MODE)   # an empty dir we own and take over: ours alone from now on

    # -- safety --------------------------------------------------------------
    def check_location(self) -> None:
        problem = location_problem(self.path)
        if problem:
            raise ColdrunError(problem)

    def check_files(self) -> None:
        """Every file coldrun reads is a plain file (or directory) it made, not a symlink or the other type."""
        for name, want_dir in [(n, False) for n in FILES] + [(n, True) for n in DIRS]:
            p = self.path / name
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise ColdrunError(f"{p}: cannot inspect ({e.strerror}); this state dir is damaged") from None
            if stat.S_ISLNK(st.st_mode):
                raise ColdrunError(f"{p}: is a symlink; coldrun never makes one there, so the state dir was "
                                   f"altered: remove it (and restore the file from a backup)")
            if want_dir and not stat.S_ISDIR(st.st_mode):
                raise ColdrunError(f"{p}: should be a directory; the state dir was altered")
            if not want_dir and not stat.S_ISREG(st.st_mode):
                raise ColdrunError(f"{p}: should be a plain file but is a "
                                   f"{'directory' if stat.S_ISDIR(st.st_mode) else 'special file'}; "
                                   f"the state dir was altered: remove it (and restore the file from a backup)")

    def check(self) -> None:
        """Every command's first step on an existing state dir."""
        if not self.path.is_dir():
            raise ColdrunError(f"{self.path}: no such state dir")
        self.check_location()
        self.check_files()

    def write_experiment(self, text: bytes, source: Path, argv: list[str], *, debug: bool = False) -> None:
        write_atomic(self.experiment_path, text, 0o600)
        meta = {"experiment_file": str(source.absolute()), "experiment_dir": str(source.absolute().parent),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "argv": argv,
                "debug": debug}
        self._write_meta(meta)

    # -- options that outlive one boot ---------------------------------------
    def debug(self) -> bool:
        """Runners get debug flag 1 (a stderr line per iteration); kept across (simulated) reboots."""
        return bool(self.meta().get("debug", False))

    def set_debug(self, debug: bool) -> None:
        meta = self.meta()
        if meta.get("debug", False) != debug:
            meta["debug"] = debug
            self._write_meta(meta)

    def add_boot_seconds(self, seconds: float) -> None:
        """A boot's length by the monotonic clock, added up for the ETA (the wall clock may jump between boots)."""
        meta = self.meta()
        meta["seconds_in_boots"] = _number(meta.get("seconds_in_boots")) + max(0.0, seconds)
        self._write_meta(meta)

    def boot_seconds(self) -> float:
        return _number(self.meta().get("seconds_in_boots"))

    def guard_base(self) -> tuple[int, int]:
        """Boots and job attempts when the experiment last continued: the reboot-loop guard counts from there."""
        base = self.meta().get("guard_base")
        if isinstance(base, dict) and all(isinstance(base.get(k), int) for k in ("boots", "attempts")):
            return base["boots"], base["attempts"]
        return 0, 0

    def set_guard_base(self, boots: int, attempts: int) -> None:
        meta = self.meta()
        meta["guard_base"] = {"boots": boots, "attempts": attempts}
        self._write_meta(meta)

    def _write_meta(self, meta: dict) -> None:
        write_atomic(self.meta_path, json.dumps(meta, indent=1).encode(), 0o600)

    # -- reading -------------------------------------------------------------
    def meta(self) -> dict:
        try:
            meta = json.loads(self.meta_path.read_text())
        except (OSError, ValueError) as e:
            raise ColdrunError(f"{self.meta_path}: unreadable ({getattr(e, 'strerror', None) or e}); this state "
                               f"dir is damaged") from None
        if not isinstance(meta, dict) or not all(isinstance(meta.get(k), str)
                                                 for k in ("experiment_file", "experiment_dir")):
            raise ColdrunError(f"{self.meta_path}: not the JSON object coldrun wrote (experiment_file, "
                               f"experiment_dir); this state dir is damaged")
        return meta

    def schedule(self) -> Schedule:
        self.check()
        return Schedule.load(self.schedule_path)

    def experiment_bytes(self) -> bytes:
        try:
            return self.experiment_path.read_bytes()
        except OSError as e:
            raise ColdrunError(f"{self.experiment_path}: cannot read the experiment copy ({e.strerror}); this "
                               f"state dir is damaged: restore the file from the experiment's source") from None

    def experiment(self, schedule: Schedule, *, check_source: bool = True) -> tuple[Experiment, bytes]:
        """The experiment this state dir runs; refuses a copy or source that changed."""
        text = self.experiment_bytes()
        if experiment_sha256(text) != schedule.experiment_sha256:
            raise ColdrunError(f"{self.experiment_path}: does not match the schedule's experiment_sha256; this "
                               f"state dir belongs to another experiment or was edited")
        if check_source:
            changed = self.source_change(text)
            if changed:
                raise ColdrunError(changed)
        return parse_experiment(text, str(self.experiment_path)), text

    def source_change(self, text: bytes) -> str | None:
        """One line saying how the experiment file differs from the copy ``text`` it was started with, or None
        (also when it is gone: the copy is what runs)."""
        source = Path(self.meta()["experiment_file"])
        try:
            now = source.read_bytes()
        except OSError:
            return None
        if now == text:
            return None
        old_lines = text.decode(errors="replace").splitlines()
        new_lines = now.decode(errors="replace").splitlines()
        n = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                 min(len(old_lines), len(new_lines)))
        was = old_lines[n] if n < len(old_lines) else "(end of file)"
        is_now = new_lines[n] if n < len(new_lines) else "(end of file)"
        return (f"{source}: experiment file changed since the experiment started (line {n + 1}: {was!r} is now "
                f"{is_now!r}); restore it from {self.experiment_path}, then coldrun resume --continue {self.path}")

    def experiment_dir(self) -> Path:
        return Path(self.meta()["experiment_dir"])

    # -- lock ----------------------------------------------------------------
    def lock(self) -> int:
        """Take the single-instance lock; returns the fd (close-on-exec, released on exit/exec)."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            raise ColdrunError(f"{self.lock_path}: cannot open the lock file ({e.strerror}); if it is a symlink "
                               f"or directory, the state dir was altered: remove it") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ColdrunError(f"{self.lock_path}: the lock file is not a plain file; the state dir was altered: "
                               f"remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.lock_holder()
            os.close(fd)
            raise AlreadyRunning(f"{self.path}: already running (pid {holder if holder else 'unknown'})") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass   # the pid is a hint for status and abort; the flock is the lock (a full disk must not stop it)
        return fd

    def lock_held(self) -> bool:
        """Whether a supervisor holds the lock now (probed with a shared lock, without writing to the dir)."""
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

    def lock_holder(self) -> int | None:
        """The pid written by the last lock holder (read only; may be stale)."""
        try:
            pid = int(self.lock_path.read_text().strip() or 0)
        except (OSError, ValueError):
            return None
        return pid if 0 < pid < 2 ** 31 else None

    # -- runner in flight ----------------------------------------------------
    def note_runner(self, pid: int, create_time: float | None, cgroup: str | None = None) -> None:
        write_atomic(self.runner_path,
                     json.dumps({"pid": pid, "create_time": create_time, "cgroup": cgroup}).encode())

    def note_runners(self, runners: list[dict], barrier: str | None = None) -> None:
        """A pair execution's runners in flight ({"pid", "create_time", "cgroup"} each) and its duet barrier,
        for the next boot to kill and remove if we die."""
        write_atomic(self.runner_path, json.dumps({"runners": runners, "barrier": barrier}).encode())

    def barrier_in_flight(self) -> str | None:
        try:
            noted = json.loads(self.runner_path.read_text())
        except (OSError, ValueError):
            return None
        barrier = noted.get("barrier") if isinstance(noted, dict) else None
        return barrier if isinstance(barrier, str) else None

    def clear_runner(self) -> None:
        try:
            os.unlink(self.runner_path)
            fsync_dir(self.path)
        except FileNotFoundError:
            pass

    def runners_in_flight(self) -> list[dict]:
        try:
            noted = json.loads(self.runner_path.read_text())
        except (OSError, ValueError):
            return []
        if isinstance(noted, dict) and isinstance(noted.get("runners"), list):
            return [r for r in noted["runners"] if isinstance(r, dict) and "pid" in r]
        return [noted] if isinstance(noted, dict) and "pid" in noted else []   # one runner (note_runner)

    def stop_reason(self) -> str | None:
        try:
            return self.stop_reason_path.read_text().strip()
        except OSError:
            return None
