"""The execution record: one JSON file per process execution attempt.

The supervisor builds it (``supervisor/boot/execution.py``) and writes it to
``executions/job<index>-attempt<n>.json``; its exports and the analysis's
native-bundle reader read it back through these models.  The checked-in JSON
Schema ``execution_record.schema.json`` beside this file is generated from
``ExecutionRecord`` (``python -m contracts.execution_record``; a test keeps it
in sync).

On disk a record holds every required field; the launch and process fields
are there once the runner was launched, ``instrumentation``, ``startup`` and
the iteration timeline (``iteration_start_ns`` ...) when the runner wrote them (a field never set is
left out, not written as null).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, ValidationError, model_validator

from contracts import keys
from contracts.state_view import COMPLETED, ERRORED, MEASUREMENT_KEYS, SLOT_STATES, TIMED_OUT, Slot

__all__ = ["MEASUREMENT_KEYS", "ExecutionRecord", "ExecutionSlot", "native_entry", "problem"]

RECORD_VERSION: Final = 1

# What the schedule's flag becomes once the record is written; "O" is a re-run
# requested by the post-checks (the job goes back to outstanding).
Outcome = Literal["C", "E", "T", "O"]
RecordState = Literal["completed", "errored", "timed_out", "rerun"]
STATE_OF_OUTCOME: dict[str, RecordState] = {"C": COMPLETED, "E": ERRORED, "T": TIMED_OUT, "O": "rerun"}
OUTCOME_RERUN = "O"
# Why an execution did not complete (null when it did): typed, so nothing parses the reason's words.
Cause = Literal[
    "launch_failure",     # the runner could not be built or started (a missing file, an interpreter, a cpuset)
    "runner_setup",       # the runner exited 2 (PROTOCOL.md: usage or setup) before any iteration
    "timeout",            # killed at execution_timeout
    "signal",             # killed by a signal
    "exit_status",        # exited non-zero
    "protocol_refusal",   # exited 0, but its results document was refused (or too large)
    "not_in_force",       # the execution's conditions were not as planned (a screening level, a pair's CPU)
    "partner_failed",     # a pair execution whose other side failed
    "disturbed",          # completed, but the post-checks asked for a re-run
]
# Every state a scheduled execution can be in (contracts.state_view: the schedule's names).
SlotState = Literal[SLOT_STATES]  # type: ignore[valid-type]

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
U64 = Annotated[int, Field(ge=0, le=2**64 - 1)]
PerCore = list[list[U64]]
Key = Annotated[str, Field(pattern=r"^[^:]+:[^:]+:[^:]+$", description="bench:vm:variant")]


class Counters(BaseModel):
    """Per-core counters were read (available) or not, and why not."""

    model_config = ConfigDict(extra="forbid", strict=True)
    available: bool
    reason: str | None


class Startup(BaseModel):
    """Startup-time mode: the wrapper's and the dummy runner's clock readings and their difference."""

    model_config = ConfigDict(extra="forbid", strict=True)
    clock: str
    wrapper_time: str
    runner_time: str
    seconds: Seconds


class PairSide(BaseModel):
    """One side of a pair execution (duet benchmarking): which, where it ran, and how the pair ended.

    Both sides' records of a pair execution carry the pair's outcome; a side
    whose own run completed while its partner failed keeps its measurements,
    with ``own_outcome`` "C" and ``partner_failed`` true.
    """

    model_config = ConfigDict(extra="forbid", strict=True)
    pair_id: str = Field(description="the pair execution: the job's pair key and pexec, a/b#n")
    side: Literal["a", "b"]
    partner_key: Key
    start_order: Literal["AB", "BA"] = Field(description="which side was started first")
    order_seed: NonNegativeInt = Field(description="the schedule's seed the start order was drawn from")
    cpu: NonNegativeInt = Field(description="the CPU this side was pinned to")
    placement: Literal["sched_setaffinity", "sched_setaffinity+taskset"] = Field(
        description="how it was pinned: affinity set before exec; +taskset: again after the platform's wrappers "
                    "moved it into the pinning partition (hardware with pinning)")
    verified_cpus: list[NonNegativeInt] | None = Field(
        description="the runner's CPU affinity read back once it was exec'd (null: it never started); with "
                    "+taskset this is read before the wrappers ran")
    placement_mechanism: Literal["cpuset", "affinity"] = Field(
        default="affinity",
        description="what kept it on its CPU: its execution cgroup's cgroup v2 cpuset (affinity set too), or "
                    "affinity alone where cgroup v2 has no cpuset controller (records before this field: affinity)")
    effective_cpus: list[NonNegativeInt] | None = Field(
        default=None, description="cpuset: the cgroup's cpuset.cpus.effective, read before the runner started")
    placement_note: str | None = Field(default=None, description="affinity: why no cpuset was used")
    cpus_at_end: list[NonNegativeInt] | None = Field(
        default=None, description="read again when the runner ended (before what it left was killed): the union "
                                  "of the CPU affinities of the runner and its processes; anything but [cpu] "
                                  "fails the side (not_in_force) and flags it placement_widened")
    effective_cpus_at_end: list[NonNegativeInt] | None = Field(
        default=None, description="cpuset: the cgroup's cpuset.cpus.effective read again at the end")
    barrier: str | None = Field(description="the duet barrier's POSIX shared-memory name (empty: the pair never "
                                            "started, so none was made); null: [duet] barrier = false, the sides "
                                            "ran unsynchronised (pair iterations by overlap)")
    spin_us: NonNegativeInt | None = Field(
        default=0, description="microseconds a side spins at the barrier before sleeping (COLDRUN_DUET_SPIN_US); "
                               "null without a barrier (records before this field: 0)")
    own_outcome: Outcome = Field(description="how this side's own run ended")
    own_reason: str | None
    own_cause: Cause | None = Field(default=None, description="why this side's own run did not complete")
    partner_failed: bool


class MemoryLimit(BaseModel):
    """How the run's memory was bounded, all its processes together (supervisor/launch/memory_limit.py)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    mechanism: Literal["cgroup2", "cgroup1", "none"] = Field(
        description="the run's own cgroup v2 (memory.max), a cgroup v1 memory cgroup (hybrid hosts), or none: "
                    "RLIMIT_DATA/RLIMIT_STACK per process only (note says why)")
    limit_bytes: NonNegativeInt | None = Field(default=None, description="heap_limit + stack_limit")
    swap_off: bool | None = Field(default=None, description="swap limited to 0 (null: no swap accounting)")
    hits: NonNegativeInt | None = Field(default=None, description="times usage reached the limit")
    oom_kills: NonNegativeInt | None = Field(default=None, description="processes the OOM killer ended")
    peak_bytes: NonNegativeInt | None = Field(default=None, description="the most the cgroup used")
    note: str | None = None


