"""The one validator of a runner's results document (PROTOCOL.md, version 1).

The runner tests and the supervisor apply the same rules: ``parse_document``
with no run expectations checks what every valid document satisfies; the
supervisor passes what the run it launched implies (iteration count, startup
mode, instrumentation).  Every refusal is a ``ProtocolError`` whose message is
one line: the supervisor stores it as the reason in the execution record.
"""

from __future__ import annotations

import json
import math
from typing import Any

from iteration_runners import PROTOCOL_VERSION

REQUIRED_KEYS = frozenset(
    {"protocol_version", "wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts", "counters"}
)
TIMELINE_KEYS = ("iteration_start_ns", "iteration_end_ns", "barrier_wait_ns")
OPTIONAL_KEYS = frozenset({"instrumentation", "startup", *TIMELINE_KEYS})
STARTUP_KEYS = frozenset({"clock", "wrapper_time", "runner_time", "seconds"})
STARTUP_STRINGS = ("clock", "wrapper_time", "runner_time")
PER_CORE_KEYS = ("core_cycle_counts", "aperf_counts", "mperf_counts")
# Load-only mode (ENV_LOAD_ONLY=1): the runner loads the benchmark, finds run_iter, times nothing.
ENV_LOAD_ONLY = "COLDRUN_LOAD_ONLY"
LOAD_ONLY_DOCUMENT = {"protocol_version": PROTOCOL_VERSION, "load_only": True}
U64_MAX = 2**64 - 1

# The size of a document, from what its run measures: per iteration a wall-clock time, its start and end
# and a pair's barrier wait (TIMELINE_KEYS), and the PER_CORE_KEYS' count on every core; each number at
# most NUMBER_BYTES as JSON (a 20-digit count and its ", ").  The limit a supervisor reads up to is twice
# that (a runner may indent), plus a floor for the rest (keys, the counters' reason) and, when asked
# for, instrumentation's events per iteration.
NUMBER_BYTES = 24
DOCUMENT_FLOOR = 64 * 1024 * 1024
INSTRUMENTATION_BYTES_PER_ITERATION = 4096


def document_bytes(iterations: int, cores: int) -> int:
    """About the most bytes a document of ``iterations`` with counters on ``cores`` cores takes."""
    return iterations * NUMBER_BYTES * (1 + len(TIMELINE_KEYS) + len(PER_CORE_KEYS) * cores)


def document_limit(iterations: int, cores: int, *, instrument: bool = False) -> int:
    """The most bytes of a results document a supervisor keeps for such a run (above it: refused)."""
    extra = iterations * INSTRUMENTATION_BYTES_PER_ITERATION if instrument else 0
    return DOCUMENT_FLOOR + 2 * document_bytes(iterations, cores) + extra


class ProtocolError(ValueError):
    """The runner's document breaks the wire protocol; the message (one line) says how."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_seconds(v: Any) -> bool:
    """A finite, non-negative number (bool is not a number here)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _show(v: Any) -> str:
    """A value for a reason line: repr keeps it on one line, the cut keeps it short."""
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _refuse_non_finite(token: str) -> float:
    raise ValueError(f"{token} is not a number JSON allows")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):   # e.g. 1e999, which Python would read as inf
        raise ValueError(f"number {_show(token)} is out of range")
    return value


def parse_document(raw: bytes | str, *, iterations: int | None = None, startup: bool | None = None,
                   instrument: bool = False, duet: bool = False, barrier: bool = True) -> dict[str, Any]:
    """Parse and validate one results document; raises ProtocolError.

    The keyword arguments are what the launched run implies (see ``validate_document``).
    """
    if not raw:
        raise ProtocolError("the runner wrote no results document on fd 3")
    try:
        doc = json.loads(raw, parse_constant=_refuse_non_finite, parse_float=_finite_float)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProtocolError(f"results document is not valid JSON ({e}); first bytes: {raw[:80]!r}") from None
    validate_document(doc, iterations=iterations, startup=startup, instrument=instrument, duet=duet,
                      barrier=barrier)
    return doc


