"""Expanding an experiment into its schedule of jobs (one job = one process execution, or one pair
execution of a [duet] experiment: its key is the two sides' keys, experiment.duet).

Round-robin order is Krun's: for pexec: for vm: for bench: for variant.  The
random order shuffles the same jobs with a recorded seed and renumbers each
key's process executions in the order they will run.  With [stop], each key
starts with its first executions (experiment.model.first_executions) and the
boot appends more (boot/run_length.py).

A job carries the in-process iterations and the run_iter param of its
execution: the experiment's, unless the run-length rule chose others.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# should_skip and keys_in_order live with the model, which refuses a skip list that skips everything.
from supervisor.experiment.duet import pair_key, record_sides
from supervisor.experiment.model import (Experiment, first_executions, first_param, keys_in_order, most_executions,
                                         should_skip)

__all__ = ["JobSpec", "expand", "keys_in_order", "records_to_write", "should_skip"]


@dataclass(frozen=True)
class JobSpec:
    key: str        # "bench:vm:variant"
    pexec: int      # index of this process execution among its key's
    skipped: bool
    iterations: int   # in-process iterations of this execution
    param: int        # run_iter's param for this execution

    @property
    def bench(self) -> str:
        return self.key.split(":")[0]

    @property
    def vm(self) -> str:
        return self.key.split(":")[1]

    @property
    def variant(self) -> str:
        return self.key.split(":")[2]


def expand(exp: Experiment, seed: int | None) -> list[JobSpec]:
    if exp.screening is not None:     # the design decides the jobs and their order (screening_plan.py)
        from supervisor.experiment.screening_plan import plan_screening
        return screening_jobs(plan_screening(exp, seed or 0).runs)
    keys = keys_in_order(exp) if exp.duet is None else [pair_key(p.a, p.b) for p in exp.duet.pairs]
    order = [(key, n) for n in range(first_executions(exp)) for key in keys]
    if exp.order == "random":
        if seed is None:
            raise ValueError("random order needs a seed")
        random.Random(seed).shuffle(order)
    seen: dict[str, int] = {}
    jobs = []
    for key, _ in order:
        pexec = seen.get(key, 0)
        seen[key] = pexec + 1
        bench, vm, _ = key.split(":")[:3]     # a pair's job: its a side's (the sides' iterations agree)
        jobs.append(JobSpec(key, pexec, should_skip(key, exp.skip), exp.vms[vm].iterations,
                            first_param(exp, bench)))
    return jobs


def screening_jobs(runs: list) -> list[JobSpec]:
    """A screening plan's runs (key, iterations, param, in order) as jobs, each key's pexecs numbered in order."""
    seen: dict[str, int] = {}
    jobs = []
    for run in runs:
        seen[run.key] = seen.get(run.key, -1) + 1
        jobs.append(JobSpec(run.key, seen[run.key], False, run.iterations, run.param))
    return jobs


def records_to_write(exp: Experiment, jobs: list[JobSpec]) -> int:
    """Execution records the planned jobs will write, re-runs aside: one per job, one per side of a pair job
    ([duet]); with [stop], a key's jobs may grow to its most executions (appended between executions)."""
    planned: dict[str, int] = {}
    for job in jobs:
        if not job.skipped:
            planned[job.key] = planned.get(job.key, 0) + 1
    grow = most_executions(exp) if exp.stop is not None else 0
    return sum(max(n, grow) * len(record_sides(key)) for key, n in planned.items())
