"""The experiment file's [screening] table: factors, their levels, the design (NIST TN 1855).

A factor is one of three things:

- a platform control coldrun already has (``kind = "control"``, ``control =
  "aslr"``): applied and read back at every boot through the [platform]
  controls and their undo log;
- a benchmark-side factor: ``"variant"`` or ``"vm"`` (levels are names under
  [variants] / [vms]), ``"env"`` (a variable of the runner's environment) or
  ``"argument"`` (arguments of the VM before the benchmark file);
- ``"kernel_cmdline"``: needs a reboot; ``switch`` is the command that makes
  the next boot use a level (e.g. ``grub-reboot``), and the level in force is
  read back from /proc/cmdline after the boot;
- ``"boot_setting"``: any other setting that takes effect at boot (a kernel
  chosen by the bootloader, a sysctl.d file): ``switch`` as above, and
  ``report``, a command whose output after the boot names the level in force.

``executions`` (the top-level field) is the number of replicates: in each
batch, each replicate runs every treatment once, in a fresh seeded order.
``batches_per_level`` (default 2) is how many batches (whole plots) each
combination of the levels needing a reboot gets: one batch per level leaves
such a factor completely confounded with its batch, so it cannot be tested.
This module only validates; the design and order are built by
screening_design.py and screening_plan.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from supervisor.experiment.strict import StrictTable
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.experiment.union_forms import one_of

# [platform] fields that coldrun sets and reads back at run time (controls.py / linux_controls.py).
# smt, swap, tickless are check-only: a kernel_cmdline factor (nosmt, nohz_full=) covers them.
RUNTIME_CONTROLS = ("governor", "turbo", "energy_performance_preference", "perf_max_sample_rate",
                    "perf_cpu_time_max_percent", "aslr", "overcommit_memory",
                    "transparent_hugepages")
CHECK_ONLY_CONTROLS = {"smt": "nosmt", "tickless": "nohz_full=", "swap": None, "intel_pstate": "intel_pstate="}
# Values that leave a control out or only report it: no level at all.
NOT_A_LEVEL = ("ignore", "report")
REBOOT_KINDS = ("kernel_cmdline", "boot_setting")
DESIGNS = ("full", "fractional", "plackett-burman")

# mypy cannot follow one_of's union built at run time: it checks the plain union (the same branches) instead.
if TYPE_CHECKING:
    Level = bool | int | str
    LevelValues = list[str] | str | dict[str, str]
else:
    Level = one_of(bool, int, str)
    LevelValues = one_of(list[str], str, dict[str, str])


def level_text(value: Level) -> str:
    """A level as records and exports carry it: true/false, the integer, or the string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)