def parse_load_document(raw: bytes | str) -> None:
    """Check a load-only run's document: exactly ``{"protocol_version": 1, "load_only": true}``;
    raises ProtocolError.  Its presence is the runner's word that the benchmark loaded."""
    if not raw:
        raise ProtocolError("the runner wrote no load-only document on fd 3")
    try:
        doc = json.loads(raw, parse_constant=_refuse_non_finite)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProtocolError(f"load-only document is not valid JSON ({e}); first bytes: {raw[:80]!r}") from None
    # == alone would take true for 1 and 1 for true
    if doc != LOAD_ONLY_DOCUMENT or not _is_int(doc["protocol_version"]) or doc["load_only"] is not True:
        raise ProtocolError(f"load-only document is {_show(doc)}, expected {LOAD_ONLY_DOCUMENT}")


def validate_document(doc: Any, *, iterations: int | None = None, startup: bool | None = None,
                      instrument: bool = False, duet: bool = False, barrier: bool = True) -> None:
    """Check a parsed document; raises ProtocolError.

    ``iterations``: the configured count, which ``wallclock_times`` must match (None: any).
    ``startup``: True, the run is in startup-time mode and the ``startup`` object must be
    there; False, it must not be; None, either (checked when present).
    ``instrument``: instrumentation was asked for, so the ``instrumentation`` object must be there.
    ``duet``: the runner was one side of a pair execution, so the timeline must be
    there, with ``barrier_wait_ns`` unless the pair ran without a barrier (``barrier`` False).
    """
    if not isinstance(doc, dict):
        raise ProtocolError("results document is not a JSON object")
    keys = set(doc)
    missing, extra = REQUIRED_KEYS - keys, keys - REQUIRED_KEYS - OPTIONAL_KEYS
    if missing or extra:
        wrong = ([f"lacks {sorted(missing)}"] if missing else []) + (
            [f"has unknown keys {_show(sorted(extra))}"] if extra else [])
        raise ProtocolError("results document " + " and ".join(wrong))
    version = doc["protocol_version"]
    if not _is_int(version) or version != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol_version {_show(version)}, expected {PROTOCOL_VERSION}")

    times = doc["wallclock_times"]
    if not isinstance(times, list) or not times:
        raise ProtocolError("wallclock_times must be a non-empty list of finite non-negative numbers")
    for i, t in enumerate(times):
        if not _is_seconds(t):
            raise ProtocolError(f"wallclock_times[{i}] is {_show(t)}, not a finite non-negative number of seconds")
    n = len(times)
    if iterations is not None and n != iterations:
        raise ProtocolError(f"wallclock_times has {n} iterations, configured {iterations}")

    counters = doc["counters"]
    if not isinstance(counters, dict) or set(counters) != {"available", "reason"}:
        raise ProtocolError('counters must be {"available": bool, "reason": str or null}')
    available, reason = counters["available"], counters["reason"]
    if not isinstance(available, bool):
        raise ProtocolError(f"counters.available is {_show(available)}, not a boolean")

    cores = {}
    for key in PER_CORE_KEYS:
        per_core = doc[key]
        if not isinstance(per_core, list):
            raise ProtocolError(f"{key} must be a list (per core) of lists (per iteration)")
        cores[key] = len(per_core)
        for core, values in enumerate(per_core):
            if not isinstance(values, list):
                raise ProtocolError(f"{key}[{core}] is {_show(values)}, not a list (per iteration)")
            if len(values) != n:
                raise ProtocolError(f"{key}[{core}] has {len(values)} entries, not {n} entries "
                                    f"(one per iteration)")
            for i, v in enumerate(values):
                if not _is_int(v) or not 0 <= v <= U64_MAX:
                    raise ProtocolError(f"{key}[{core}][{i}] is {_show(v)}, not an unsigned 64-bit count")
    if len(set(cores.values())) != 1:
        raise ProtocolError("per-core lists cover different numbers of cores: "
                            + ", ".join(f"{k} {c}" for k, c in cores.items()))
    num_cores = cores[PER_CORE_KEYS[0]]

    if available:
        if num_cores == 0 or reason is not None:
            raise ProtocolError("counters.available is true but per-core lists are empty or a reason is given")
    elif num_cores != 0 or not isinstance(reason, str) or not reason:
        raise ProtocolError("counters.available is false: per-core lists must be [] and reason a non-empty string")

    if "instrumentation" in doc:
        if not isinstance(doc["instrumentation"], dict):
            raise ProtocolError("instrumentation must be a JSON object")
        _check_finite(doc["instrumentation"], "instrumentation")
    elif instrument:
        raise ProtocolError("instrumentation was asked for (instrument = true) but the document has none")
    _check_startup(doc, startup, times)
    _check_timeline(doc, times, duet, duet and barrier)


