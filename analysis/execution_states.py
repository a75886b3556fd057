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
# coldrun's, in results read from a native export (and so in annotated results): per key, each process
# execution's record flags, for completed executions the supervisor flagged (else []).
FLAGS_KEY = "execution_flags"

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


def record_flags(executions: Any, wallclock_times: dict) -> dict[str, list[list[str]]]:
    """FLAGS_KEY's table from a native export's records: for each key with a flagged completed execution
    (its latest attempt), every execution's flags, in wallclock_times' order."""
    latest: dict[tuple[str, int], dict] = {}
    for r in executions if isinstance(executions, list) else []:
        if not (isinstance(r, dict) and "record_version" in r and isinstance(r.get("key"), str)
                and isinstance(r.get("pexec"), int)):
            continue
        where = (r["key"], r["pexec"])
        attempt = r.get("attempt") if isinstance(r.get("attempt"), int) else 0
        if where not in latest or attempt >= (latest[where].get("attempt") or 0):
            latest[where] = r
    flagged = {where: [str(f) for f in r["flags"]] for where, r in latest.items()
               if r.get("state") == COMPLETED and isinstance(r.get("flags"), list) and r["flags"]}
    return {key: [flagged.get((key, i), []) for i in range(len(times))]
            for key, times in wallclock_times.items() if any((key, i) in flagged for i in range(len(times)))}
