"""Exit codes that say how an experiment stands, shared by `status`, `resume` and `start --simulate-reboots`.

    0  finished, every process execution completed (and every [stop] key reached its target)
    3  stopped on a fatal check (fix the cause, then resume --continue, or abort)
    6  finished, but some executions errored, timed out or crashed
    7  aborted
    8  still running (executions outstanding)
    9  finished, every execution completed, but some [stop] keys stopped at max_executions without
       reaching their target (failures take precedence: 6)

Other codes are errors of the command itself: 2 bad input, 4 corrupt
schedule, 5 another supervisor holds the state dir's lock.
"""

from __future__ import annotations

from supervisor.state.schedule import Schedule

EXIT_CLEAN = 0
EXIT_STOPPED = 3
EXIT_FAILURES = 6
EXIT_ABORTED = 7
EXIT_RUNNING = 8
EXIT_UNCONVERGED = 9

FAILED_STATES = ("errored", "timed_out", "crashed")


def failures(schedule: Schedule) -> int:
    """Process executions that ended errored, timed out or crashed."""
    counts = schedule.counts()
    return sum(counts[k] for k in FAILED_STATES)


def exit_code(schedule: Schedule, short_of_target: int) -> int:
    """The code for the experiment's current standing (see the table above); ``short_of_target``: keys that
    ended short of their target (the kind's ``short_of_target``)."""
    return standing_code(schedule.status, failures(schedule), short_of_target)


def standing_code(status: str, failed: int, unconverged_keys: int = 0) -> int:
    """The code for a status ("running", "finished", ...) with ``failed`` failed executions and
    ``unconverged_keys`` [stop] keys that ended at max_executions short of their target."""
    if status == "finished":
        if failed:
            return EXIT_FAILURES
        return EXIT_UNCONVERGED if unconverged_keys else EXIT_CLEAN
    return {"stopped": EXIT_STOPPED, "aborted": EXIT_ABORTED}.get(status, EXIT_RUNNING)
