"""The schedule file: fixed size, created once, updated in place.

Layout (ASCII)::

    coldrun-schedule
    format_version=0001
    experiment_sha256=<64 hex>
    mode=simulated|hardware_
    order=round-robin|random_____
    seed=<20 digits>
    status=running_|finished|aborted_|stopped_
    boots=%08d
    mails_sent=%04d
    temperature_slots=128
    temp000=<sensor name, 64 wide> <%+09.2f>    (128 slots; unused: name "-")
    jobs=%08d
    jobs_sha256=<64 hex over "pexec key" lines>
    end_header
    <state> <attempts %03d> <pexec %06d> <key>    (one line per job)

Every mutable field has a fixed width, so an update is one pwrite at a byte
offset found while parsing, followed by fsync.  The file is never grown and
never rewritten whole.  Parsing is strict: anything unexpected is a
ScheduleCorrupt error naming the line, never a silent repair.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from supervisor.errors import ColdrunError
from supervisor.experiment.plan import JobSpec
from supervisor.durable import write_atomic

FORMAT_VERSION = 1
TEMPERATURE_SLOTS = 128   # big servers have a sensor per core
SENSOR_NAME_WIDTH = 64
MAX_ATTEMPTS_FIELD = 999

OUTSTANDING, RUNNING, COMPLETED, ERRORED, TIMED_OUT, CRASHED, SKIPPED = "ORCETXS"
STATE_NAMES = {OUTSTANDING: "outstanding", RUNNING: "running", COMPLETED: "completed",
               ERRORED: "errored", TIMED_OUT: "timed_out", CRASHED: "crashed", SKIPPED: "skipped"}
FINISHED_STATES = {COMPLETED, ERRORED, TIMED_OUT, CRASHED, SKIPPED}
WITH_RECORD = {COMPLETED, ERRORED, TIMED_OUT}

STATUS_VALUES = ("running", "finished", "aborted", "stopped")
MODE_VALUES = ("simulated", "hardware")
ORDER_VALUES = ("round-robin", "random")

_JOB_LINE = re.compile(rb"([ORCETXS]) (\d{3}) (\d{6}) ([A-Za-z0-9_.+-]+:[A-Za-z0-9_.+-]+:[A-Za-z0-9_.+-]+)\n")


class ScheduleCorrupt(ColdrunError):
    exit_code = 4


@dataclass
class JobLine:
    index: int
    state: str
    attempts: int
    pexec: int
    key: str
    offset: int          # byte offset of the state byte

    @property
    def state_name(self) -> str:
        return STATE_NAMES[self.state]


def _pad(value: str, width: int) -> str:
    if len(value) > width:
        raise ValueError(f"{value!r} is wider than {width}")
    return value.ljust(width, "_")


def _jobs_digest(lines: list[tuple[int, str]]) -> str:
    h = hashlib.sha256()
    for pexec, key in lines:
        h.update(f"{pexec} {key}\n".encode())
    return h.hexdigest()


def render_new(jobs: list[JobSpec], *, experiment_sha256: str, mode: str, order: str, seed: int,
               baselines: dict[str, float]) -> bytes:
    """The complete text of a new schedule (written once by create())."""
    if len(baselines) > TEMPERATURE_SLOTS:
        raise ColdrunError(f"{len(baselines)} temperature sensors, but the schedule has room for "
                           f"{TEMPERATURE_SLOTS}; report this as a coldrun bug")
    out = ["coldrun-schedule", f"format_version={FORMAT_VERSION:04d}",
           f"experiment_sha256={experiment_sha256}", f"mode={_pad(mode, 9)}",
           f"order={_pad(order, 11)}", f"seed={seed:020d}", f"status={_pad('running', 8)}",
           f"boots={0:08d}", f"mails_sent={0:04d}", f"temperature_slots={TEMPERATURE_SLOTS:03d}"]
    items = sorted(baselines.items())
    for slot in range(TEMPERATURE_SLOTS):
        if slot < len(items):
            name, value = items[slot]
            if len(name) > SENSOR_NAME_WIDTH or not re.fullmatch(r"\S+", name):
                raise ColdrunError(f"temperature sensor name {name!r} is too long or has spaces")
            out.append(f"temp{slot:03d}={name.ljust(SENSOR_NAME_WIDTH)} {value:+09.2f}")
        else:
            out.append(f"temp{slot:03d}={'-'.ljust(SENSOR_NAME_WIDTH)} {0.0:+09.2f}")
    out.append(f"jobs={len(jobs):08d}")
    out.append(f"jobs_sha256={_jobs_digest([(j.pexec, j.key) for j in jobs])}")
    out.append("end_header")
    for j in jobs:
        out.append(f"{SKIPPED if j.skipped else OUTSTANDING} {0:03d} {j.pexec:06d} {j.key}")
    return ("\n".join(out) + "\n").encode()


class Schedule:
    """A parsed schedule with in-place updates.  Open with Schedule.load(path)."""

    def __init__(self, path: Path, data: bytes):
        self.path = path
        self.size = len(data)
        self._offsets: dict[str, tuple[int, int]] = {}   # field -> (offset, width)
        self.fields: dict[str, str] = {}
        self.baselines: dict[str, float] = {}
        self.jobs: list[JobLine] = []
        self._parse(data)

    # -- parsing -------------------------------------------------------------
    def _corrupt(self, what: str) -> ScheduleCorrupt:
        return ScheduleCorrupt(f"{self.path}: schedule is corrupted ({what}); it is never repaired "
                               f"automatically: restore it from a backup or start a new state dir")

    def _parse(self, data: bytes) -> None:
        pos = 0

        def next_line() -> tuple[int, bytes]:
            nonlocal pos
            end = data.find(b"\n", pos)
            if end < 0:
                raise self._corrupt(f"truncated at byte {pos}")
            start, line = pos, data[pos:end]
            pos = end + 1
            return start, line

        def field(name: str, pattern: str) -> str:
            start, line = next_line()
            prefix = name.encode() + b"="
            if not line.startswith(prefix):
                raise self._corrupt(f"expected header field {name!r} at byte {start}")
            value = line[len(prefix):].decode("ascii", "replace")
            if not re.fullmatch(pattern, value):
                raise self._corrupt(f"bad value for header field {name!r}: {value!r}")
            self._offsets[name] = (start + len(prefix), len(value))
            self.fields[name] = value
            return value

        _, magic = next_line() if data else (0, b"")
        if magic != b"coldrun-schedule":
            raise self._corrupt("missing 'coldrun-schedule' first line")
        version = int(field("format_version", r"\d{4}"))
        if version != FORMAT_VERSION:
            raise ScheduleCorrupt(f"{self.path}: schedule format {version} is not supported by this coldrun "
                                  f"(expects {FORMAT_VERSION})")
        field("experiment_sha256", r"[0-9a-f]{64}")
        field("mode", r"(simulated|hardware_)")
        field("order", r"(round-robin|random_____)")
        field("seed", r"\d{20}")
        field("status", r"(running_|finished|aborted_|stopped_)")
        field("boots", r"\d{8}")
        field("mails_sent", r"\d{4}")
        slots = int(field("temperature_slots", r"\d{3}"))
        for slot in range(slots):
            value = field(f"temp{slot:03d}", r"\S.{%d} [+-]\d{5}\.\d{2}" % (SENSOR_NAME_WIDTH - 1))
            name = value[:SENSOR_NAME_WIDTH].rstrip()
            if name != "-":
                self.baselines[name] = float(value[SENSOR_NAME_WIDTH + 1:])
        n_jobs = int(field("jobs", r"\d{8}"))
        digest = field("jobs_sha256", r"[0-9a-f]{64}")
        start, line = next_line()
        if line != b"end_header":
            raise self._corrupt(f"expected 'end_header' at byte {start}")
        for index in range(n_jobs):
            m = _JOB_LINE.match(data, pos)
            if not m:
                raise self._corrupt(f"job line {index} at byte {pos} is malformed or missing")
            self.jobs.append(JobLine(index, m.group(1).decode(), int(m.group(2)), int(m.group(3)),
                                     m.group(4).decode(), pos))
            pos = m.end()
        if pos != len(data):
            raise self._corrupt(f"{len(data) - pos} unexpected bytes after the last job line")
        if _jobs_digest([(j.pexec, j.key) for j in self.jobs]) != digest:
            raise self._corrupt("job keys or indices do not match jobs_sha256")

    @classmethod
    def load(cls, path: str | Path) -> "Schedule":
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise ColdrunError(f"{p.parent}: not a coldrun state dir (no schedule file); "
                               f"start one with coldrun start EXPERIMENT.toml")
        except PermissionError:
            raise ColdrunError(f"{p}: cannot read the schedule (permission denied)")
        return cls(p, data)

    @staticmethod
    def create(path: Path, text: bytes) -> None:
        """Write a new schedule: temp file, fsync, rename, fsync(dir).  Refuses to overwrite."""
        if path.exists():
            raise ColdrunError(f"{path}: a schedule already exists; refusing to overwrite it")
        write_atomic(path, text)

    # -- in-place updates ----------------------------------------------------
    def _pwrite(self, offset: int, data: bytes) -> None:
        if offset + len(data) > self.size:
            raise AssertionError("schedule update would grow the file")
        fd = os.open(self.path, os.O_WRONLY)
        try:
            if os.pwrite(fd, data, offset) != len(data):
                raise OSError(f"short write to {self.path}")
            os.fsync(fd)
        finally:
            os.close(fd)

    def _set_field(self, name: str, value: str) -> None:
        offset, width = self._offsets[name]
        if len(value) != width:
            raise AssertionError(f"{name}={value!r} does not fit its width {width}")
        self._pwrite(offset, value.encode())
        self.fields[name] = value

    def set_job(self, job: JobLine, state: str, attempts: int | None = None) -> None:
        """Change one job's state (and attempt count) with one write of its first bytes."""
        if attempts is None:
            attempts = job.attempts
        if not 0 <= attempts <= MAX_ATTEMPTS_FIELD:
            raise AssertionError(f"attempt count {attempts} out of range")
        self._pwrite(job.offset, f"{state} {attempts:03d}".encode())
        job.state, job.attempts = state, attempts

    # -- header fields -------------------------------------------------------
    @property
    def experiment_sha256(self) -> str:
        return self.fields["experiment_sha256"]

    @property
    def mode(self) -> str:
        return self.fields["mode"].rstrip("_")

    @property
    def order(self) -> str:
        return self.fields["order"].rstrip("_")

    @property
    def seed(self) -> int:
        return int(self.fields["seed"])

    @property
    def status(self) -> str:
        return self.fields["status"].rstrip("_")

    def set_status(self, status: str) -> None:
        assert status in STATUS_VALUES
        self._set_field("status", _pad(status, 8))

    @property
    def boots(self) -> int:
        return int(self.fields["boots"])

    def set_boots(self, n: int) -> None:
        self._set_field("boots", f"{n:08d}")

    @property
    def mails_sent(self) -> int:
        return int(self.fields["mails_sent"])

    def set_mails_sent(self, n: int) -> None:
        self._set_field("mails_sent", f"{min(n, 9999):04d}")

    # -- queries -------------------------------------------------------------
    def next_outstanding(self) -> JobLine | None:
        for j in self.jobs:
            if j.state == OUTSTANDING:
                return j
        return None

    def running(self) -> list[JobLine]:
        return [j for j in self.jobs if j.state == RUNNING]

    def counts(self) -> dict[str, int]:
        out = {name: 0 for name in STATE_NAMES.values()}
        for j in self.jobs:
            out[j.state_name] += 1
        return out

    def total_attempts(self) -> int:
        return sum(j.attempts for j in self.jobs)


class MailCounter:
    """The Mailer's persistent counter, backed by the schedule's mails_sent field."""

    def __init__(self, schedule: Schedule):
        self._schedule = schedule

    def get(self) -> int:
        return self._schedule.mails_sent

    def set(self, n: int) -> None:
        self._schedule.set_mails_sent(n)
