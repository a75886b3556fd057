"""The experiment file (TOML): pydantic models and the loader.

Every concept of a Krun configuration has a TOML form here: language
implementations (``[vms.NAME]``), benchmarks (name -> run_iter param),
variants (file target and subdirectory), process executions per key, skip
patterns, heap/stack limits, timeout, pre/post commands, waits, mail, the
platform policy and the re-run policy.  Errors end in one line naming the
file, the dotted field path and a fix.
"""

from __future__ import annotations

import difflib
import hashlib
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo,
                      WithJsonSchema, field_validator, model_validator)

from supervisor.errors import ColdrunError
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.experiment.quantities import parse_duration, parse_size

NAME_PATTERN = r"^[A-Za-z0-9_.+-]+$"

Duration = Annotated[
    float, BeforeValidator(parse_duration),
    WithJsonSchema({"anyOf": [{"type": "number", "minimum": 0},
                              {"type": "string", "examples": ["90s", "3min", "1h", "0"]}],
                    "description": "seconds, or a string like \"90s\", \"3min\", \"1h\""}),
]
Size = Annotated[
    int, BeforeValidator(parse_size),
    WithJsonSchema({"type": "string", "examples": ["2GiB", "512MiB", "8MiB"],
                    "description": "a size with a unit"}),
]
Name = Annotated[str, Field(pattern=NAME_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShellCommand(_Strict):
    """A command run through /bin/sh -c: only when the user writes {shell = "..."}."""
    shell: str


Command = Union[Annotated[list[str], Field(min_length=1)], ShellCommand]


def command_argv(cmd: Command) -> list[str]:
    if isinstance(cmd, ShellCommand):
        return ["/bin/sh", "-c", cmd.shell]
    return list(cmd)


def instrumentable_runners() -> tuple[str, ...]:
    """Runners whose language implementation reports JIT/GC events (iteration_runners.languages)."""
    from iteration_runners.languages import LANGUAGE_RUNNERS
    return tuple(name for name, r in LANGUAGE_RUNNERS.items() if r.instrumentable)


def startup_runners() -> tuple[str, ...]:
    """Runners that have a startup-time dummy runner."""
    from iteration_runners.languages import LANGUAGE_RUNNERS, STARTUP_ONLY_RUNNERS
    return tuple(STARTUP_ONLY_RUNNERS) + tuple(LANGUAGE_RUNNERS)


class VM(_Strict):
    """A language implementation (Krun's VMS entry)."""
    runner: str = Field(description="iteration runner: python, c, ... or external")
    executable: str | None = Field(
        default=None,
        description='absolute path, a name found on PATH, or "@python" for the interpreter running coldrun; '
                    "not needed for the c runner")
    args: list[str] = Field(default_factory=list, description="arguments before the runner file")
    env: dict[str, str] = Field(default_factory=dict, description="extra environment (appended with ':' when the name is already set)")
    iterations: int = Field(gt=0, description="in-process iterations per process execution")
    variants: list[Name] = Field(min_length=1)
    mode: Literal["iterations", "startup"] = Field(
        default="iterations",
        description='"startup" measures the time from exec to the runner\'s first line instead of run_iter '
                    "(iterations must be 1; not for the c or external runners)")
    instrument: bool = Field(
        default=False,
        description="collect per-iteration VM events (JIT, GC); pypy and java only; perturbs the measurement")

    @field_validator("mode")
    @classmethod
    def _startup_mode(cls, mode: str, info: ValidationInfo) -> str:
        if mode != "startup":
            return mode
        runner = info.data.get("runner")
        if runner is not None and runner not in startup_runners():
            raise ValueError(f"mode = \"startup\" works with the {', '.join(startup_runners())} runners, "
                             f"not {runner!r}; remove mode or change the runner")
        iterations = info.data.get("iterations")
        if iterations is not None and iterations != 1:
            raise ValueError(f"mode = \"startup\" measures one process start, so iterations must be 1, "
                             f"not {iterations}; set iterations = 1")
        return mode

    @field_validator("instrument")
    @classmethod
    def _instrumentable(cls, instrument: bool, info: ValidationInfo) -> bool:
        if not instrument:
            return instrument
        runner = info.data.get("runner")
        if runner is not None and runner not in instrumentable_runners():
            raise ValueError(f"instrument = true works with the {' and '.join(instrumentable_runners())} "
                             f"runners only, not {runner!r}; remove instrument")
        if info.data.get("mode") == "startup":
            raise ValueError('instrument = true cannot be combined with mode = "startup" (the startup '
                             "runner runs no iterations); use two VM entries")
        return instrument


class Variant(_Strict):
    """Krun's EntryPoint: benchmarks/<bench>/<subdir>/<target>."""
    target: str
    subdir: str | None = None


class Waits(_Strict):
    boot_settle: Duration = Field(default=120.0, description="wait after boot before measuring (Krun: 2 min)")
    sync: Duration = Field(default=30.0, description="pause after sync before each run (Krun: 30 s)")
    temperature_tolerance: float = Field(default=3.0, ge=0, description="degrees C around the baseline (Krun: 3)")
    temperature_deadline: Duration = Field(default=3600.0, description="give up waiting for temperatures (Krun: 1 h)")
    baseline_pause: Duration = Field(default=60.0, description="pause before the baseline temperatures (Krun: 60 s)")


class Mail(_Strict):
    to: list[str] = Field(default_factory=list)
    quota: int = Field(default=5, ge=0, description="mails per experiment that are subject to the quota (Krun: 5)")


class Rerun(_Strict):
    max_attempts: int = Field(default=3, ge=1, le=999, description="attempts per job, first run included")
    on_flags: list[str] = Field(
        default_factory=lambda: ["thermal_throttle", "amperf_throttle", "amperf_turbo"],
        description="post-check flags that make a run count as disturbed and be re-run")
    crashed: Literal["requeue", "mark"] = Field(
        default="requeue", description="a job claimed at a boot that never finished it: run again, or mark crashed")
    max_unexplained_boots: int = Field(
        default=10, ge=0, description="reboot-loop guard: boots that claimed no job before the experiment stops")


class Experiment(_Strict):
    name: Name
    executions: int = Field(gt=0, description="process executions per bench:vm:variant key")
    order: Literal["round-robin", "random"] = "round-robin"
    seed: int | None = Field(default=None, ge=0, description="seed for order = random; chosen and recorded when absent")
    benchmarks_dir: str = Field(default="benchmarks", description="relative to the experiment file's directory")
    heap_limit: Size = Field(default="2GiB", validate_default=True, description="RLIMIT_DATA of the runner")
    stack_limit: Size = Field(default="8MiB", validate_default=True, description="RLIMIT_STACK of the runner")
    execution_timeout: Duration | None = Field(default=None, description="per process execution; none when absent")
    stop_on_launch_failure: bool = Field(
        default=True, description="stop the experiment when a key's runner cannot even launch (missing file, bad "
        "interpreter, runner setup error) before any of its executions completed, instead of rebooting for "
        "every remaining execution of that key")
    skip: list[str] = Field(default_factory=list, description='"bench:vm:variant" patterns, * matches anything')
    pre_execution: list[Command] = Field(default_factory=list)
    post_execution: list[Command] = Field(default_factory=list)
    waits: Waits = Field(default_factory=Waits)
    mail: Mail = Field(default_factory=Mail)
    rerun: Rerun = Field(default_factory=Rerun)
    platform: PlatformPolicy = Field(default_factory=PlatformPolicy)
    benchmarks: dict[Name, int] = Field(min_length=1, description="benchmark name -> run_iter param")
    variants: dict[Name, Variant] = Field(min_length=1)
    vms: dict[Name, VM] = Field(min_length=1)

    @field_validator("skip")
    @classmethod
    def _skip_shape(cls, patterns: list[str]) -> list[str]:
        for p in patterns:
            if p.count(":") != 2:
                raise ValueError(f"skip pattern {p!r} must look like \"bench:vm:variant\" (each part may be *)")
        return patterns

    @model_validator(mode="after")
    def _variants_exist(self) -> "Experiment":
        for vm_name, vm in self.vms.items():
            for v in vm.variants:
                if v not in self.variants:
                    raise ValueError(f"vms.{vm_name}.variants names {v!r}, which is not under [variants]")
        return self


def experiment_sha256(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The model class that owns the field at ``loc[:-1]`` (for "did you mean")."""
    model: Any = Experiment
    i = 0
    parent = loc[:-1]
    while i < len(parent):
        part = parent[i]
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = model.model_fields.get(part)
        if field is None:
            return None
        ann = field.annotation
        origin = getattr(ann, "__origin__", None)
        if origin is dict:
            model = ann.__args__[1]
            i += 2  # skip the dict key
            continue
        model = ann
        i += 1
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _describe(err: dict) -> str:
    loc = tuple(err["loc"])
    # Union branches ("list[str]", "ShellCommand") add noise to the path.
    loc = tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or p == "ShellCommand")))
    path = ".".join(str(p) for p in loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        model = ShellCommand if "ShellCommand" in err["loc"] else _model_at(loc)
        hint = ""
        if model is not None:
            close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else \
                f"; known keys: {', '.join(model.model_fields)}"
        return f"{path}: unknown key{hint}"
    if err["type"] == "missing":
        return f"{path}: required field is missing; add it"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err["type"] == "string_pattern_mismatch":
        msg = "names may only use letters, digits and _ . + - (no spaces or ':')"
    return f"{path}: {msg}"


def parse_experiment(text: bytes, path: str) -> Experiment:
    """Parse and validate; raises ColdrunError with one line naming file and field."""
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise ColdrunError(f"{path}: not UTF-8 text; save the experiment file as UTF-8")
    except tomllib.TOMLDecodeError as e:
        raise ColdrunError(f"{path}: malformed TOML: {e}")
    try:
        return Experiment.model_validate(data)
    except ValidationError as e:
        errors = e.errors()
        first = errors[0]
        if isinstance(first.get("input"), dict) and any("[" in str(p) for p in first["loc"]):
            # A table where a command was expected: the {shell = ...} branch explains it best.
            shell_errs = [x for x in errors if "ShellCommand" in x["loc"]]
            if shell_errs:
                errors = shell_errs + [x for x in errors if x not in shell_errs]
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        raise ColdrunError(f"{path}: {_describe(errors[0])}{more}")


def load_experiment(path: str | Path) -> tuple[Experiment, bytes]:
    p = Path(path)
    try:
        text = p.read_bytes()
    except FileNotFoundError:
        raise ColdrunError(f"{path}: experiment file not found")
    except IsADirectoryError:
        raise ColdrunError(f"{path}: is a directory, expected a TOML experiment file")
    except PermissionError:
        raise ColdrunError(f"{path}: cannot read the experiment file (permission denied)")
    return parse_experiment(text, str(path)), text


def json_schema() -> dict:
    return Experiment.model_json_schema()
