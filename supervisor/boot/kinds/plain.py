"""A plain experiment (a fixed number of process executions per key), and the hooks every kind may change.

DESIGN.md "Kinds of experiment": the kind is chosen once, when the experiment
is loaded (``kinds.kind_for``), and is the one place that knows what differs
between plain, [stop], [duet] and [screening] experiments: how the schedule's
jobs are planned, how one job runs at a boot, what its record adds, and what
`check`, `status` and `export` show.  ``Plain`` is the base: each method is a
hook with the plain experiment's answer, and a kind overrides only what it
changes.  The boot loop, check, status and export call the hooks and never
ask which kind they have.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.boot.context import Boot
from iteration_runners.protocol import DOCUMENT_FLOOR, NUMBER_BYTES
from supervisor.boot.execution import JobRun, results_limit
from contracts.keys import first_side, record_sides
from supervisor.experiment.model import VM, Experiment, keys_in_order, should_skip
from supervisor.experiment.plan import JobSpec, in_order
from supervisor.experiment.quantities import format_duration, format_size
from supervisor.state.schedule import JobLine, Schedule


SHOWN_JOBS = 24    # check lists at most this many jobs unless --all


@dataclass(frozen=True)
class Readying:
    """What a kind may ask of the machine before a start or check changes anything (``get_ready``)."""
    experiment_file: str
    machine: Any            # platforms.factory.Machine: its CPUs, its commands, a kind's seams
    simulate: bool
    seed: int


class Plain:
    name = "plain"

    def __init__(self, exp: Experiment):
        self.exp = exp

    # --- planning (check and start) ---------------------------------------------------------------------

    def draws_seed(self) -> bool:
        """Does the order need a seed (drawn at start when the file names none)?"""
        return self.exp.order == "random"

    def remove_cut_leftovers(self, state: Any) -> list[str]:
        """At reconciliation, after a cut's runners are killed: remove what else this kind's execution in
        flight left (``state``: the StateDir); one line each."""
        return []

    def short_of_target(self, state_path: Path) -> list[str]:
        """The keys that ended short of a target the experiment set (the exit status 9 counts them)."""
        return []

    def short_of_target_text(self, keys: list[str]) -> str:
        """What the finishing summary says of them."""
        return f"{len(keys)} key(s) ended short of their target ({', '.join(keys)})"

    def get_ready(self, ready: Readying) -> None:
        """What this kind needs of the machine before anything starts; ColdrunError naming the file if not."""

    def keys(self) -> list[str]:
        """The schedule's job keys, in the experiment's order."""
        return keys_in_order(self.exp)

    def first_executions(self) -> int:
        """Jobs each key starts with."""
        assert self.exp.executions is not None   # required without [stop] (parse_experiment), and [stop] has its kind
        return self.exp.executions

    def growth(self) -> int:
        """Executions a key may grow to between executions (0: the schedule is the plan)."""
        return 0

    def most_iterations(self, vm: VM) -> int:
        """In-process iterations one execution of ``vm`` may run."""
        return vm.iterations

    def most_iterations_of_any(self) -> int:
        return max(self.most_iterations(vm) for vm in self.exp.vms.values())

    def first_param(self, bench: str) -> int:
        """run_iter's param for a key's first executions."""
        return self.exp.benchmarks[bench]

    def plan(self, seed: int | None) -> list[JobSpec]:
        """The schedule's jobs.  Round-robin is Krun's (for pexec: for vm: for bench: for variant); random
        shuffles the same jobs with the seed and numbers each key's executions in the order they will run."""
        exp = self.exp
        order = [(key, n) for n in range(self.first_executions()) for key in self.keys()]
        if exp.order == "random":
            if seed is None:
                raise ValueError("random order needs a seed")
            random.Random(seed).shuffle(order)
        # A pair's job runs its a side's iterations and param (the sides' iterations agree).
        runs = [(key, first_side(key)) for key, _ in order]
        return in_order((key, should_skip(key, exp.skip), exp.vms[a.vm].iterations, self.first_param(a.benchmark))
                        for key, a in runs)

    def records_to_write(self, jobs: list[JobSpec]) -> int:
        """Execution records the planned jobs will write, re-runs aside: one per side of each job that runs
        (a pair job has two), each key grown to ``growth()`` executions."""
        planned: dict[str, int] = {}
        for job in jobs:
            if not job.skipped:
                planned[job.key] = planned.get(job.key, 0) + 1
        return sum(max(n, self.growth()) * len(record_sides(key)) for key, n in planned.items())

    def on_start(self, state_path: Path, log: Any, seed: int) -> None:
        """Written into a new state dir before its schedule."""

    # --- `coldrun check` ----------------------------------------------------------------------------------

    def check_lines(self, prep: Any, *, show_all: bool) -> list[str]:
        """check's lines after the problems: order and run length, keys, the schedule, an ETA."""
        exp, jobs = self.exp, prep.jobs
        seed_text = "" if exp.order == "round-robin" else (
            f", seed {exp.seed}" if exp.seed is not None else ", seed chosen at start and recorded (shown with seed 0)")
        lines = [f"order: {exp.order}{seed_text}; {self.run_length_text()}", *self.setup_lines()]
        run_keys = {j.key for j in jobs if not j.skipped}
        lines.append(f"keys ({len({j.key for j in jobs})}, {len(run_keys)} run):")
        for key in dict.fromkeys(j.key for j in jobs):
            vm = exp.vms[first_side(key).vm]
            lines.append(f"  {key:40s} {'skipped' if key not in run_keys else self.key_text(vm)}")
        lines.append(f"schedule ({len(jobs)} jobs, {prep.n_run} to run):")
        shown = jobs if show_all or len(jobs) <= SHOWN_JOBS else jobs[:SHOWN_JOBS - 4]
        lines += [f"  {i:5d} {'S' if j.skipped else 'O'} {j.key} #{j.pexec}" for i, j in enumerate(shown)]
        if len(shown) < len(jobs):
            lines.append(f"  ... {len(jobs) - len(shown)} more (--all shows every job)")
        lines.append(self.results_size_line())
        waits = prep.n_run * exp.waits.per_execution
        lines.append(f"ETA: at least {format_duration(waits)} of waits ({prep.n_run} x boot settle + sync), plus "
                     f"reboots and benchmark run time (unknown until each key has run once)")
        return lines

    def results_size_line(self) -> str:
        """The largest results document one execution may write and have kept (it follows the run)."""
        cores = os.cpu_count() or 1
        vm = max(self.exp.vms.values(), key=lambda v: results_limit(v, self.most_iterations(v)))
        most = self.most_iterations(vm)
        return (f"results document: kept up to {format_size(results_limit(vm, most))} per execution "
                f"({most:,} iterations x (4 times + {cores} cores x 3 counters) x {NUMBER_BYTES} bytes, "
                f"doubled, plus {format_size(DOCUMENT_FLOOR)}{' and instrumentation' if vm.instrument else ''})")

    def run_length_text(self) -> str:
        return f"{self.exp.executions} process executions per key"

    def setup_lines(self) -> list[str]:
        """Lines on how this kind runs its jobs (after the order)."""
        return []

    def key_text(self, vm: VM) -> str:
        return f"{self.exp.executions} x {vm.iterations} iterations"

    # --- at a boot ------------------------------------------------------------------------------------------

    def settle(self, ctx: Boot) -> str | None:
        """Between executions (and at every boot, to settle a cut): decide what the records so far imply for
        the schedule; a stop reason (one line) when that fails."""
        return None

    def job_run(self, ctx: Boot, machine: Any, job: JobLine) -> JobRun:
        return JobRun(ctx)

    def before_reboot(self, ctx: Boot, machine: Any) -> None:
        """After a job's record, before the reboot into the next job: get the machine ready for it."""

    # --- `coldrun status` and `coldrun export` ------------------------------------------------------------------

    def expected_jobs(self, state_path: Path, schedule: Schedule) -> dict[str, tuple[int, int]]:
        """Executions expected beyond the schedule, per key: (count, iterations each)."""
        return {}

    def status_parts(self, state_path: Path, schedule: Schedule, kept_sides: Any) -> dict[str, Any]:
        """The StatusReport's fields that belong to one kind (contracts/status_report.py), each None unless
        the experiment is of that kind."""
        return {"run_length": None, "pairs": None, "screening": None}

    def export_parts(self, state_path: Path, schedule: Schedule) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
        """The native export's additions: top-level fields, and per job index the fields of a slot that has
        no record (not run yet, or crashed)."""
        return {}, {}
