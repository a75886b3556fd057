"""One view of a state dir: its execution slots, and how each reading of them is made.

A **slot** is one scheduled process execution.  Every job of the schedule
gives one (a [duet] pair job two: its sides a then b, each under its own key),
whatever its state, skipped ones included: no slot is ever dropped, so a
failed execution never shifts the others of its key.  A slot has

- its key (bench:vm:variant) and ``pexec``, the job's process execution index
  (a pair side: the pair execution's);
- its state, the schedule's word (``SLOT_STATES``; supervisor/state/schedule.py
  keeps the one-byte flags on disk);
- for a state in ``RECORDED``, the final record of its job (a native entry, when
  the analysis reads it back), whose measurements count only when it completed.

The readings, made here and nowhere else:

- Krun's results shape (``krun_results``): ``coldrun export --format krun``
  writes it, and the analysis turns a native bundle into it with the same
  function.  Per key, one entry per slot in every per-key list, in the order
  ``by_key`` gives; measurement lists empty unless completed (as Krun stored a
  failed execution); ``pexec_flags`` Krun's letter (``KRUN_FLAG``),
  ``execution_states`` the state itself (Krun's letters cannot tell a crash
  from an error, or running from not run); ``eta_estimates`` the record's
  duration (0.0 without one); ``error_flag`` as Krun's (``raises_error_flag``);
  ``execution_flags`` (coldrun's, only for keys with one) each slot's record
  flags where it completed, else [] (``files_changed``, ``thermal_throttle``, ...).
- the native bundle: its ``executions`` list every slot in schedule order
  (contracts.execution_record.native_entry: the record, or ExecutionSlot's
  fields); the analysis reads them back with ``native_slots``.
- a Krun-shaped file read back (``krun_states``): its ``execution_states``, or
  in a file that has none (Krun's own, older exports) its letters
  (``STATE_OF_KRUN_FLAG``).

No pydantic: the analysis reads plain Krun files without loading the record
models (which import this module, not the other way round); slots hold
records or native entries as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Iterable, Mapping

OUTSTANDING = "outstanding"
RUNNING = "running"
COMPLETED: Final = "completed"
ERRORED: Final = "errored"
TIMED_OUT: Final = "timed_out"
CRASHED = "crashed"
SKIPPED = "skipped"
SLOT_STATES = (OUTSTANDING, RUNNING, COMPLETED, ERRORED, TIMED_OUT, CRASHED, SKIPPED)
# States whose job's final attempt wrote a record (a crashed or unrun job has none).
RECORDED = frozenset({COMPLETED, ERRORED, TIMED_OUT})

# Krun's pexec_flags letter of each state: its results know C, E and T, its manifest O (to run) and S (skipped).
# To Krun a crash was an error and a running execution one not run yet; execution_states keeps them apart.
KRUN_FLAG = {COMPLETED: "C", ERRORED: "E", CRASHED: "E", TIMED_OUT: "T", OUTSTANDING: "O", RUNNING: "O",
             SKIPPED: "S"}
STATE_OF_KRUN_FLAG = {"C": COMPLETED, "E": ERRORED, "T": TIMED_OUT, "O": OUTSTANDING, "S": SKIPPED}
STATES_KEY = "execution_states"
# Per key with a flagged completed execution: each slot's record flags (completed ones; else []).
FLAGS_KEY = "execution_flags"
# Keys measured in start-up mode: their wallclock_times are Krun's startup.krun shape, [t_wrapper, t_runner]
# per execution (absolute seconds), not iteration times; an analysis reads them as start-up times.
STARTUP_KEYS = "startup_keys"
MEASUREMENT_KEYS = ("wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts")


@dataclass(frozen=True)
class Slot:
    """One scheduled process execution (see the module doc)."""

    key: str
    pexec: int
    state: str
    # Its job's final record, or its native entry (contracts.execution_record's models, which import this
    # module); None: nothing recorded.
    entry: Any = None
    job_index: int | None = None
    attempt: int | None = None           # attempts made (0: never claimed)
    pair_id: str | None = None           # a pair execution's side ("a/b#pexec"): ordered as listed, not by pexec
    side: str | None = None

    @property
    def paired(self) -> bool:
        return self.pair_id is not None

    @property
    def startup(self) -> bool:
        return getattr(self.entry, "startup", None) is not None

    def measurements(self, name: str) -> list:
        """One of MEASUREMENT_KEYS: the entry's list when the slot completed, else empty.  A start-up
        execution's wallclock_times are its two clock readings, as warmup_experiment's startup runners
        printed them (the outer runner's time, then the inner runner's), so the paper's scripts read it."""
        if self.state != COMPLETED or self.entry is None:
            return []
        if name == "wallclock_times" and self.startup:
            return [float(self.entry.startup.wrapper_time), float(self.entry.startup.runner_time)]
        return getattr(self.entry, name)

    @property
    def duration(self) -> float:
        """Krun's eta_estimates entry: the runner's duration, 0.0 where none was measured."""
        return getattr(self.entry, "duration_seconds", None) or 0.0

    @property
    def flags(self) -> list[str]:
        """The record's post-check flags when the slot completed (a failed one's state says enough)."""
        if self.state != COMPLETED or self.entry is None:
            return []
        return [str(f) for f in getattr(self.entry, "flags", None) or ()]

    @property
    def raises_error_flag(self) -> bool:
        """Krun's error_flag: an errored execution or a kernel_log post-check flag; coldrun adds a crashed one.
        Not a timeout (as Krun)."""
        return self.state in (ERRORED, CRASHED) or "kernel_log" in (getattr(self.entry, "flags", None) or ())


