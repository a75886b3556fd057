"""A screening experiment's run order: split-plot batches, replicates in fresh seeded orders, the boot check.

Treatments that share the levels of every factor needing a reboot form one
batch (TN 1855's split plot: its two os batches).  Each such combination of
levels gets ``batches_per_level`` batches (whole plots, default 2), so a
factor needing a reboot can be tested against batch-to-batch variation; the
batches run in a seeded random order in rounds (every combination once per
round), and no two consecutive batches share their levels, so a switch (and
whatever a switch disturbs) separates every two batches.  Within a batch, each replicate (``executions``) runs
every treatment once for every benchmark, in a fresh random order from the
same seeded generator, so the whole order follows from the seed, which the
schedule records.  The optional boot check runs after the batches: k boots
per level of one factor, in a balanced order that does not simply alternate,
each boot one execution of m iterations (the other factors at their first
level).

Every job is one boot; a job whose reboot levels differ from the running
system's costs one more boot to switch (kinds/screening/levels.py), so the boots
needed are at most jobs + switches + 1 (the finishing boot).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from contracts.keys import Key
from supervisor.errors import ColdrunError
from supervisor.experiment.model import MAX_JOBS, Experiment
from supervisor.kinds.screening.table import Screening
from supervisor.kinds.screening.design import Design, build_design

# Reshuffles of a boot check before giving up on a non-alternating order (each fails with
# probability about 2/C(2k, k) for 2 levels: 1/3 at k = 2, below 0.03 at k = 4).
MAX_BOOT_CHECK_SHUFFLES = 1000


@dataclass(frozen=True)
class Run:
    """One job's part in the design: what it runs, and the levels it must run under."""
    key: str                    # bench:vm:variant
    iterations: int
    param: int
    treatment: int              # the design row
    levels: dict[str, str]      # factor -> level, as wanted
    batch: int
    replicate: int              # the replicate in its batch; for the boot check, the boot's position


@dataclass
class ScreeningPlan:
    design: str
    seed: int
    factors: dict[str, list[str]]          # factor -> its levels in file order
    reboot_factors: list[str]
    runs: list[Run]                         # one per job, in schedule order
    boot_check_batch: int | None = None     # the batch number of the boot check's jobs
    warnings: list[str] = field(default_factory=list)
    treatments_run: int = 0
    treatments_designed: int = 0
    whole_plots: int = 0                    # combinations of the reboot factors' levels (0: none need a reboot)
    aliases: list[list[str]] = field(default_factory=list)   # alias sets of a fractional design, by factor name

    def batches(self) -> int:
        """Batches of the design proper (the boot check's not counted)."""
        return len({r.batch for r in self.runs if r.batch != self.boot_check_batch})

    def whole_plot_dof(self) -> int:
        """Degrees of freedom for batch-to-batch error: batches less the reboot-level combinations."""
        return self.batches() - self.whole_plots if self.whole_plots else 0

    def switches(self) -> int:
        """Reboot-level changes along the order, counting a possible one before the first job."""
        return self.switches_ahead(range(len(self.runs)), None)

    def switches_ahead(self, remaining: Sequence[int], last: int | None) -> int:
        """Reboot-level changes the runs at ``remaining`` (indices, in order) need after run ``last`` ran
        (None: nothing ran, so the running levels are unknown and one switch may come first)."""
        if not self.reboot_factors or not remaining:
            return 0
        seen = [tuple(self.runs[i].levels[f] for f in self.reboot_factors)
                for i in ([] if last is None else [last]) + list(remaining)]
        return (last is None) + sum(a != b for a, b in zip(seen, seen[1:]))

    def boots(self) -> int:
        return len(self.runs) + self.switches() + 1

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScreeningPlan:
        runs = [Run(**r) for r in data["runs"]]
        return cls(**{**data, "runs": runs})     # plans stored before whole_plots/aliases take the defaults


def _key(exp: Experiment, sc: Screening, levels: dict[str, str], bench: str) -> str:
    vm = next((levels[n] for n, f in sc.factors.items() if f.kind == "vm"), None) or next(iter(exp.vms))
    variant = exp.vms[vm].variants[0]
    for name, f in sc.factors.items():
        if f.kind == "variant":
            found = f.variant_name(levels[name], vm)
            if found is None:
                raise ColdrunError(f"screening.factors.{name}.values: level {levels[name]!r} names no variant "
                                   f"for vm {vm!r}; add {vm} = \"VARIANT\" to its table, or exclude the "
                                   f"treatment")
            variant = found
    return f"{bench}:{vm}:{variant}"


def _levels(sc: Screening, row: tuple[int, ...]) -> dict[str, str]:
    return {name: f.texts()[i] for (name, f), i in zip(sc.factors.items(), row)}


def balanced_not_alternating(levels: list[str], k: int, rng: random.Random) -> list[str]:
    """k of each level, shuffled until some level follows itself (so boots do not just alternate)."""
    seq = [lv for lv in levels for _ in range(k)]
    for _ in range(MAX_BOOT_CHECK_SHUFFLES):
        rng.shuffle(seq)
        if any(a == b for a, b in zip(seq, seq[1:])):
            return seq
    raise ColdrunError("screening.boot_check: found no non-alternating order; raise boots_per_level")


