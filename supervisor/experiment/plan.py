"""A job of the schedule as planned (one job = one process execution, or one pair execution of a [duet]
experiment: its key is the two sides' keys, experiment.duet).  The experiment's kind plans them
(boot/kinds: Krun's round-robin order or a seeded shuffle, a screening design's runs); with [stop] the
boot appends more (kinds/stop/decisions.py).

A job carries the in-process iterations and the run_iter param of its
execution: the experiment's, unless the run-length rule chose others.
"""

from __future__ import annotations

from contracts.keys import first_side
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class JobSpec:
    key: str        # "bench:vm:variant"
    pexec: int      # index of this process execution among its key's
    skipped: bool
    iterations: int   # in-process iterations of this execution
    param: int        # run_iter's param for this execution

    @property
    def bench(self) -> str:
        return first_side(self.key).benchmark

    @property
    def vm(self) -> str:
        return first_side(self.key).vm

    @property
    def variant(self) -> str:
        return first_side(self.key).variant


def in_order(planned: Iterable[tuple[str, bool, int, int]]) -> list[JobSpec]:
    """Jobs (key, skipped, iterations, param) in the order they will run, each key's process executions
    numbered in that order."""
    seen: dict[str, int] = {}
    jobs = []
    for key, skipped, iterations, param in planned:
        seen[key] = seen.get(key, -1) + 1
        jobs.append(JobSpec(key, seen[key], skipped, iterations, param))
    return jobs
