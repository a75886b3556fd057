"""A screening job's levels: set them, read them back, and put what was in force into its record.

Before the launch (``levels_for_job``):

- factors needing a reboot are read from /proc/cmdline; when the job's level
  is not in force, the factor's ``switch`` command runs once for this attempt
  and the machine reboots without claiming the job (kinds/screening/state.py keeps
  the marker); still not in force after that boot: the execution fails;
- env and argument factors go into the VM's environment and arguments.

At step 4 of the boot (``JobLevels.apply_and_verify``, in place of the
platform's own), platform-control factors are applied through the platform's
own controls (undo log first) with the job's levels, and read back from the
reports of that same pass: one apply per boot.  A level that does not read
back fails the execution; one that cannot be set at all (the pass stopped
there) fails it too, and the rest of [platform] is then applied as usual.

After the runner (``read_back_levels``), the benchmark-side levels are read back
from what was launched (key, argv, environment); the record gets
{"treatment", "levels", "batch", "replicate"}, and a level not in force turns
a completed execution into an errored one with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from contracts.keys import Key
from contracts.execution_record import ScreeningLevels
from supervisor.boot.context import Boot
from supervisor.boot.execution import Executed, JobRun, clear_measurements, execute
from supervisor.boot.execution_outcome import ExecutionOutcome, errored
from supervisor.errors import PlatformError
from supervisor.experiment.model import Experiment
from supervisor.kinds.screening.table import Factor, Screening
from supervisor.kinds.screening.plan import Run
from supervisor.platforms.controls import ControlReport
from supervisor.platforms.factory import Machine
from supervisor.state.schedule import JobLine
from supervisor.kinds.screening.state import forget_switch, note_switch, plan_for, switched_for

@dataclass(frozen=True)
class InForce:
    """A factor's level read back as the one in force."""

    level: str

    def text(self) -> str:
        return self.level


@dataclass(frozen=True)
class NotInForce:
    """No level of the factor (or not the planned one) is in force, and why."""

    why: str

    def text(self) -> str:
        return f"not in force: {self.why}"     # the record's form (contracts ScreeningLevels.levels)


LevelReading = InForce | NotInForce


@dataclass
class JobLevels(JobRun):
    ctx: Boot                       # the boot with this job's experiment (env, args) and platform (controls)
    run: Run                        # the planned treatment
    factors: dict[str, Factor]      # the experiment's [screening] factors
    found: dict[str, LevelReading] = field(default_factory=dict)   # levels read back before the launch
    refusal: str | None = None      # why the job must not run: a level not in force
    reboot_first: bool = False      # a switch was issued: reboot before claiming the job

    def apply_and_verify(self) -> list[ControlReport]:
        """Step 4 for this job: the platform applied and verified once, its control levels read back."""
        return apply_levels(self)

    def execute(self, job: JobLine, attempt: int, before: dict) -> Executed:
        """The execution (refused when a level was not in force), with its levels read back from what was
        launched."""
        refusal = errored("not_in_force", self.refusal) if self.refusal is not None else None
        return execute(self.ctx, self.ctx.platform, job, attempt, before, refusal=refusal,
                       read_back=lambda run, own: read_back_levels(self, run, own))

    def wrong(self, name: str) -> str | None:
        """How factor ``name``'s reading differs from the planned level, or None when it is in force."""
        wanted, reading = self.run.levels[name], self.found[name]
        return None if reading == InForce(wanted) else f"{name} wanted {wanted}, {reading.text()}"


def cmdline_level(factor: Factor, cmdline: str) -> str | None:
    """The factor's level that /proc/cmdline shows, or None."""
    tokens = cmdline.split()
    present = [t for t in tokens if t == factor.parameter or t.startswith(f"{factor.parameter}=")]
    for level in factor.texts():
        want = factor.cmdline_token(level)
        if (want == "" and not present) or (want != "" and want in tokens):
            return level
    return None


def treatment(exp: Experiment, factors: dict[str, Factor], run: Run) -> tuple[Experiment, dict[str, Any]]:
    """The job's levels as values: its experiment (env and argument levels in its VM) and its [platform]
    overrides (control levels; a reboot factor's kernel command line may differ from the audit's)."""
    vm_name = Key.parse(run.key).vm
    vm = exp.vms[vm_name]
    env, args = dict(vm.env), list(vm.args)
    overrides: dict[str, Any] = {}
    for name, f in factors.items():
        level = run.levels[name]
        if f.kind == "env":
            env[_named(f.variable)] = f.env_value(level)
        elif f.kind == "argument":
            args += f.arguments(level)
        elif f.kind == "control":
            overrides[_named(f.control)] = f.levels[f.texts().index(level)]
    if any(f.needs_reboot for f in factors.values()):
        overrides["audit_allow_changes"] = [*exp.platform.audit_allow_changes, "kernel_cmdline"]
    vms = {**exp.vms, vm_name: vm.model_copy(update={"env": env, "args": args})}
    return exp.model_copy(update={"vms": vms}), overrides