class Factor(StrictTable):
    kind: Literal["control", "variant", "vm", "env", "argument", "kernel_cmdline", "boot_setting"] = Field(
        description="what the factor changes: a [platform] control, the variant, the vm (runner), an "
                    "environment variable, the VM's arguments, a kernel command-line parameter (reboot), or "
                    "another setting that takes effect at boot")
    levels: list[Level] = Field(description="two or more distinct levels; the first is the reference level")
    control: str | None = Field(default=None, description='kind = "control": the [platform] field, e.g. "aslr"')
    variable: str | None = Field(default=None, description='kind = "env": the variable\'s name')
    parameter: str | None = Field(default=None, description='kind = "kernel_cmdline": the parameter, e.g. '
                                                            '"mitigations"')
    values: dict[str, LevelValues] = Field(
        default_factory=dict,
        description='kind = "argument": level -> list of arguments (default: the level as one argument); '
                    'kind = "kernel_cmdline": level -> the /proc/cmdline token ("" = parameter absent; '
                    'default: parameter=level); kind = "variant": level -> variant name, or a table vm -> '
                    'variant name (default: the level is the variant name); kind = "env": level -> value '
                    '(default: the level)')
    switch: list[str] | None = Field(
        default=None, description='kinds needing a reboot: argv that makes the next boot use a level; '
                                  '{level} and {token} (the cmdline token, or the reported value) are replaced (e.g. '
                                  '["grub-reboot", "{level}"])')
    restore: list[str] | None = Field(
        default=None, description='kinds needing a reboot: argv that undoes the switches, run (from the undo '
                                  'log) when the experiment finishes or is aborted')
    report: list[str] | None = Field(
        default=None, description='kind = "boot_setting": argv whose output (stripped) after a boot is the level '
                                  'in force, or its value under values (e.g. ["uname", "-r"])')

    @property
    def needs_reboot(self) -> bool:
        return self.kind in REBOOT_KINDS

    def texts(self) -> list[str]:
        return [level_text(v) for v in self.levels]

    def arguments(self, level: str) -> list[str]:
        v = self.values.get(level, [level])
        return [v] if isinstance(v, str) else list(v)

    def env_value(self, level: str) -> str:
        """kind = "env": the variable's value at ``level`` (default: the level itself)."""
        v = self.values.get(level, level)
        return v if isinstance(v, str) else level

    def variant_name(self, level: str, vm: str) -> str | None:
        """kind = "variant": the variant that runs ``level`` on ``vm`` (None: no such build for that vm)."""
        v = self.values.get(level, level)
        return v.get(vm) if isinstance(v, dict) else v if isinstance(v, str) else None

    def reported_value(self, level: str) -> str:
        """kind = "boot_setting": what ``report`` prints when ``level`` is in force."""
        v = self.values.get(level, level)
        return v if isinstance(v, str) else level

    def cmdline_token(self, level: str) -> str:
        v = self.values.get(level, f"{self.parameter}={level}")
        return v if isinstance(v, str) else " ".join(v)

    @model_validator(mode="after")
    def _shape(self) -> "Factor":
        texts = self.texts()
        if len(texts) < 2:
            raise ValueError(f"levels: a factor needs at least two levels, got {len(texts)}; add a level or "
                             f"remove the factor")
        dupes = sorted({t for t in texts if texts.count(t) > 1})
        if dupes:
            raise ValueError(f"levels: {', '.join(dupes)} given more than once; levels must be distinct")
        needs = {"control": "control", "env": "variable", "kernel_cmdline": "parameter"}
        for kind, field in needs.items():
            if self.kind == kind and getattr(self, field) is None:
                raise ValueError(f'kind = "{kind}" needs {field} = "..."')
        needs["boot_setting"] = "report"
        for field in ("control", "variable", "parameter", "switch", "restore", "report"):
            if getattr(self, field) is not None and needs.get(self.kind) != field and \
                    not (field in ("switch", "restore") and self.needs_reboot):
                raise ValueError(f'{field} is not used by kind = "{self.kind}"; remove it')
        if self.kind == "boot_setting" and not self.report:
            raise ValueError('kind = "boot_setting" needs report = [...], the command that prints the level in '
                             'force after a boot')
        if self.values and self.kind not in ("argument", "kernel_cmdline", "variant", "env", "boot_setting"):
            raise ValueError(f'values is not used by kind = "{self.kind}"; remove it')
        shapes = {"argument": (list, str), "kernel_cmdline": (str,), "variant": (str, dict),
                  "env": (str,), "boot_setting": (str,)}.get(self.kind, ())
        shape_names = {list: "a list of strings", str: "a string", dict: "a table vm -> variant"}
        for level, v in self.values.items():
            if not isinstance(v, shapes):
                raise ValueError(f'values.{level}: kind = "{self.kind}" takes '
                                 f'{" or ".join(shape_names[t] for t in shapes)}')
        unknown = sorted(set(self.values) - set(texts))
        if unknown:
            raise ValueError(f"values: {', '.join(unknown)} is not a level ({', '.join(texts)})")
        if self.needs_reboot and self.switch is None:
            raise ValueError(f'kind = "{self.kind}" needs switch = [...], the command that makes the next '
                             f'boot use a level (e.g. ["grub-reboot", "{{level}}"])')
        if self.kind == "control":
            self._control_levels()
        return self

    def _control_levels(self) -> None:
        if self.control in CHECK_ONLY_CONTROLS:
            hint = CHECK_ONLY_CONTROLS[self.control]
            raise ValueError(f"control {self.control!r} is only checked, coldrun cannot set it at run time"
                             + (f'; use kind = "kernel_cmdline" with parameter {hint!r}' if hint else ""))
        if self.control not in RUNTIME_CONTROLS:
            raise ValueError(f"control {self.control!r} is not a [platform] control coldrun sets; use one of "
                             f"{', '.join(RUNTIME_CONTROLS)}")
        for value in self.levels:
            if value in NOT_A_LEVEL:
                raise ValueError(f"levels: {value!r} leaves the control alone, so it is no level; give values "
                                 f"coldrun sets")
            try:
                PlatformPolicy.model_validate({self.control: value})
            except ValidationError as e:
                why = e.errors()[0]["msg"].removeprefix("Value error, ")
                raise ValueError(f"levels: {level_text(value)!r} is not a value of [platform] "
                                 f"{self.control}: {why}") from None


class BootCheck(StrictTable):
    """TN 1855's side experiment: does a boot shift performance?  k boots per level, m samples per boot."""
    factor: str = Field(description="the factor whose levels the boots alternate (usually one needing a reboot)")
    boots_per_level: Annotated[int, Field(strict=True, ge=2, le=1000)] = Field(
        description="k: boots per level (at least 2, so the order can be balanced but not alternating)")
    samples_per_boot: Annotated[int, Field(strict=True, ge=1, le=100_000)] = Field(
        description="m: in-process iterations of the one execution each boot runs")


