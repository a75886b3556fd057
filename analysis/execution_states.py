"""What happened to each scheduled process execution, and how reports name it.

Every input keeps one slot per scheduled process execution; a slot that has
no iteration times says why through its state. The states (coldrun's job
states, contracts.state_view's, plus two the analysis itself gives):

- ``completed``: has iteration times and is analysed;
- ``errored``, ``timed_out``, ``crashed``, ``skipped``, ``outstanding``,
  ``running``: recorded by coldrun (``execution_states`` of either export,
  else Krun's ``pexec_flags`` letters, read as contracts.state_view says); no data;
- ``invalid``: had times, but the loader rejected them (NaN, negative, not
  numbers; a warning says which);
- ``empty``: an empty execution in a file that records no states (a plain
  Krun or warmup_stats CSV file, where warmup_stats reads it as "crashed").

Only ``completed`` executions can be classified; the others are listed and
counted apart, never as a classification. The annotated results carry the
states as ``execution_states`` ({key: [state per process execution]}).
"""

from __future__ import annotations

from typing import Any

from analysis.errors import WarningSink
from contracts import state_view
from contracts.state_view import COMPLETED

STATES_KEY = state_view.STATES_KEY   # where annotated results and coldrun's exports keep the states
# coldrun's, in results read from either export (and so in annotated results): per key, each process
# execution's record flags, for completed executions the supervisor flagged (else []).
FLAGS_KEY = state_view.FLAGS_KEY

INVALID = "invalid"
EMPTY = "empty"
# What a failed slot is called in annotate's warnings, the summary and tables.
LABELS = {
    state_view.ERRORED: "errored (no data)",
    state_view.TIMED_OUT: "timed out (no data)",
    state_view.CRASHED: "crashed (no data)",
    state_view.SKIPPED: "skipped (no data)",
    state_view.OUTSTANDING: "not run yet (no data)",
    state_view.RUNNING: "still running (no data)",
    INVALID: "invalid data (dropped)",
    EMPTY: "crashed (no data)",
}
KNOWN_STATES = frozenset(LABELS) | {COMPLETED}


def execution_number(pexec: int) -> str:
    """How every report names process execution `pexec` (0-based in the data):
    '#1' is the first, as in the paper's plot titles; titles, captions and
    tables all go through here so one execution has one number."""
    return f"#{pexec + 1}"


def label(state: str) -> str:
    return LABELS.get(state, f"{state} (no data)")


def from_flags(results: dict, path: Any, warn: WarningSink) -> dict[str, list[str]]:
    """One state per process execution of every key in ``wallclock_times``.

    As contracts.state_view.krun_states reads them (``execution_states``, else
    ``pexec_flags``); an empty execution without either is ``empty``. A flag
    list that does not match the executions is ignored with a warning.
    """
    wct = results.get("wallclock_times") or {}
    flags = results.get("pexec_flags")
    out: dict[str, list[str]] = {}
    for key, executions in wct.items():
        states = state_view.krun_states(results, key, len(executions), KNOWN_STATES)
        if states is None:
            if isinstance(flags, dict) and key in flags:
                warn(f"{path}: {key}: pexec_flags do not list one flag per process execution; ignored")
            states = [COMPLETED if times else EMPTY for times in executions]
        # Times decide: a "completed" slot without times has no data.
        out[key] = [EMPTY if s == COMPLETED and not times else s for s, times in zip(states, executions)]
    return out


def failed(states: list[str]) -> list[tuple[int, str]]:
    """(index, state) of every execution without usable data."""
    return [(i, s) for i, s in enumerate(states) if s != COMPLETED]


def checked_flags(results: dict, path: Any, warn: WarningSink) -> None:
    """Keep FLAGS_KEY's table only where it lists one list of flag names per process execution of a key in
    ``wallclock_times``; anything else in it (a hand-edited or foreign file) is dropped with a warning."""
    table = results.get(FLAGS_KEY)
    if table is None:
        return
    wct = results.get("wallclock_times") or {}
    kept = {}
    for key, per_execution in (table.items() if isinstance(table, dict) else ()):
        if key in wct and isinstance(per_execution, list) and len(per_execution) == len(wct[key]) and all(
                isinstance(flags, list) and all(isinstance(f, str) for f in flags) for flags in per_execution):
            kept[key] = per_execution
        else:
            warn(f"{path}: {FLAGS_KEY}.{key}: not one list of flag names per process execution; ignored")
    if not isinstance(table, dict):
        warn(f"{path}: {FLAGS_KEY}: not a table of keys; ignored")
    if kept:
        results[FLAGS_KEY] = kept
    else:
        results.pop(FLAGS_KEY)
