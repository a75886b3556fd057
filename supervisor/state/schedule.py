"""The schedule file: fixed-width fields updated in place, jobs added only by durable appends.

Layout (ASCII)::

    coldrun-schedule
    format_version=0002
    experiment_sha256=<64 hex>
    mode=simulated|hardware_
    order=round-robin|random_____
    seed=<20 digits>
    status=running_|finished|aborted_|stopped_
    boots=%08d
    mails_sent=%04d
    temperature_slots=128
    temp000=<sensor name, 64 wide> <%+09.2f>    (128 slots; unused: name "-")
    jobs=%08d                 committed job lines
    jobs_sha256=<64 hex over "pexec iterations param key" lines>
    append_end=%012d          the file's size once an append in flight commits; 0 when none is
    end_header
    <state> <attempts %03d> <pexec %06d> <iterations %06d> <param %+011d> <key>    (one line per job)

Every mutable field has a fixed width, so an update is one pwrite at a byte
offset found while parsing, followed by fsync.  Parsing is strict: anything
unexpected is a ScheduleCorrupt error naming the line, never a silent repair.

Appends (a [stop] experiment's next executions), each step fsynced before the
next: (1) ``append_end`` = the size the file will have; (2) the new job lines
at the end of the committed ones; (3) one pwrite of ``jobs``, ``jobs_sha256``
and ``append_end=0`` together, the commit.  Those three fields lie in one
512-byte sector (checked when written), so a power cut leaves them all old or
all new, as every other in-place update here relies on.  Bytes after the
committed jobs are then provably an unfinished append only when
``append_end`` announces them (the file ends at or before it): the boot
discards them (``discard_unfinished_append``) and logs it; any other tail is
corruption.  Format 1 (no appends, no per-job iterations and param) is refused
with one line.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, cast

from contracts import state_view
from contracts.state_dir import MAGIC   # the first line; it also tells a state dir from any directory
from supervisor.errors import ColdrunError
from supervisor.experiment.plan import JobSpec
from supervisor.durable import write_atomic

FORMAT_VERSION = 2
SECTOR = 512              # the unit a disk writes whole (see the commit above)
TEMPERATURE_SLOTS = 128   # big servers have a sensor per core
SENSOR_NAME_WIDTH = 64
MAX_ATTEMPTS_FIELD = 999

# The job states' one-byte flags on disk; what each state means to the exports and the analysis is
# contracts.state_view's, named by STATE_NAMES.
OUTSTANDING, RUNNING, COMPLETED, ERRORED, TIMED_OUT, CRASHED, SKIPPED = "ORCETXS"
STATE_NAMES = {OUTSTANDING: state_view.OUTSTANDING, RUNNING: state_view.RUNNING, COMPLETED: state_view.COMPLETED,
               ERRORED: state_view.ERRORED, TIMED_OUT: state_view.TIMED_OUT, CRASHED: state_view.CRASHED,
               SKIPPED: state_view.SKIPPED}
FINISHED_STATES = {COMPLETED, ERRORED, TIMED_OUT, CRASHED, SKIPPED}
WITH_RECORD = {flag for flag, name in STATE_NAMES.items() if name in state_view.RECORDED}

STATUS_VALUES = ("running", "finished", "aborted", "stopped")
MODE_VALUES = ("simulated", "hardware")
Status = Literal["running", "finished", "aborted", "stopped"]
Mode = Literal["simulated", "hardware"]
ORDER_VALUES = ("round-robin", "random")

_JOB_LINE = re.compile(rb"([ORCETXS]) (\d{3}) (\d{6}) (\d{6}) ([+-]\d{10}) "
                       # key, or a pair job's A/B
                       rb"([A-Za-z0-9_.+-]+:[A-Za-z0-9_.+-]+:[A-Za-z0-9_.+-]+"
                       rb"(?:/[A-Za-z0-9_.+-]+:[A-Za-z0-9_.+-]+:[A-Za-z0-9_.+-]+)?)\n")
_JOB_LINE_RUN = re.compile(b"(?:" + _JOB_LINE.pattern + b")*")


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
    iterations: int      # in-process iterations of this execution
    param: int           # run_iter's param for this execution

    @property
    def state_name(self) -> str:
        return STATE_NAMES[self.state]


def _pad(value: str, width: int) -> str:
    if len(value) > width:
        raise ValueError(f"{value!r} is wider than {width}")
    return value.ljust(width, "_")


def _jobs_digest(jobs: list) -> str:
    """Over what never changes in a job line (JobSpec or JobLine): its place, iterations, param and key."""
    h = hashlib.sha256()
    for j in jobs:
        h.update(f"{j.pexec} {j.iterations} {j.param} {j.key}\n".encode())
    return h.hexdigest()


def job_line(state: str, attempts: int, spec: JobSpec) -> str:
    """One job line, without its newline; every field before the key has a fixed width."""
    return f"{state} {attempts:03d} {spec.pexec:06d} {spec.iterations:06d} {spec.param:+011d} {spec.key}"


def render_new(jobs: list[JobSpec], *, experiment_sha256: str, mode: str, order: str, seed: int,
               baselines: dict[str, float]) -> bytes:
    """The complete text of a new schedule (written once by create())."""
    if len(baselines) > TEMPERATURE_SLOTS:
        raise ColdrunError(f"{len(baselines)} temperature sensors, but the schedule has room for "
                           f"{TEMPERATURE_SLOTS}; report this as a coldrun bug")
    out = [MAGIC, f"format_version={FORMAT_VERSION:04d}",
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
    commit_at = sum(len(line) + 1 for line in out)
    out.append(f"jobs={len(jobs):08d}")
    out.append(f"jobs_sha256={_jobs_digest(jobs)}")
    out.append(f"append_end={0:012d}")
    commit_end = sum(len(line) + 1 for line in out)
    if commit_at // SECTOR != (commit_end - 1) // SECTOR:
        raise AssertionError("the schedule's commit fields straddle a disk sector")
    out.append("end_header")
    for j in jobs:
        out.append(job_line(SKIPPED if j.skipped else OUTSTANDING, 0, j))
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
        self.unfinished_append = 0       # bytes after the committed jobs that an append in flight wrote
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
        if magic != MAGIC.encode():
            raise self._corrupt(f"missing {MAGIC!r} first line")
        version = int(field("format_version", r"\d{4}"))
        if version != FORMAT_VERSION:
            raise ScheduleCorrupt(f"{self.path}: schedule format {version} is not supported by this coldrun "
                                  f"(it reads format {FORMAT_VERSION}); finish or export this experiment with the "
                                  f"coldrun that started it, or start it again in a new state dir")
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
        append_end = int(field("append_end", r"\d{12}"))
        if self._offsets["jobs"][0] // SECTOR != (pos - 2) // SECTOR:
            raise self._corrupt("the commit fields (jobs, jobs_sha256, append_end) straddle a disk sector")
        start, line = next_line()
        if line != b"end_header":
            raise self._corrupt(f"expected 'end_header' at byte {start}")
        for index in range(n_jobs):
            m = _JOB_LINE.match(data, pos)
            if not m:
                raise self._corrupt(f"job line {index} at byte {pos} is malformed or missing")
            self.jobs.append(JobLine(index, m.group(1).decode(), int(m.group(2)), int(m.group(3)),
                                     m.group(6).decode(), pos, int(m.group(4)), int(m.group(5))))
            pos = m.end()
        self.size = pos
        if append_end and not pos < append_end:
            raise self._corrupt(f"append_end={append_end} is not beyond the {pos} bytes of committed jobs")
        if len(data) > pos and not len(data) <= append_end:
            raise self._corrupt(f"{len(data) - pos} unexpected bytes after the last job line"
                                + (f", beyond the append in flight (append_end={append_end})" if append_end else ""))
        self.unfinished_append = len(data) - pos
        if _jobs_digest(self.jobs) != digest:
            raise self._corrupt("job keys, indices, iterations or params do not match jobs_sha256")

    @classmethod
    def load(cls, path: str | Path) -> "Schedule":
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise ColdrunError(f"{p.parent}: not a coldrun state dir (no schedule file); "
                               f"start one with coldrun start EXPERIMENT.toml") from None
        except PermissionError:
            raise ColdrunError(f"{p}: cannot read the schedule (permission denied)") from None
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

    # -- growing -------------------------------------------------------------
    @property
    def append_in_flight(self) -> bool:
        """An append announced by append_end that never committed (a cut; the boot discards it)."""
        return int(self.fields["append_end"]) != 0

    def append(self, specs: list[JobSpec], checkpoint: Callable[[str], None] = lambda point: None) -> list[JobLine]:
        """Add outstanding jobs durably (see the module doc); returns their lines.

        ``checkpoint(point)`` is called after each step: crash tests kill the
        supervisor there (the boot passes boot.crash_points.pause_point).  The
        lines are written in two parts so a kill can leave a torn line.
        """
        if self.append_in_flight:
            raise AssertionError("an unfinished append must be discarded before the next one")
        start = self.size
        lines: list[JobLine] = []
        text = b""
        for i, spec in enumerate(specs):
            lines.append(JobLine(len(self.jobs) + i, OUTSTANDING, 0, spec.pexec, spec.key, start + len(text),
                                 spec.iterations, spec.param))
            text += (job_line(OUTSTANDING, 0, spec) + "\n").encode()
        if not _JOB_LINE_RUN.fullmatch(text):
            raise AssertionError(f"appended job lines do not parse: {text!r}")
        end = start + len(text)
        self._set_field("append_end", f"{end:012d}")
        checkpoint("append-intent")
        fd = os.open(self.path, os.O_WRONLY)
        try:
            half = len(text) // 2
            self._write_all(fd, text[:half], start)
            checkpoint("append-half-written")
            self._write_all(fd, text[half:], start + half)
            os.fsync(fd)
        finally:
            os.close(fd)
        checkpoint("append-written")
        self.size = end
        self._commit(self.jobs + lines)
        self.jobs.extend(lines)
        checkpoint("append-committed")
        return lines

    def discard_unfinished_append(self) -> int:
        """Drop what an append cut short wrote after the committed jobs; returns the bytes dropped.

        Only under the state dir's lock (the boot's reconciliation)."""
        if not self.append_in_flight:
            return 0
        dropped = self.unfinished_append
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.ftruncate(fd, self.size)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.unfinished_append = 0
        self._set_field("append_end", f"{0:012d}")
        return dropped

    def _commit(self, jobs: list[JobLine]) -> None:
        """One pwrite of the job count, its digest and append_end = 0 (they share a sector)."""
        offset = self._offsets["jobs"][0]
        text = f"{len(jobs):08d}\njobs_sha256={_jobs_digest(jobs)}\nappend_end={0:012d}"
        end_offset, end_width = self._offsets["append_end"]
        if offset + len(text) != end_offset + end_width:
            raise AssertionError("schedule commit fields are not where the parser found them")
        self._pwrite(offset, text.encode())
        self.fields.update(jobs=f"{len(jobs):08d}", jobs_sha256=_jobs_digest(jobs), append_end=f"{0:012d}")

    def _write_all(self, fd: int, data: bytes, offset: int) -> None:
        if data and os.pwrite(fd, data, offset) != len(data):
            raise OSError(f"short write to {self.path}")

    # -- header fields -------------------------------------------------------
    @property
    def experiment_sha256(self) -> str:
        return self.fields["experiment_sha256"]

    @property
    def mode(self) -> Mode:
        return cast(Mode, self.fields["mode"].rstrip("_"))     # the header's pattern allows only these

    @property
    def order(self) -> str:
        return self.fields["order"].rstrip("_")

    @property
    def seed(self) -> int:
        return int(self.fields["seed"])

    @property
    def status(self) -> Status:
        return cast(Status, self.fields["status"].rstrip("_"))     # the header's pattern allows only these

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
