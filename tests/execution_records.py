"""Valid execution records (contracts.execution_record) for tests to plant in a state dir."""

from __future__ import annotations

from typing import Any

from contracts.execution_record import STATE_OF_OUTCOME, ExecutionRecord


def record_fields(key: str = "a:fake:v", pexec: int = 0, job_index: int = 0, attempt: int = 1,
                  outcome: str = "C", **over: Any) -> dict[str, Any]:
    """The fields of a record of one attempt; a completed one has three iterations, no counters."""
    bench, vm, variant = key.split(":")
    done = outcome == "C"
    fields: dict[str, Any] = {
        "record_version": 1, "supervisor_version": "test", "job_index": job_index, "key": key,
        "bench": bench, "vm": vm, "variant": variant, "pexec": pexec, "attempt": attempt, "boot": 1,
        "iterations": 3, "param": 1, "mode": "iterations", "instrument": False, "debug": False,
        "wallclock_times": [0.1, 0.2, 0.3] if done else [], "core_cycle_counts": [], "aperf_counts": [],
        "mperf_counts": [], "counters": {"available": False, "reason": "test"} if done else None,
        "flags": [], "platform_before": {}, "platform_after": {}, "rerun_requested": False,
        "outcome": outcome, "state": STATE_OF_OUTCOME[outcome], "reason": None if done else "planted",
        "duration_seconds": 1.5,
    }
    fields.update(over)
    return fields


def make_record(**kw: Any) -> ExecutionRecord:
    return ExecutionRecord.model_validate(record_fields(**kw))