class ScreeningLevels(BaseModel):
    """A screening experiment's execution: its design row and the factor levels in force (read back)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    treatment: NonNegativeInt = Field(description="the row of the design (in the export's design order)")
    levels: dict[str, str] = Field(description="factor -> level as read back before or at the launch; a level "
                                               "that was not in force reads \"not in force: ...\"")
    batch: NonNegativeInt = Field(description="the split-plot batch (levels of the factors needing a reboot)")
    replicate: NonNegativeInt = Field(description="the replicate within the batch (boot check: the boot's position)")


class ExecutionSlot(BaseModel):
    """One scheduled execution as a native export lists it: which one, its state, its measurements.

    A slot whose job has a record carries the whole record; the others (crashed,
    skipped, outstanding, running) carry only these fields, measurements empty
    (contracts.state_view says which slots there are and how each is read).
    """

    model_config = ConfigDict(strict=True, extra="ignore")
    key: Key
    pexec: NonNegativeInt
    state: SlotState
    job_index: NonNegativeInt | None = None
    bench: str | None = None
    vm: str | None = None
    variant: str | None = None
    attempt: NonNegativeInt | None = Field(default=None, description="attempts made (0: never claimed)")
    wallclock_times: list[Seconds] = []
    core_cycle_counts: PerCore = []
    aperf_counts: PerCore = []
    mperf_counts: PerCore = []
    pair: PairSide | None = Field(default=None, description="set on both sides of a pair execution")
    # A native export's slot of a pair execution's side (with or without a record): which pair execution.
    pair_id: str | None = None
    side: Literal["a", "b"] | None = None
    iteration_start_ns: list[int] | None = None
    iteration_end_ns: list[int] | None = None
    screening: ScreeningLevels | None = None
    # A record's, read back for Krun's eta_estimates and error_flag (state_view.Slot); a slot without one has none.
    duration_seconds: float | None = None
    flags: list[str] = []
    # A start-up execution's two clock readings: Krun's shape of its wallclock_times (state_view.Slot).
    startup: Startup | None = None


class ExecutionRecord(ExecutionSlot):
    """The record of one process execution attempt, written once, before its schedule flag changes."""

    model_config = ConfigDict(strict=True, extra="forbid", validate_assignment=True,
                              title="coldrun execution record")

    record_version: Literal[1]
    supervisor_version: str
    job_index: NonNegativeInt
    key: Key
    bench: str
    vm: str
    variant: str
    pexec: NonNegativeInt
    attempt: PositiveInt
    boot: NonNegativeInt = Field(description="the boot (schedule boot count) that ran it")
    iterations: PositiveInt = Field(description="in-process iterations asked of this execution: the VM's, or what "
                                                "[stop] chose")
    param: int = Field(description="the run_iter parameter of this execution: the benchmark's, or what "
                                    "[stop.wps] chose")
    mode: Literal["iterations", "startup"]
    instrument: bool
    debug: bool

    # The runner's measurements: filled from its document when it completed, else empty.
    wallclock_times: list[Seconds]
    core_cycle_counts: PerCore
    aperf_counts: PerCore
    mperf_counts: PerCore
    counters: Counters | None
    instrumentation: dict[str, Any] | None = None
    startup: Startup | None = None
    # Pair executions (PROTOCOL.md optional keys): the time waited at the duet barrier before each
    # iteration (its start and end, absolute wall-clock ns, are ExecutionSlot's: exports carry them too).
    barrier_wait_ns: list[NonNegativeInt] | None = None

    # Post-checks and the re-run policy.
    flags: list[str] = Field(description="post-check flags (kernel_log, thermal_throttle, ...), rerun_exhausted")
    platform_before: dict[str, Any]
    platform_after: dict[str, Any] | None
    rerun_requested: bool

    outcome: Outcome
    state: RecordState
    reason: str | None = Field(description="why it did not complete (one line); null when completed")
    cause: Cause | None = Field(default=None, description="why it did not complete, as a type; null when completed "
                                                          "(and in records written before this field)")

    # The launch: set once the runner command was built.
    argv: list[str] | None = None
    environment: dict[str, str] | None = None
    environment_bytes: NonNegativeInt | None = None
    cwd: str | None = None

    # The process: set once the runner was started.
    runner_pid: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    signal_name: str | None = None
    timed_out: bool | None = None
    started_at: float | None = Field(default=None, description="wall clock, epoch seconds")
    ended_at: float | None = None
    duration_seconds: float | None = Field(default=None, description="monotonic seconds from start to exit")
    rusage: dict[str, float] | None = None
    stdout_tail: str | None = None
    stdout_bytes: NonNegativeInt | None = None
    stderr_tail: str | None = None
    stderr_bytes: NonNegativeInt | None = None
    launch_error: str | None = None
    results_bytes: NonNegativeInt | None = None
    containment: Literal["cgroup", "process_group"] | None = Field(
        default=None, description="how the runner and its processes were held: a cgroup v2 of its own, or "
                                  "(fallback) its process group plus descendants reaped as subreaper")
    leftover_processes: NonNegativeInt | None = Field(
        default=None, description="processes besides the runner still alive at its exit (or timeout), then killed")
    memory_limit: MemoryLimit | None = Field(
        default=None, description="the bound on all the run's processes' memory and what the kernel counted; "
                                  "the OOM killer ending any of them flags the record memory_limit")

    @model_validator(mode="after")
    def _consistent(self) -> ExecutionRecord:
        if self.key != f"{self.bench}:{self.vm}:{self.variant}":
            raise ValueError(f"key {self.key!r} is not bench:vm:variant "
                             f"({self.bench!r}, {self.vm!r}, {self.variant!r})")
        if self.state != STATE_OF_OUTCOME[self.outcome]:
            raise ValueError(f"state {self.state!r} does not match outcome {self.outcome!r}")
        return self

    def measurements(self) -> dict[str, Any]:
        """The runner's measurement lists by name (what the platform's post-checks read)."""
        return {k: getattr(self, k) for k in MEASUREMENT_KEYS}

    def as_json(self) -> dict[str, Any]:
        """The record as written to disk: fields never set are left out."""
        return self.model_dump(mode="json", exclude_unset=True)


def native_entry(slot: Slot) -> dict[str, Any]:
    """A state_view slot as a native bundle's ``executions`` entry: its record as written, with the slot's key,
    pexec and state; without one, ExecutionSlot's fields (measurement lists empty).  A pair side also says its
    pair execution (pair_id) and side."""
    ident: dict[str, Any] = {"key": slot.key, "pexec": slot.pexec, "state": slot.state}
    if slot.paired:
        ident.update(pair_id=slot.pair_id, side=slot.side)
    if slot.entry is not None:
        return dict(slot.entry.as_json(), **ident)
    bench, vm, variant = keys.Key.parse(slot.key)
    return ExecutionSlot(job_index=slot.job_index, bench=bench, vm=vm, variant=variant, attempt=slot.attempt,
                         **ident).model_dump(mode="json", exclude_none=slot.paired,
                                             exclude={"screening", "duration_seconds", "flags", "startup"})


def problem(err: ValidationError) -> str:
    """One line for a validation error: the first field at fault, what is wrong, how many more."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "the whole record"
    more = err.error_count() - 1
    return f"{where}: {first['msg']}" + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def schema_text() -> str:
    """The JSON Schema of ExecutionRecord, as checked in beside this file."""
    return json.dumps(ExecutionRecord.model_json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
