"""Before a screening experiment starts: can this machine take every level, and can this mode verify them?

Read only, like `platform check`: each platform-control level is inspected
with the machine's own control (a governor the driver does not offer, a
control the machine lacks).  With --simulate-reboots nothing is applied, so
control and reboot factors could never be read back: refused too.
"""

from __future__ import annotations


from supervisor.experiment.model import Experiment
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.kinds.screening.table import Factor
from supervisor.platforms.factory import NO_STATE_DIR, Machine, QuietLog, detect_platform_name, make_platform


def level_problems(exp: Experiment, machine: Machine, *, simulate: bool) -> list[str]:
    """One line per factor level that cannot be set or verified here (dotted field first)."""
    sc = exp.screening
    assert sc is not None
    out = []
    for name, f in sc.factors.items():
        if simulate and (f.kind == "control" or f.needs_reboot):
            out.append(f"screening.factors.{name}: a {f.kind} factor cannot be set or read back with "
                       f"--simulate-reboots (the simulated platform changes nothing); start without it, or "
                       f"screen benchmark-side factors (variant, vm, env, argument)")
        elif f.kind == "control":
            out += [f"screening.factors.{name}.levels: {line}" for line in _control_problems(exp, f, machine)]
    return out


def _control_problems(exp: Experiment, f: Factor, machine: Machine) -> list[str]:
    lines = []
    for value, text in zip(f.levels, f.texts()):
        policy = PlatformPolicy.model_validate({**exp.platform.model_dump(), f.control: value})
        platform = make_platform(detect_platform_name(), policy, NO_STATE_DIR, root=machine.root,
                                 commands=machine.commands, clock=machine.clock, log=QuietLog())
        reports = [c.inspect() for c in getattr(platform, "controls", list)() if c.name == f.control]
        if not reports:
            lines.append(f"{text}: this platform has no {f.control} control; remove the factor")
            continue
        r = reports[0]
        if r.action == "unavailable" or r.fatal:
            lines.append(f"{f.control} = {text} cannot be set on this machine ({r.fix or r.found})")
    return lines