class Screening(StrictTable):
    factors: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+-]+$")], Factor] = Field(min_length=1)
    design: Literal["full", "fractional", "plackett-burman"] = Field(
        default="full", description="full factorial; a 2-level fractional factorial (resolution or "
                                    "generators); or Plackett-Burman (2-level factors)")
    resolution: Annotated[int, Field(strict=True, ge=3, le=8)] | None = Field(
        default=None, description='design = "fractional": the smallest design of this resolution')
    generators: str | None = Field(
        default=None, description='design = "fractional": pyDOE3 generator words, one per factor in order, '
                                  'e.g. "a b ab"')
    exclude: list[dict[str, Level]] = Field(
        default_factory=list, description="infeasible treatments: each table {factor = level, ...} removes "
                                          "every treatment matching all of its entries")
    batches_per_level: Annotated[int, Field(strict=True, ge=1, le=100)] = Field(
        default=2, description="whole plots: batches per combination of the levels needing a reboot, each "
                               "running every replicate of its treatments, in a seeded order that switches "
                               "levels between every two batches; 2 or more lets the factors needing a reboot "
                               "be tested against batch-to-batch variation (1: TN 1855's one batch per level, "
                               "which confounds them with their batch)")
    max_boots: Annotated[int, Field(strict=True, ge=1)] | None = Field(
        default=None, description="refuse a design that needs more boots than this")
    boot_check: BootCheck | None = None

    @model_validator(mode="after")
    def _design_options(self) -> "Screening":
        if self.design == "fractional" and (self.resolution is None) == (self.generators is None):
            raise ValueError('design = "fractional" needs exactly one of resolution or generators')
        if self.design != "fractional" and (self.resolution is not None or self.generators is not None):
            raise ValueError(f'resolution and generators are for design = "fractional", not "{self.design}"')
        if self.design != "full":
            many = [name for name, f in self.factors.items() if len(f.levels) != 2]
            if many:
                raise ValueError(f'design = "{self.design}" takes 2-level factors only; {", ".join(many)} '
                                 f'has more levels (use design = "full")')
        return self

    def names(self) -> list[str]:
        return list(self.factors)


def problems(exp: Any) -> list[tuple[str, str]]:
    """Problems between [screening] and the rest of the file (``exp``: the model's Experiment, which
    imports this module), as (dotted field, message)."""
    sc = exp.screening
    assert sc is not None
    out: list[tuple[str, str]] = []
    if exp.stop is not None:
        out.append(("stop", "[screening] runs each treatment a fixed number of times (executions = replicates); "
                            "remove [stop]"))
    if exp.skip:
        out.append(("skip", "with [screening], leave out treatments with screening.exclude; remove skip"))
    by_kind: dict[str, list[str]] = {}
    for name, f in sc.factors.items():
        by_kind.setdefault(f.kind, []).append(name)
    for kind in ("vm", "variant"):
        if len(by_kind.get(kind, [])) > 1:
            out.append((f"screening.factors.{by_kind[kind][1]}", f'only one factor may have kind = "{kind}"'))
    vm_factor = next((sc.factors[n] for n in by_kind.get("vm", [])), None)
    variant_factor = next((sc.factors[n] for n in by_kind.get("variant", [])), None)
    vm_names = vm_factor.texts() if vm_factor else list(exp.vms)
    if vm_factor is None and len(exp.vms) != 1:
        out.append(("vms", f"[screening] without a vm factor runs one vm, but {len(exp.vms)} are defined; add "
                           f'a factor with kind = "vm" or keep one vm'))
    for name in by_kind.get("vm", []):
        for level in sc.factors[name].texts():
            if level not in exp.vms:
                out.append((f"screening.factors.{name}.levels", f"{level!r} is not under [vms]; levels of a vm "
                                                                f"factor are vm names"))
    for vm_name in (v for v in vm_names if v in exp.vms):
        variants = exp.vms[vm_name].variants
        if variant_factor is None and len(variants) != 1:
            out.append((f"vms.{vm_name}.variants", f'[screening] without a variant factor runs one variant per '
                                                   f'vm, but it lists {len(variants)}; add a factor with kind = '
                                                   f'"variant" or list one'))
        for name in by_kind.get("variant", []):
            for level in sc.factors[name].texts():
                variant = sc.factors[name].variant_name(level, vm_name)
                if variant is not None and variant not in variants:    # None: the plan checks kept treatments
                    out.append((f"screening.factors.{name}.levels",
                                f"level {level!r} runs variant {variant!r}, which is not in "
                                f"vms.{vm_name}.variants; add it there"))
    variables = [sc.factors[n].variable for n in by_kind.get("env", [])]
    for v in sorted({v for v in variables if variables.count(v) > 1}):
        out.append(("screening.factors", f"two env factors set {v}; one factor per variable"))
    for i, entry in enumerate(sc.exclude):
        out += [(f"screening.exclude.{i}", line) for line in _unknown_levels(sc, entry)]
        if not entry:
            out.append((f"screening.exclude.{i}", "an empty table would exclude every treatment; remove it"))
    if sc.boot_check is not None and sc.boot_check.factor not in sc.factors:
        out.append(("screening.boot_check.factor", f"unknown factor {sc.boot_check.factor!r}; factors: "
                                                   f"{', '.join(sc.factors)}"))
    return out


def _unknown_levels(sc: Screening, entry: dict[str, Level]) -> list[str]:
    lines = []
    for name, value in entry.items():
        if name not in sc.factors:
            lines.append(f"unknown factor {name!r}; factors: {', '.join(sc.factors)}")
        elif level_text(value) not in sc.factors[name].texts():
            lines.append(f"{name} has no level {level_text(value)!r} (levels: "
                         f"{', '.join(sc.factors[name].texts())})")
    return lines
