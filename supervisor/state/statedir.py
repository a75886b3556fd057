"""The state dir: its files, creation, the single-instance lock and the experiment copy."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from supervisor.errors import ColdrunError
from supervisor.experiment.model import Experiment, experiment_sha256, parse_experiment
from supervisor.durable import fsync_dir, is_temp_name, write_atomic
from supervisor.state.records import executions_dir
from supervisor.state.schedule import Schedule
from supervisor.state import layout


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
    def prepare_new(self, experiment_file: Path) -> None:
        """Create the directory (or accept an empty one); refuse one that holds an experiment."""
        if self.exists():
            raise ColdrunError(f"{self.path}: state dir already holds an experiment; continue it with "
                               f"coldrun resume {self.path}, or choose another --state-dir")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ColdrunError(f"{self.path}: cannot create the state dir ({e.strerror}); choose a writable "
                               f"--state-dir")
        # Files of a start that failed before its schedule existed hold no results: reuse the dir.
        ours = layout.BEFORE_SCHEDULE
        # Temp files of durable writes cut short (supervisor.durable) are ours too.
        leftovers = [p.name for p in self.path.iterdir()
                     if p.name not in ours and not is_temp_name(p.name)]
        ex = executions_dir(self.path)
        if ex.is_dir() and any(ex.iterdir()):
            leftovers.append("executions/...")
        if leftovers:
            raise ColdrunError(f"{self.path}: state dir is not empty ({', '.join(sorted(leftovers)[:3])} ...) "
                               f"but holds no schedule; choose an empty or new --state-dir")
        if not os.access(self.path, os.W_OK):
            raise ColdrunError(f"{self.path}: state dir is not writable; choose a writable --state-dir")
        try:
            executions_dir(self.path).mkdir(exist_ok=True)
            self.home_path.mkdir(exist_ok=True)
            fsync_dir(self.path)
        except OSError as e:
            raise ColdrunError(f"{self.path}: cannot write in the state dir ({e.strerror})")

    def write_experiment(self, text: bytes, source: Path, argv: list[str], *, debug: bool = False) -> None:
        write_atomic(self.experiment_path, text)
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

    def _write_meta(self, meta: dict) -> None:
        write_atomic(self.meta_path, json.dumps(meta, indent=1).encode())

    # -- reading -------------------------------------------------------------
    def meta(self) -> dict:
        try:
            return json.loads(self.meta_path.read_text())
        except (OSError, ValueError) as e:
            raise ColdrunError(f"{self.meta_path}: unreadable ({e}); this state dir is damaged")

    def schedule(self) -> Schedule:
        if not self.path.is_dir():
            raise ColdrunError(f"{self.path}: no such state dir")
        return Schedule.load(self.schedule_path)

    def experiment(self, schedule: Schedule, *, check_source: bool = True) -> tuple[Experiment, bytes]:
        """The experiment this state dir runs; refuses a copy or source that changed."""
        try:
            text = self.experiment_path.read_bytes()
        except OSError as e:
            raise ColdrunError(f"{self.experiment_path}: cannot read the experiment copy ({e.strerror})")
        if experiment_sha256(text) != schedule.experiment_sha256:
            raise ColdrunError(f"{self.experiment_path}: does not match the schedule's experiment_sha256; this "
                               f"state dir belongs to another experiment or was edited")
        if check_source:
            source = Path(self.meta()["experiment_file"])
            if source.is_file():
                now = source.read_bytes()
                if now != text:
                    old_lines = text.decode(errors="replace").splitlines()
                    new_lines = now.decode(errors="replace").splitlines()
                    n = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                             min(len(old_lines), len(new_lines)))
                    was = old_lines[n] if n < len(old_lines) else "(end of file)"
                    is_now = new_lines[n] if n < len(new_lines) else "(end of file)"
                    raise ColdrunError(f"{source}: experiment file changed since the experiment started "
                                       f"(line {n + 1}: {was!r} is now {is_now!r}); restore it from "
                                       f"{self.experiment_path}")
        return parse_experiment(text, str(self.experiment_path)), text

    def experiment_dir(self) -> Path:
        return Path(self.meta()["experiment_dir"])

    # -- lock ----------------------------------------------------------------
    def lock(self) -> int:
        """Take the single-instance lock; returns the fd (close-on-exec, released on exit/exec)."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise ColdrunError(f"{self.lock_path}: cannot open the lock file ({e.strerror})")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.lock_holder()
            os.close(fd)
            raise AlreadyRunning(f"{self.path}: already running (pid {holder if holder else 'unknown'})")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    def lock_holder(self) -> int | None:
        """The pid written by the last lock holder (read only; may be stale)."""
        try:
            return int(self.lock_path.read_text().strip() or 0) or None
        except (OSError, ValueError):
            return None

    # -- runner in flight ----------------------------------------------------
    def note_runner(self, pid: int, create_time: float | None, cgroup: str | None = None) -> None:
        write_atomic(self.runner_path,
                     json.dumps({"pid": pid, "create_time": create_time, "cgroup": cgroup}).encode())

    def clear_runner(self) -> None:
        try:
            os.unlink(self.runner_path)
            fsync_dir(self.path)
        except FileNotFoundError:
            pass

    def runner_in_flight(self) -> dict | None:
        try:
            return json.loads(self.runner_path.read_text())
        except (OSError, ValueError):
            return None

    def stop_reason(self) -> str | None:
        try:
            return self.stop_reason_path.read_text().strip()
        except OSError:
            return None
