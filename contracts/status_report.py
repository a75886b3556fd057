"""`coldrun status DIR --json`: how an experiment stands, as one JSON object for tools (Ansible, dashboards).

The supervisor builds a ``StatusReport`` (``supervisor/state/status.py``) and
renders both the text form and the JSON from it, so the two cannot disagree.
The checked-in JSON Schema ``status_report.schema.json`` beside this file is
generated from the model (``python -m contracts.status_report``; a test keeps
it in sync).  README.md "coldrun status --json" documents every field.

Version rule: fields may be added within a version; removing a field or
changing what one means bumps ``STATUS_VERSION``.
"""

from __future__ import annotations

import json
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

from contracts.execution_record import Key

STATUS_FORMAT: Final = "coldrun-status"
STATUS_VERSION: Final = 1


class _Strict(BaseModel):
    # the schema describes what consumers read: every field is always present (null when it does not apply)
    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)


class JobCounts(_Strict):
    """Jobs of the schedule in each state."""

    outstanding: NonNegativeInt
    running: NonNegativeInt
    completed: NonNegativeInt
    errored: NonNegativeInt
    timed_out: NonNegativeInt
    crashed: NonNegativeInt
    skipped: NonNegativeInt


class LastError(_Strict):
    """The most recently written record of an errored or timed-out execution."""

    key: Key
    pexec: NonNegativeInt
    attempt: NonNegativeInt
    state: Literal["errored", "timed_out"]
    reason: str | None


class Failure(_Strict):
    """One failed process execution attempt: a record that errored or timed out, or a job the schedule marks
    crashed (no record: the boot that ran it never finished)."""

    key: Key
    pexec: NonNegativeInt
    attempt: NonNegativeInt
    state: Literal["errored", "timed_out", "crashed"]
    reason: str | None


class KeyProgress(_Strict):
    """One [stop] key's progress towards its CI target (from run_length.json; numbers null until decided)."""

    key: Key
    executions: NonNegativeInt = Field(description="the key's finished executions in the schedule")
    decided_on: NonNegativeInt | None = Field(description="executions the latest decision was made from; "
                                                          "null before the first decision")
    measure: str | None = Field(description="what mean and the widths are of: 'seconds per iteration' or "
                                            "'v (param units per second)'")
    mean: float | None
    ci_width: float | None = Field(description="full width of the confidence interval of the mean")
    target_width: float | None
    more_expected: NonNegativeInt | None = Field(description="executions the decision still expects")
    converged: bool
    done: bool
    reason: str | None


class RunLength(_Strict):
    """A [stop] experiment's target and each key's progress towards it."""

    target: str = Field(description="the target in one phrase, as the text form shows it")
    wps: bool
    min_executions: NonNegativeInt
    max_executions: NonNegativeInt
    keys: list[KeyProgress]


class PairProgress(_Strict):
    """One pair of a [duet] experiment: its pair executions (jobs) so far."""

    pair: str = Field(description="the pair's job key, a/b")
    a: Key
    b: Key
    completed: NonNegativeInt
    failed: NonNegativeInt = Field(description="pair executions errored, timed out or crashed")
    remaining: NonNegativeInt = Field(description="outstanding or running")
    kept_sides: NonNegativeInt = Field(description="sides of failed pair executions that completed on their own; "
                                                   "their records keep the data, marked partner_failed")


class BatchProgress(_Strict):
    """One batch of a [screening] plan (treatments sharing the levels that need a reboot; or the boot check)."""

    batch: NonNegativeInt
    boot_check: bool = Field(description="the boot check's batch (one execution per boot, per level)")
    levels: dict[str, str] = Field(description="the batch's levels of the factors that need a reboot (empty for "
                                               "the boot check, which varies them)")
    treatments: NonNegativeInt = Field(description="treatments planned in the batch")
    treatments_done: NonNegativeInt = Field(description="treatments whose every run in the batch has ended")
    runs: NonNegativeInt = Field(description="jobs of the batch: treatments x replicates x benchmarks")
    runs_done: NonNegativeInt = Field(description="of those, ended (completed, errored, timed out or crashed)")


class ScreeningProgress(_Strict):
    """A [screening] experiment's plan so far, per batch."""

    design: str
    batches: list[BatchProgress] = Field(description="in the order they run")
    switches_left: NonNegativeInt = Field(description="reboot-level switches the remaining order still needs; "
                                                      "each is made before the reboot into its batch (a boot "
                                                      "of its own only when that switch failed)")


class StatusReport(_Strict):
    """Everything `coldrun status` says about a state dir."""

    format: Literal["coldrun-status"] = STATUS_FORMAT
    version: Literal[1] = STATUS_VERSION
    experiment: str
    state_dir: str = Field(description="absolute path")
    machine: str = Field(description="host name of the machine status ran on")
    status: Literal["running", "finished", "aborted", "stopped"]
    mode: Literal["simulated", "hardware"]
    counts: JobCounts
    done: NonNegativeInt = Field(description="completed + errored + timed_out + crashed")
    total: NonNegativeInt = Field(description="jobs in the schedule, skipped ones excluded")
    more_expected: NonNegativeInt = Field(description="executions [stop] targets expect beyond the schedule's "
                                                      "jobs (0 without [stop] or when not running)")
    boots: NonNegativeInt
    eta_seconds: float | None = Field(description="while running: seconds of work left (each remaining job's "
                                                  "run and waits), reboots not included; null when unknown "
                                                  "or not running")
    supervisor_pid: int | None = Field(description="pid in the lock file while running and alive (may be stale)")
    unattended: bool = Field(default=False, description="running, but no supervisor holds the state dir's lock: "
                             "nothing makes progress until coldrun resume DIR (on the benchmark machine, its "
                             "next boot)")
    last_error: LastError | None
    failures: list[Failure] = Field(description="every failed execution attempt, in schedule order (a re-run "
                                                "job's failed attempts each); [] when none")
    stop_reason: str | None = Field(description="why the experiment stopped (status stopped only)")
    altered: list[str] = Field(description="one line per way the records were altered (exit status 4)")
    files_changed: list[str] = Field(default_factory=list, description="executions that ran with a key's files "
                                     "changed since start (on_changed_files = 'flag'; record flag files_changed): "
                                     "'key #pexec attempt n'")
    run_length: RunLength | None = Field(description="[stop] experiments only")
    pairs: list[PairProgress] | None = Field(default=None, description="[duet] experiments only: per pair")
    screening: ScreeningProgress | None = Field(default=None, description="[screening] experiments only")


def schema_text() -> str:
    """The JSON Schema of StatusReport, as checked in beside this file."""
    return json.dumps(StatusReport.model_json_schema(mode="serialization"), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