def _screening(ctx: Boot) -> Screening:
    """The experiment's [screening] table: levels are only set for a screening experiment's jobs."""
    assert ctx.exp.screening is not None
    return ctx.exp.screening


def _named(value: str | None) -> str:
    """A factor's control or variable, which its kind requires (Factor's validator refuses it missing)."""
    assert value is not None
    return value


def levels_for_job(ctx: Boot, machine: Machine, job: JobLine) -> JobLevels:
    """The job's levels before step 4: reboot factors read back (or switched: reboot first), and the
    boot's experiment and platform with the job's levels (applied later, once, by ``apply_levels``)."""
    state, factors = ctx.state, _screening(ctx).factors
    run = plan_for(state.path, ctx.schedule).runs[job.index]
    levels = JobLevels(ctx, run, factors)
    problems = _reboot_levels(factors, run, machine, levels)
    if problems and switched_for(state.path) != (job.index, job.attempts):
        switched = _switch(ctx, machine, job, run, problems)
        if switched is None:
            levels.reboot_first = True      # this boot only reboots: its ctx stays the boot's own
            return levels
        problems.append(switched)
    treated, overrides = treatment(ctx.exp, factors, run)
    levels.ctx = dataclasses.replace(ctx, exp=treated, platform=ctx.platform.for_job(overrides))
    if problems:
        _refuse(levels, problems)
    return levels


def switch_ahead(ctx: Boot, machine: Machine) -> None:
    """Before the reboot that ends a job's boot: when the next job's reboot levels are not the ones in force,
    switch them now, so that the next boot starts in them (else it would only switch them and reboot again:
    one boot more per change of level).  A switch command that fails here is logged and forgotten; the next
    boot switches and reports as usual."""
    job = ctx.schedule.next_outstanding()
    factors = _screening(ctx).factors
    if job is None or not any(f.needs_reboot for f in factors.values()):
        return
    run = plan_for(ctx.state.path, ctx.schedule).runs[job.index]
    problems = _reboot_levels(factors, run, machine, JobLevels(ctx, run, factors))
    if not problems or switched_for(ctx.state.path) == (job.index, job.attempts):
        return
    failed = _switch(ctx, machine, job, run, problems)
    if failed is not None:
        forget_switch(ctx.state.path)
        ctx.log.warning("screening: switching ahead failed; the next boot tries again", reason=failed)


def apply_levels(levels: JobLevels) -> list[ControlReport]:
    """Apply and verify the job's platform once, reading its control levels back from the reports.

    A control level that reads back otherwise refuses the execution; one that cannot be set stops the
    pass (PlatformError), so the platform without the control levels is applied instead, for the rest of
    [platform].  A PlatformError from that one stops the experiment, as for any job."""
    controls = [n for n, f in levels.factors.items() if f.kind == "control"]
    if not controls or levels.refusal is not None:
        return levels.ctx.platform.apply_and_verify()
    try:
        reports = levels.ctx.platform.apply_and_verify()
    except PlatformError as e:
        # Whatever failed, this treatment's levels were in the pass; a fault of [platform] itself fails again
        # in the pass without them and stops the experiment.
        _refuse(levels, [f"the platform could not be applied with this treatment's control levels: {e}"])
        return levels.ctx.platform.apply_and_verify()
    by_control = {r.control: r for r in reports}
    for name in controls:
        levels.found[name] = _control_level(levels.factors[name], levels.run.levels[name], by_control)
    problems = [f"{n} ({levels.factors[n].control}) wanted {levels.run.levels[n]}, {levels.found[n].text()}"
                for n in controls if levels.wrong(n)]
    if problems:      # everything else is applied; post-checks then leave the refused controls alone
        _refuse(levels, problems)
    return reports


def _refuse(levels: JobLevels, problems: list[str]) -> None:
    """The execution fails with ``problems``; the platform leaves the control levels alone from now on."""
    ctx = levels.ctx
    levels.refusal = "screening: " + "; ".join(problems)
    controls = [f for f in levels.factors.values() if f.kind == "control"]
    ignored = {_named(f.control): "ignore" for f in controls}
    levels.ctx = dataclasses.replace(ctx, platform=ctx.platform.for_job(ignored))
    for name, f in levels.factors.items():
        if f.kind == "control":
            levels.found.setdefault(name, NotInForce("not set"))
    ctx.log.warning("screening level not in force; the execution fails", treatment=levels.run.treatment,
                    reason=levels.refusal)


def _control_level(factor: Factor, wanted: str, reports: dict[str, ControlReport]) -> LevelReading:
    report = reports.get(_named(factor.control))
    if report is None:
        return NotInForce("this platform has no such control")
    if report.ok and report.found is not None and report.found == report.wanted:
        return InForce(wanted)
    return NotInForce(f"reads back {report.found}")