def _check_timeline(doc: dict[str, Any], times: list, duet: bool, waits: bool) -> None:
    # Absolute start/end of each iteration on the wall clock, so an analysis can
    # see how well the two runners of a pair overlapped (PROTOCOL.md, "Optional keys").
    start_key, end_key, wait_key = TIMELINE_KEYS
    present = [k for k in TIMELINE_KEYS if k in doc]
    if not present:
        if duet:
            raise ProtocolError(f"a pair execution's document must have {', '.join(TIMELINE_KEYS[:2 + waits])}")
        return
    if start_key not in doc or end_key not in doc:
        raise ProtocolError(f"{', '.join(present)} without both {start_key} and {end_key}")
    if waits and wait_key not in doc:
        raise ProtocolError(f"a pair execution's document must have {wait_key}")
    for key in present:
        values = doc[key]
        if not isinstance(values, list) or len(values) != len(times):
            raise ProtocolError(f"{key} must be a list with one entry per iteration ({len(times)})")
        for i, v in enumerate(values):
            if not _is_int(v) or (key == wait_key and v < 0):
                raise ProtocolError(f"{key}[{i}] is {_show(v)}, not an integer number of nanoseconds"
                                    + (" >= 0" if key == wait_key else ""))
    starts, ends = doc[start_key], doc[end_key]
    for i, (start, end) in enumerate(zip(starts, ends)):
        if end < start:
            raise ProtocolError(f"{end_key}[{i}] {end} is before {start_key}[{i}] {start}")
        if i + 1 < len(starts) and starts[i + 1] < end:
            raise ProtocolError(f"{start_key}[{i + 1}] {starts[i + 1]} is before {end_key}[{i}] {end}")
        # The same two clock samples as the wall-clock delta; allow the double's rounding.
        if abs((end - start) / 1e9 - times[i]) > 1e-9 + 1e-12 * times[i]:
            raise ProtocolError(f"{end_key}[{i}] - {start_key}[{i}] is {end - start} ns but "
                                f"wallclock_times[{i}] is {times[i]!r} s")


def _check_finite(value: Any, where: str) -> None:
    """No NaN or infinity anywhere (a document parsed elsewhere may hold them).

    A loop, not recursion: a deeply nested object must not end in RecursionError.
    """
    stack = [(value, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise ProtocolError(f"{at} is {v!r}, not a finite number")
        if isinstance(v, dict):
            stack.extend((item, f"{at}[{_show(k)}]") for k, item in v.items())
        elif isinstance(v, list):
            stack.extend((item, f"{at}[{i}]") for i, item in enumerate(v))


def _check_startup(doc: dict[str, Any], startup: bool | None, times: list) -> None:
    # Startup-time mode: the wrapper's and the dummy runner's clock readings,
    # and their difference, which is also the single "iteration" time.
    if "startup" not in doc:
        if startup:
            raise ProtocolError('mode = "startup" but the document has no startup object')
        return
    if startup is False:
        raise ProtocolError("startup object in a document from a run that is not in startup-time mode")
    st = doc["startup"]
    if not isinstance(st, dict) or set(st) != STARTUP_KEYS:
        raise ProtocolError(f"startup must be an object with exactly {sorted(STARTUP_KEYS)}")
    if not _is_seconds(st["seconds"]):
        raise ProtocolError(f"startup.seconds is {_show(st['seconds'])}, not a finite non-negative number")
    if not all(isinstance(st[k], str) for k in STARTUP_STRINGS):
        raise ProtocolError("startup.clock, startup.wrapper_time and startup.runner_time must be strings")
    if times != [st["seconds"]]:
        raise ProtocolError(f"startup-time mode: wallclock_times must be [startup.seconds], got {_show(times)}")
