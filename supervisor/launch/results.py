"""Validating the runner's results document (contract A, protocol version 1)."""

from __future__ import annotations

import json
import math
from typing import Any

PROTOCOL_VERSION = 1
REQUIRED_KEYS = {"protocol_version", "wallclock_times", "core_cycle_counts", "aperf_counts",
                 "mperf_counts", "counters"}
OPTIONAL_KEYS = {"instrumentation", "startup"}
STARTUP_KEYS = {"clock", "wrapper_time", "runner_time", "seconds"}
PER_CORE_KEYS = ("core_cycle_counts", "aperf_counts", "mperf_counts")


class BadResults(Exception):
    """The document breaks the protocol; the message is the reason stored in the record."""


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_results(raw: bytes, iterations: int, *, startup: bool = False,
                  instrument: bool = False) -> dict[str, Any]:
    """Return the validated document, or raise BadResults with a one-line reason.

    ``startup``: the VM runs in startup-time mode, so the document must carry the
    "startup" object (and must not otherwise).  ``instrument``: instrumentation was
    asked for, so the "instrumentation" object must be there.
    """
    if not raw:
        raise BadResults("runner wrote no results document on fd 3")
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadResults(f"results document is not JSON ({e}); first bytes: {raw[:80]!r}")
    if not isinstance(doc, dict):
        raise BadResults("results document is not a JSON object")
    keys = set(doc)
    if not REQUIRED_KEYS <= keys or keys - REQUIRED_KEYS - OPTIONAL_KEYS:
        missing = sorted(REQUIRED_KEYS - keys)
        extra = sorted(keys - REQUIRED_KEYS - OPTIONAL_KEYS)
        raise BadResults(f"results document keys wrong (missing {missing}, unexpected {extra})")
    if doc["protocol_version"] != PROTOCOL_VERSION:
        raise BadResults(f"protocol_version {doc['protocol_version']!r}, expected {PROTOCOL_VERSION}")
    times = doc["wallclock_times"]
    if not isinstance(times, list) or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t >= 0 for t in times):
        raise BadResults("wallclock_times must be a list of finite non-negative numbers")
    if len(times) != iterations:
        raise BadResults(f"wallclock_times has {len(times)} iterations, configured {iterations}")
    n_cores = None
    for key in PER_CORE_KEYS:
        cores = doc[key]
        if not isinstance(cores, list):
            raise BadResults(f"{key} must be a list of per-core lists")
        if n_cores is not None and len(cores) != n_cores:
            raise BadResults(f"{key} has {len(cores)} cores, {PER_CORE_KEYS[0]} has {n_cores}")
        n_cores = len(cores)
        for core, counts in enumerate(cores):
            if not isinstance(counts, list) or not all(_is_int(c) and c >= 0 for c in counts):
                raise BadResults(f"{key}[{core}] must be a list of non-negative integers")
            if len(counts) != len(times):
                raise BadResults(f"{key}[{core}] has {len(counts)} entries, wallclock_times {len(times)}")
    counters = doc["counters"]
    if not (isinstance(counters, dict) and set(counters) == {"available", "reason"}
            and isinstance(counters["available"], bool)
            and (counters["reason"] is None or isinstance(counters["reason"], str))):
        raise BadResults('counters must be {"available": bool, "reason": str or null}')
    if "instrumentation" in doc and not isinstance(doc["instrumentation"], dict):
        raise BadResults("instrumentation must be a JSON object")
    if instrument and "instrumentation" not in doc:
        raise BadResults("instrumentation was asked for (instrument = true) but the document has none")
    _check_startup(doc, startup, times)
    return doc


def _check_startup(doc: dict[str, Any], startup: bool, times: list) -> None:
    if not startup:
        if "startup" in doc:
            raise BadResults("startup object in a document from a run that is not in startup-time mode")
        return
    st = doc.get("startup")
    if st is None:
        raise BadResults('mode = "startup" but the document has no startup object')
    if not isinstance(st, dict) or set(st) != STARTUP_KEYS:
        raise BadResults(f"startup must be an object with exactly {sorted(STARTUP_KEYS)}")
    seconds = st["seconds"]
    if not (isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds)
            and seconds >= 0):
        raise BadResults("startup.seconds must be a finite non-negative number")
    if not all(isinstance(st[k], str) for k in ("clock", "wrapper_time", "runner_time")):
        raise BadResults("startup.clock, wrapper_time and runner_time must be strings")
    if times != [seconds]:
        raise BadResults(f"startup-time mode: wallclock_times must be [startup.seconds], got {times[:3]}")