def _reboot_levels(factors: dict[str, Factor], run: Run, machine: Machine, levels: JobLevels) -> list[str]:
    """Read each reboot factor's level from the running system; the mismatches, one phrase each."""
    problems = []
    if not any(f.kind == "kernel_cmdline" for f in factors.values()):
        cmdline = ""
    else:
        try:
            cmdline = machine.root.read_text("/proc/cmdline").strip()
        except OSError as e:
            cmdline = ""
            problems.append(f"cannot read /proc/cmdline ({e.strerror})")
    for name, f in factors.items():
        if f.kind == "kernel_cmdline":
            found = cmdline_level(f, cmdline)
            token = f.cmdline_token(run.levels[name]) or f"no {f.parameter}"
            seen = f"/proc/cmdline shows {found or 'no level'}: {cmdline!r}"
        elif f.kind == "boot_setting":
            found, seen = reported_level(f, machine)
            token = f.reported_value(run.levels[name])
        else:
            continue
        levels.found[name] = InForce(found) if found is not None else NotInForce(seen)
        if found != run.levels[name]:
            problems.append(f"{name} wanted {run.levels[name]} ({token}) but {seen}")
    return problems


def reported_level(factor: Factor, machine: Machine) -> tuple[str | None, str]:
    """A boot_setting's level as its report command tells it, and what it printed (for the reason)."""
    result = machine.commands.run(factor.report or [])
    if not result.ok:
        return None, f"{' '.join(factor.report or [])} failed: {result.stderr.strip() or result.returncode}"
    out = result.stdout.strip()
    found = [lv for lv in factor.texts() if factor.reported_value(lv) == out]
    return (found[0] if len(found) == 1 else None), f"{' '.join(factor.report or [])} reports {out!r}"


def _switch(ctx: Boot, machine: Machine, job: JobLine, run: Run, problems: list[str]) -> str | None:
    """Run the switch command of every reboot factor not in force; None when done (reboot next), else why not."""
    note_switch(ctx.state.path, job.index, job.attempts)
    for name, f in _screening(ctx).factors.items():
        if not f.needs_reboot:
            continue
        level = run.levels[name]
        if f.restore:    # in the undo log before the first switch, so finish and abort put the machine back
            ctx.platform.undo_log().record(f"screening.{name}", f"screening.{name}",
                                           {"action": "run", "argv": list(f.restore)})
        token = f.cmdline_token(level) if f.kind == "kernel_cmdline" else f.reported_value(level)
        argv = [a.replace("{level}", level).replace("{token}", token) for a in f.switch or []]
        ctx.log.info("screening: switching a level that needs a reboot", factor=name, level=level,
                     argv=" ".join(argv))
        result = machine.commands.run(argv)
        if not result.ok:
            return f"switch command for {name} = {level} failed ({' '.join(argv)}: " \
                   f"{result.stderr.strip() or result.returncode})"
    ctx.log.info("screening: rebooting into the job's levels", job=job.index, problems="; ".join(problems))
    return None


def _argument_level(factor: Factor, argv: list[str]) -> str | None:
    """The argument level whose arguments appear in argv (an empty level: when no other level's do)."""
    def contains(args: list[str]) -> bool:
        return any(argv[i:i + len(args)] == args for i in range(len(argv) - len(args) + 1))
    seen = [lv for lv in factor.texts() if factor.arguments(lv) and contains(factor.arguments(lv))]
    if len(seen) == 1:
        return seen[0]
    empty = [lv for lv in factor.texts() if not factor.arguments(lv)]
    return empty[0] if not seen and empty else None


def launched_level(factor: Factor, key: str, run: dict) -> LevelReading:
    """A benchmark-side factor's level as the run's key, argv and environment show the runner was launched."""
    _, vm, variant = Key.parse(key)
    if factor.kind == "vm":
        return InForce(vm)
    if factor.kind == "variant":
        found = [lv for lv in factor.texts() if factor.variant_name(lv, vm) == variant]
        return InForce(found[0]) if len(found) == 1 else NotInForce(f"variant {variant}")
    argv, environment = run.get("argv"), run.get("environment")
    if argv is None or environment is None:
        return NotInForce("the runner was not launched")
    if factor.kind == "env":
        value = environment.get(factor.variable or "")
        found = [lv for lv in factor.texts() if factor.env_value(lv) == value]
        return InForce(found[0]) if len(found) == 1 else NotInForce(f"{factor.variable}={value}")
    level = _argument_level(factor, argv)
    return InForce(level) if level is not None else NotInForce("argv matches no level")


def read_back_levels(levels: JobLevels, run: dict, own: ExecutionOutcome) -> tuple[ExecutionOutcome, dict]:
    """The record's screening part (the levels in force), and the outcome: a completed run with a level not
    in force at the launch fails, and keeps no measurements."""
    planned = levels.run
    for name, f in levels.factors.items():
        if not (f.kind == "control" or f.needs_reboot):   # those were read back before the launch
            levels.found[name] = launched_level(f, planned.key, run)
    wrong = [w for w in map(levels.wrong, levels.factors) if w]
    if wrong and own.completed:
        own = errored("not_in_force", "screening: level not in force at the launch: " + "; ".join(wrong))
        clear_measurements(run)
    part = ScreeningLevels(treatment=planned.treatment, levels={n: r.text() for n, r in levels.found.items()},
                           batch=planned.batch, replicate=planned.replicate)
    return own, {"screening": part}
