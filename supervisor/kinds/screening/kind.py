"""A [screening] experiment (NIST TN 1855): the design decides the jobs and their order; each job runs its
treatment's levels (kinds/screening/levels.py sets and reads them back), and its record says which were in force."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.boot.context import Boot
from supervisor.boot.kinds.plain import JobRun, Plain, Readying
from supervisor.kinds.screening.levels import levels_for_job, switch_ahead
from supervisor.kinds.screening.check import level_problems
from supervisor.errors import ColdrunError
from supervisor.experiment.plan import JobSpec, in_order
from supervisor.kinds.screening.plan import ScreeningPlan, plan_screening
from supervisor.kinds.screening.text import check_lines
from supervisor.state.schedule import JobLine, Schedule
from supervisor.kinds.screening.state import plan_for, screening_progress, write_plan


class ScreeningKind(Plain):
    name = "screening"

    def __init__(self, exp: Any):
        super().__init__(exp)
        self._plans: dict[int, ScreeningPlan] = {}

    def design(self, seed: int | None) -> ScreeningPlan:
        """The design and each job's treatment, for this seed (pyDOE3; made once per seed)."""
        seed = seed or 0
        if seed not in self._plans:
            self._plans[seed] = plan_screening(self.exp, seed)
        return self._plans[seed]

    def draws_seed(self) -> bool:
        return True     # the run order within each batch is drawn from the seed

    def get_ready(self, ready: Readying) -> None:
        try:
            self.design(ready.seed)
            problems = level_problems(self.exp, ready.machine, simulate=ready.simulate)
        except ColdrunError as e:
            raise ColdrunError(f"{ready.experiment_file}: {e}") from None
        if problems:
            raise ColdrunError("\n".join(f"{ready.experiment_file}: {line}" for line in problems))

    def plan(self, seed: int | None) -> list[JobSpec]:
        """The design's runs (key, iterations, param, in order) as jobs, each key's pexecs numbered in order."""
        return in_order((run.key, False, run.iterations, run.param) for run in self.design(seed).runs)

    def on_start(self, state_path: Path, log: Any, seed: int) -> None:
        # Before the schedule: a boot finds every job's levels in it.
        plan = self.design(seed)
        write_plan(state_path, plan)
        for line in plan.warnings:
            log.warning(line)

    def check_lines(self, prep: Any, *, show_all: bool) -> list[str]:
        return check_lines(self.exp, self.design(prep.seed), show_all=show_all, seed_chosen=self.exp.seed is None)

    def job_run(self, ctx: Boot, machine: Any, job: JobLine) -> JobRun:
        return levels_for_job(ctx, machine, job)

    def before_reboot(self, ctx: Boot, machine: Any) -> None:
        switch_ahead(ctx, machine)

    def status_parts(self, state_path: Path, schedule: Schedule, kept_sides: Any) -> dict[str, Any]:
        return {**super().status_parts(state_path, schedule, kept_sides),
                "screening": screening_progress(state_path, schedule)}

    def export_parts(self, state_path: Path, schedule: Schedule) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
        plan = plan_for(state_path, schedule)
        planned = {i: {"screening": {"treatment": run.treatment, "levels": run.levels, "batch": run.batch,
                                     "replicate": run.replicate}}
                   for i, run in enumerate(plan.runs)}     # not run (or crashed): the levels it was planned with
        return {"screening": {"factors": plan.factors, "design": plan.design, "seed": plan.seed,
                              "reboot_factors": plan.reboot_factors, "boot_check_batch": plan.boot_check_batch,
                              "aliases": plan.aliases}}, planned