def batch_order(combinations: list[tuple[str, ...]], per_level: int, rng: random.Random) -> list[tuple[str, ...]]:
    """``per_level`` rounds, each every combination once in a fresh order; a round's first batch is never the
    last one's levels, so consecutive batches always switch."""
    order: list[tuple[str, ...]] = []
    for _ in range(per_level):
        round_ = list(combinations)
        rng.shuffle(round_)
        if order and len(round_) > 1 and round_[0] == order[-1]:
            round_[0], round_[1] = round_[1], round_[0]
        order += round_
    return order


def plan_screening(exp: Experiment, seed: int) -> ScreeningPlan:
    """The order of every job of a screening experiment; ColdrunError (field and fix) when it cannot run."""
    sc = exp.screening
    assert sc is not None and exp.executions is not None
    design = build_design(sc)
    rng = random.Random(seed)
    reboot = [n for n, f in sc.factors.items() if f.needs_reboot]
    batches: dict[tuple[str, ...], list[int]] = {}
    for t in design.kept:
        levels = _levels(sc, design.rows[t])
        batches.setdefault(tuple(levels[n] for n in reboot), []).append(t)
    order = batch_order(list(batches), sc.batches_per_level if reboot else 1, rng)
    runs: list[Run] = []
    for b, batch_key in enumerate(order):
        for r in range(exp.executions):
            units = [(t, bench) for t in batches[batch_key] for bench in exp.benchmarks]
            rng.shuffle(units)
            runs += [_run(exp, sc, design, t, bench, b, r) for t, bench in units]
    plan = ScreeningPlan(design.name, seed, {n: f.texts() for n, f in sc.factors.items()}, reboot, runs,
                         warnings=list(design.warnings), treatments_run=len(design.kept),
                         treatments_designed=len(design.rows), whole_plots=len(batches) if reboot else 0,
                         aliases=design.aliases)
    if sc.boot_check is not None:
        _add_boot_check(exp, sc, design, plan, rng, len(order))
    _check_size(sc, plan, exp.rerun.max_unexplained_boots)
    return plan


def _run(exp: Experiment, sc: Screening, design: Design, t: int, bench: str, batch: int, replicate: int,
         iterations: int | None = None) -> Run:
    levels = _levels(sc, design.rows[t])
    key = _key(exp, sc, levels, bench)
    vm = exp.vms[Key.parse(key).vm]
    return Run(key, iterations or vm.iterations, exp.benchmarks[bench], t, levels, batch, replicate)


def _add_boot_check(exp: Experiment, sc: Screening, design: Design, plan: ScreeningPlan, rng: random.Random,
                    batch: int) -> None:
    check = sc.boot_check
    assert check is not None
    names = sc.names()
    i = names.index(check.factor)
    at_level = {}
    for lv in range(len(sc.factors[check.factor].levels)):
        row = tuple(lv if j == i else 0 for j in range(len(names)))
        t = next((t for t in design.kept if design.rows[t] == row), None)
        if t is None:
            raise ColdrunError(f"screening.boot_check: the treatment with {check.factor} = "
                               f"{sc.factors[check.factor].texts()[lv]} and every other factor at its first "
                               f"level is not in the design (excluded, or left out by a fractional design); "
                               f"choose another factor or exclude less")
        at_level[sc.factors[check.factor].texts()[lv]] = t
    seq = balanced_not_alternating(list(at_level), check.boots_per_level, rng)
    plan.boot_check_batch = batch
    for position, level in enumerate(seq):
        plan.runs += [_run(exp, sc, design, at_level[level], bench, batch, position, check.samples_per_boot)
                      for bench in exp.benchmarks]


def _check_size(sc: Screening, plan: ScreeningPlan, rerun_guard: int) -> None:
    jobs, boots = len(plan.runs), plan.boots()
    if jobs > MAX_JOBS:
        raise ColdrunError(f"executions: the {plan.design} design needs {jobs:,} jobs, more than the "
                           f"{MAX_JOBS:,} a schedule holds (each job is a reboot); lower executions, the "
                           f"benchmarks or the levels")
    if plan.switches() > rerun_guard:
        raise ColdrunError(f"rerun.max_unexplained_boots: the order switches reboot-factor levels up to "
                           f"{plan.switches()} times, each a boot that claims no job, more than the reboot-loop "
                           f"guard's {rerun_guard}; set rerun.max_unexplained_boots = {plan.switches()} or more")
    if sc.max_boots is not None and boots > sc.max_boots:
        raise ColdrunError(f"screening.max_boots: the {plan.design} design needs up to {boots:,} boots "
                           f"({jobs:,} executions, {plan.switches()} level switches, 1 to finish), more than "
                           f"max_boots = {sc.max_boots:,}; lower executions, use a fractional design or "
                           f"exclude treatments")
