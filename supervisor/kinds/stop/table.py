"""The experiment file's [stop] table: run length driven by a confidence interval, not by a count.

With ``[stop]`` each bench:vm:variant key starts with ``min_executions`` jobs;
between executions the supervisor analyses the key's records with Pilot's
stopping rule (analysis.pilot.stopping) and appends one job at a time until
the CI of the key's mean is as narrow as asked, or ``max_executions`` is
reached.  ``[stop.wps]`` instead chooses each execution's ``param`` (work
amount) with Pilot's slice schedule and judges the CI of v, the work rate
fitted by Pilot's WPS regression (analysis.pilot.wps).

Field bounds are checked here; rules between fields (a target is required,
min <= max, ...) are in ``problems``, one (dotted field, message) each.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from supervisor.experiment.strict import StrictTable
from supervisor.experiment.quantities import parse_duration

# Pilot's default session duration for the WPS slice schedule (session_desired_duration).
WPS_SESSION_SECONDS = 60.0



def _positive_duration(why: str) -> AfterValidator:
    def check(value: float) -> float:
        if value <= 0:
            raise ValueError(why)
        return value
    return AfterValidator(check)


def _seconds(examples: list[str]) -> WithJsonSchema:
    return WithJsonSchema({"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                     {"type": "string", "examples": examples}],
                           "description": f"seconds, or a string like \"{examples[0]}\""})


def _fraction_of_mean(value: float) -> float:
    if value <= 0:
        raise ValueError("a zero width can never be reached; give a fraction of the mean like 0.02 (2 %)")
    if value > 1:
        raise ValueError(f"{value:g} is a fraction of the mean, so {value:g} means {value * 100:g} %; "
                         f"write e.g. 0.02 for 2 %")
    return value


class Wps(StrictTable):
    """Pilot's work-per-second mode: the supervisor chooses each execution's param."""
    min_param: int = Field(strict=True, ge=1, le=2 ** 31 - 1,
                           description="the smallest work amount (run_iter param) an execution gets; the first "
                                       "execution runs it")
    max_param: int = Field(strict=True, ge=1, le=2 ** 31 - 1,
                           description="the largest work amount (run_iter param) an execution gets")
    session: Annotated[float, BeforeValidator(parse_duration),
                       _positive_duration("must be more than 0 s (Pilot: 60 s)"), _seconds(["60s", "5min"])] = Field(
        default=WPS_SESSION_SECONDS,
        description="Pilot's desired session duration, which sets the slice size of the work-amount schedule "
                    "(Pilot: 60 s)")


class Stop(StrictTable):
    """The run-length target of every key (Pilot's stopping rule)."""
    ci_percent: Annotated[float, AfterValidator(_fraction_of_mean)] | None = Field(
        default=None, description="wanted FULL confidence-interval width as a fraction of the mean (0.02 = 2 %)")
    ci_width: Annotated[float, BeforeValidator(parse_duration),
                        _positive_duration("a zero width can never be reached; give a width like \"2ms\""),
                        _seconds(["2ms", "0.5s"])] | None = Field(
        default=None, description="wanted FULL confidence-interval width as a duration (\"2ms\"); with "
                                  "ci_percent too, the smaller width wins (Pilot)")
    confidence: float = Field(default=0.95, ge=0.5, lt=1, description="confidence level of the interval")
    # 8, not fewer: stopping as soon as the CI looks narrow favours runs whose spread looks small by
    # chance; simulated, final 95 % CIs cover ~0.95 from 8 executions but 0.87-0.92 from 3
    # (tests/analysis/pilot/test_pilot_stopping.py).
    min_executions: int = Field(default=8, strict=True, ge=2, le=100_000,
                                description="process executions per key before the first decision (at least 2: "
                                            "the CI is taken across executions; below the default 8 the final "
                                            "CI covers less than its confidence level)")
    max_executions: int = Field(default=30, strict=True, ge=2, le=100_000,
                                description="process executions per key at most; a key that reaches it without "
                                            "meeting the target stops and says so")
    estimate: Literal["pilot", "warmup_stats"] = Field(
        default="pilot", description='each execution\'s steady-state mean: "pilot" (the mean of Pilot\'s dominant '
                                     'segment) or "warmup_stats" (the mean of warmup_stats\' steady state)')
    adapt_iterations: bool = Field(
        default=False, description="let the supervisor choose each execution's in-process iterations (Pilot's "
                                   "next-round work amount), starting from the VM's iterations")
    max_iterations: int | None = Field(
        default=None, strict=True, ge=1, le=100_000,
        description="with adapt_iterations: the most in-process iterations one execution may run")
    ac_limit: float = Field(default=0.1, gt=0, le=1,
                            description="autocorrelation limit for subsession merging (Pilot: 0.1)")
    min_samples: int = Field(default=200, strict=True, ge=1, le=100_000,
                             description="Pilot's minimum subsession sample size within one execution")
    wps: Wps | None = Field(default=None, description="choose each execution's param and judge the work rate v")


def problems(stop: Stop, vms: dict) -> list[tuple[str, str]]:
    """Rules between [stop]'s fields and the VMs, as (dotted field, message)."""
    out: list[tuple[str, str]] = []
    if stop.ci_percent is None and stop.ci_width is None:
        out.append(("stop", "give a target: ci_percent (CI width as a fraction of the mean, e.g. 0.02) or "
                            "ci_width (e.g. \"2ms\")"))
    if stop.max_executions < stop.min_executions:
        out.append(("stop.max_executions", f"{stop.max_executions} is less than min_executions = "
                                           f"{stop.min_executions}; raise it"))
    if stop.adapt_iterations and stop.max_iterations is None:
        out.append(("stop.max_iterations", "required with adapt_iterations = true: the most in-process "
                                           "iterations one execution may run"))
    if not stop.adapt_iterations and stop.max_iterations is not None:
        out.append(("stop.max_iterations", "only used with adapt_iterations = true; remove it or set "
                                           "adapt_iterations = true"))
    for name, vm in vms.items():
        if vm.mode == "startup":
            out.append((f"vms.{name}.mode", "a startup-time VM runs one iteration per execution, which [stop] "
                                            "cannot estimate a steady state from; use executions instead of "
                                            "[stop]"))
        elif stop.adapt_iterations and stop.max_iterations is not None and vm.iterations > stop.max_iterations:
            out.append(("stop.max_iterations", f"{stop.max_iterations} is below vms.{name}.iterations = "
                                               f"{vm.iterations}, the first executions' count; raise it"))
    if stop.wps is not None:
        if stop.wps.max_param <= stop.wps.min_param:
            out.append(("stop.wps.max_param", f"{stop.wps.max_param} is not above min_param = "
                                              f"{stop.wps.min_param}; the schedule needs a range"))
        if stop.ci_width is not None:
            out.append(("stop.ci_width", "[stop.wps] judges v (param units per second), not a duration; use "
                                         "ci_percent"))
        if stop.adapt_iterations:
            out.append(("stop.adapt_iterations", "[stop.wps] chooses each execution's param, with the VM's "
                                                 "iterations; remove adapt_iterations"))
    return out
