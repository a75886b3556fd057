"""Validation of a runner's results document (PROTOCOL.md, version 1)."""

from __future__ import annotations

import json
from typing import Any

from iteration_runners import PROTOCOL_VERSION

REQUIRED_KEYS = frozenset(
    {"protocol_version", "wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts", "counters"}
)
OPTIONAL_KEYS = frozenset({"instrumentation", "startup"})
STARTUP_KEYS = frozenset({"clock", "wrapper_time", "runner_time", "seconds"})
PER_CORE_KEYS = ("core_cycle_counts", "aperf_counts", "mperf_counts")
U64_MAX = 2**64 - 1


class ProtocolError(ValueError):
    """The runner's document breaks the wire protocol; the message says how."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_document(raw: bytes | str) -> dict[str, Any]:
    """Parse and validate one results document; raises ProtocolError."""
    if not raw:
        raise ProtocolError("the runner wrote no results document")
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ProtocolError(f"results document is not valid JSON: {e}") from None
    validate_document(doc)
    return doc


def validate_document(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise ProtocolError("results document is not a JSON object")
    keys = set(doc)
    if missing := REQUIRED_KEYS - keys:
        raise ProtocolError(f"results document lacks {sorted(missing)}")
    if extra := keys - REQUIRED_KEYS - OPTIONAL_KEYS:
        raise ProtocolError(f"results document has unknown keys {sorted(extra)}")
    if doc["protocol_version"] != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol_version {doc['protocol_version']!r}, expected {PROTOCOL_VERSION}")

    times = doc["wallclock_times"]
    if not isinstance(times, list) or not times:
        raise ProtocolError("wallclock_times must be a non-empty list")
    for t in times:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or t < 0:
            raise ProtocolError(f"wallclock_times holds {t!r}, not a non-negative number of seconds")
    n = len(times)

    counters = doc["counters"]
    if not isinstance(counters, dict) or set(counters) != {"available", "reason"}:
        raise ProtocolError('counters must be {"available": bool, "reason": str or null}')
    available, reason = counters["available"], counters["reason"]
    if not isinstance(available, bool):
        raise ProtocolError("counters.available must be a boolean")

    core_counts = set()
    for key in PER_CORE_KEYS:
        per_core = doc[key]
        if not isinstance(per_core, list):
            raise ProtocolError(f"{key} must be a list (per core)")
        core_counts.add(len(per_core))
        for core, values in enumerate(per_core):
            if not isinstance(values, list) or len(values) != n:
                raise ProtocolError(f"{key}[{core}] must have {n} entries, one per iteration")
            for v in values:
                if not _is_int(v) or not 0 <= v <= U64_MAX:
                    raise ProtocolError(f"{key}[{core}] holds {v!r}, not an unsigned 64-bit count")
    if len(core_counts) != 1:
        raise ProtocolError("core_cycle_counts, aperf_counts and mperf_counts cover different numbers of cores")
    num_cores = core_counts.pop()

    if available:
        if num_cores == 0 or reason is not None:
            raise ProtocolError("counters.available is true but per-core lists are empty or a reason is given")
    elif num_cores != 0 or not isinstance(reason, str) or not reason:
        raise ProtocolError("counters.available is false: per-core lists must be [] and reason a non-empty string")

    if "instrumentation" in doc and not isinstance(doc["instrumentation"], dict):
        raise ProtocolError("instrumentation must be a JSON object")
    if "startup" in doc:
        _validate_startup(doc["startup"], times)


def _validate_startup(startup: Any, times: list) -> None:
    # Startup-time mode: the wrapper's and the dummy runner's clock readings,
    # and their difference, which is also the single "iteration" time.
    if not isinstance(startup, dict) or set(startup) != STARTUP_KEYS:
        raise ProtocolError(f"startup must be an object with exactly {sorted(STARTUP_KEYS)}")
    seconds = startup["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise ProtocolError(f"startup.seconds is {seconds!r}, not a non-negative number")
    if times != [seconds]:
        raise ProtocolError("in startup mode wallclock_times must be [startup.seconds]")