def by_key(slots: Iterable[Slot]) -> dict[str, list[Slot]]:
    """Each key's slots in Krun's order, keys in order of first appearance.

    A key's own executions go by pexec: a pexec listed twice keeps the completed one, else the later; a pexec
    none names (below the largest) is an outstanding slot.  The sides of pair executions go in the order
    listed (the schedule's), so an A/A pair's key has two executions per pair execution."""
    grouped: dict[str, list[Slot]] = {}
    for slot in slots:
        grouped.setdefault(slot.key, []).append(slot)
    out: dict[str, list[Slot]] = {}
    for key, listed in grouped.items():
        if any(s.paired for s in listed):
            out[key] = listed
            continue
        chosen: dict[int, Slot] = {}
        for s in listed:
            if s.pexec not in chosen or s.state == COMPLETED or chosen[s.pexec].state != COMPLETED:
                chosen[s.pexec] = s
        out[key] = [chosen.get(p) or Slot(key, p, OUTSTANDING) for p in range(max(chosen) + 1)]
    return out


def krun_results(slots: Iterable[Slot]) -> dict[str, Any]:
    """Krun's per-key lists, ``execution_states`` and ``error_flag`` of these slots (audit and config are the
    caller's)."""
    slots = list(slots)
    out: dict[str, Any] = {name: {} for name in (*MEASUREMENT_KEYS, "pexec_flags", STATES_KEY, "eta_estimates")}
    for key, row in by_key(slots).items():
        for name in MEASUREMENT_KEYS:
            out[name][key] = [s.measurements(name) for s in row]
        out["pexec_flags"][key] = [KRUN_FLAG[s.state] for s in row]
        out[STATES_KEY][key] = [s.state for s in row]
        out["eta_estimates"][key] = [s.duration for s in row]
        flags = [s.flags for s in row]
        if any(flags):
            out.setdefault(FLAGS_KEY, {})[key] = flags
    startup = sorted({s.key for s in slots if s.startup})
    if startup:
        out[STARTUP_KEYS] = startup
    out["error_flag"] = error_flag(slots)
    return out


def error_flag(slots: Iterable[Slot]) -> bool:
    """Both exports' ``error_flag``: any slot that raises it (Slot.raises_error_flag)."""
    return any(s.raises_error_flag for s in slots)


def native_slots(entries: Iterable[Any], jobs: Iterable[Any]) -> list[Slot]:
    """A native bundle's slots: its ``executions`` entries (already validated as ExecutionSlot), in the order
    listed, then a slot without data for each job of a single key that no entry names, in the job's state
    (exports before skipped jobs had entries; an entry the reader had to drop).  A pair job's key ("A/B") is
    no key: its sides are entries."""
    slots = [Slot(e.key, e.pexec, e.state, e, e.job_index, e.attempt, e.pair_id, e.side) for e in entries]
    named = {(s.key, s.pexec) for s in slots}
    for job in jobs:
        if not isinstance(job, Mapping):
            continue
        key, pexec, state = job.get("key"), job.get("pexec"), job.get("state")
        if isinstance(key, str) and "/" not in key and isinstance(pexec, int) and not isinstance(pexec, bool) \
                and state in SLOT_STATES and (key, pexec) not in named:
            slots.append(Slot(key, pexec, state))
            named.add((key, pexec))
    return slots


def krun_states(results: Mapping[str, Any], key: str, n: int, known: Iterable[str] = SLOT_STATES) -> list[str] | None:
    """The states of ``key``'s ``n`` executions in a Krun-shaped file: its ``execution_states`` when they are
    ``n`` names from ``known``, else its ``pexec_flags`` letters (an unknown letter reads "flag X"); None
    when it records neither for every execution."""
    names = _per_execution(results.get(STATES_KEY), key, n)
    if names is not None and set(names) <= set(known):
        return names
    letters = _per_execution(results.get("pexec_flags"), key, n)
    return None if letters is None else [STATE_OF_KRUN_FLAG.get(f, f"flag {f}") for f in letters]


def _per_execution(table: Any, key: str, n: int) -> list[str] | None:
    values = table.get(key) if isinstance(table, Mapping) else None
    if isinstance(values, list) and len(values) == n and all(isinstance(v, str) for v in values):
        return values
    return None
