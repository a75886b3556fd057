"""Valid runner results documents (PROTOCOL.md) for tests to start from and break."""

from __future__ import annotations

import json
from typing import Any

STARTUP = {"clock": "CLOCK_MONOTONIC_RAW", "wrapper_time": "10.000000000", "runner_time": "10.012500000",
           "seconds": 0.0125}


def document(times: list[float] | None = None, cores: int = 2, **over: Any) -> dict[str, Any]:
    """A valid document with ``times`` (default three iterations) and ``cores`` cores of counters
    (0: counters unavailable); keyword arguments replace or add top-level keys."""
    times = [0.1, 0.2, 0.3] if times is None else times
    n = len(times)
    doc: dict[str, Any] = {
        "protocol_version": 1, "wallclock_times": times,
        "core_cycle_counts": [[1000 + c] * n for c in range(cores)],
        "aperf_counts": [[1] * n for _ in range(cores)],
        "mperf_counts": [[2] * n for _ in range(cores)],
        "counters": ({"available": True, "reason": None} if cores
                     else {"available": False, "reason": "no counters in this test"}),
    }
    doc.update(over)
    return doc


def startup_document(**over: Any) -> dict[str, Any]:
    """A valid startup-time-mode document: one iteration, equal to startup.seconds."""
    return document([STARTUP["seconds"]], cores=0, **{"startup": dict(STARTUP), **over})


def encoded(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()
