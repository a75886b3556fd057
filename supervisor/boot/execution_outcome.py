"""How one process execution (or one side of a pair execution) ended: a typed outcome.

The schedule's flag and the record's ``outcome``/``state`` are derived from it
(contracts/execution_record.py); ``cause`` says why it did not complete, so
the boot decides on types, never on the words of a reason.  A crashed
execution has no outcome of its own: the boot that ran it never finished, and
reconciliation marks its job in the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.execution_record import STATE_OF_OUTCOME, Cause, Outcome, RecordState

# A key whose runner cannot even start fails every execution alike (boot/one_boot.py stops the experiment).
LAUNCH_CAUSES = ("launch_failure", "runner_setup")


@dataclass(frozen=True)
class ExecutionOutcome:
    flag: Outcome               # the schedule's flag: C completed, E errored, T timed out, O re-run requested
    cause: Cause | None = None  # None when completed
    reason: str | None = None   # one line, for people

    @property
    def state(self) -> RecordState:
        return STATE_OF_OUTCOME[self.flag]

    @property
    def completed(self) -> bool:
        return self.flag == "C"

    @property
    def cannot_launch(self) -> bool:
        return self.cause in LAUNCH_CAUSES


COMPLETED = ExecutionOutcome("C")


def errored(cause: Cause, reason: str) -> ExecutionOutcome:
    return ExecutionOutcome("E", cause, reason)


def timed_out(reason: str) -> ExecutionOutcome:
    return ExecutionOutcome("T", "timeout", reason)


def rerun(reason: str) -> ExecutionOutcome:
    return ExecutionOutcome("O", "disturbed", reason)


# A side's own failure beats a partner's: the barrier makes the survivor exit 4 ("abandoned"), which says
# nothing about it.  Timed out > errored > re-run > completed decides a pair's outcome.
_WORST_FIRST = ("T", "E", "O", "C")


def worst(outcomes: list[ExecutionOutcome]) -> ExecutionOutcome:
    return min(outcomes, key=lambda o: _WORST_FIRST.index(o.flag))
