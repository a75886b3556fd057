"""`coldrun check`'s screening section: the design, the run order, the boots and an ETA."""

from __future__ import annotations

from supervisor.experiment.model import Experiment
from supervisor.experiment.quantities import format_duration
from supervisor.kinds.screening.plan import ScreeningPlan

SHOWN_JOBS = 24


def check_lines(exp: Experiment, plan: ScreeningPlan, *, show_all: bool, seed_chosen: bool) -> list[str]:
    names = list(plan.factors)
    width = max(len(n) for n in names)
    lines = [f"screening: {plan.design}, {plan.treatments_run} of {plan.treatments_designed} treatments run"]
    for name, levels in plan.factors.items():
        kind = exp.screening.factors[name].kind if exp.screening else "?"
        reboot = ", needs a reboot" if name in plan.reboot_factors else ""
        lines.append(f"  factor {name:{width}s} ({kind}{reboot}): {', '.join(levels)}")
    lines += [f"warning: {w}" for w in plan.warnings]
    seed = "seed chosen at start and recorded (shown with seed 0)" if seed_chosen else f"seed {plan.seed}"
    lines += alias_lines(plan)
    lines.append(f"order: {plan.batches()} batch(es) by the levels needing a reboot, {exp.executions} replicate(s) "
                 f"each, every treatment once per replicate in a fresh random order; {seed}")
    lines += whole_plot_lines(plan)
    if plan.boot_check_batch is not None:
        n = sum(r.batch == plan.boot_check_batch for r in plan.runs)
        lines.append(f"boot check: batch {plan.boot_check_batch}, {n} boots (balanced, not alternating)")
    lines.append(f"design order ({len(plan.runs)} executions):")
    shown = plan.runs if show_all or len(plan.runs) <= SHOWN_JOBS else plan.runs[:SHOWN_JOBS - 4]
    for i, r in enumerate(shown):
        run_levels = " ".join(f"{n}={r.levels[n]}" for n in names)
        lines.append(f"  {i:5d} batch {r.batch} rep {r.replicate} treatment {r.treatment:3d}  {r.key}  {run_levels}")
    if len(shown) < len(plan.runs):
        lines.append(f"  ... {len(plan.runs) - len(shown)} more (--all shows every execution)")
    boots = plan.boots()
    waits = len(plan.runs) * exp.waits.per_execution   # switching and finishing boots wait for none
    lines.append(f"boots: up to {boots} ({len(plan.runs)} executions, {plan.switches()} level switches, 1 to "
                 f"finish)" + (f"; max_boots {exp.screening.max_boots}" if exp.screening and
                               exp.screening.max_boots else ""))
    lines.append(f"ETA: at least {format_duration(waits)} of waits ({len(plan.runs)} x boot settle + sync), "
                 f"plus reboots "
                 f"and benchmark run time")
    return lines


def alias_lines(plan: ScreeningPlan) -> list[str]:
    """The alias structure of a fractional design: each set is one estimate, named by all its members."""
    if plan.design == "full factorial":
        return []
    if not plan.aliases:
        lines = ["aliases: none among main effects and 2-factor interactions (words up to 3 factors)"]
    else:
        lines = [f"aliases ({len(plan.aliases)} set(s); each is one estimate, reported under all its names; "
                 "words up to 3 factors):"] + [f"  {' = '.join(group)}" for group in plan.aliases]
    if plan.design == "Plackett-Burman" and plan.treatments_designed & (plan.treatments_designed - 1):
        lines.append(f"  note: a {plan.treatments_designed}-run Plackett-Burman design aliases 2-factor "
                     "interactions with main effects partially, which these exact sets do not show")
    return lines


def whole_plot_lines(plan: ScreeningPlan) -> list[str]:
    """The split plot's whole-plot degrees of freedom: can the factors needing a reboot be tested?"""
    if not plan.reboot_factors:
        return ["whole plots: no factor needs a reboot, so every factor is tested within batches"]
    names = ", ".join(plan.reboot_factors)
    dof = plan.whole_plot_dof()
    line = (f"whole plots: {plan.batches()} batch(es) for {plan.whole_plots} combination(s) of {names}: {dof} "
            f"degree(s) of freedom for batch-to-batch error")
    if dof == 0:
        return [line, f"warning: {names} completely confounded with the batches: no CI or p-value for them; "
                      f"screening.batches_per_level = 2 ({2 * plan.whole_plots} batches) makes them testable"]
    return [line + f"; {names} tested against it"]
