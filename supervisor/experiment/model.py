"""The experiment file (TOML): pydantic models and the loader.

Every concept of a Krun configuration has a TOML form here: language
implementations (``[vms.NAME]``), benchmarks (name -> run_iter param),
variants (file target and subdirectory), process executions per key, skip
patterns, heap/stack limits, timeout, pre/post commands, waits, mail, the
platform policy and the re-run policy.  Every problem in a file gets its own
line naming the file, the dotted field path and a fix; all of them are shown.
Bounds (why each number, see the constants below) make `check` refuse what
would fail at run time.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import re
import tomllib
import types
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from pydantic_core import ErrorDetails
from pydantic import (AfterValidator, BaseModel, BeforeValidator, Field, ValidationError,
                      ValidationInfo, WithJsonSchema, field_validator)

from supervisor.experiment.strict import StrictTable
from contracts.keys import Key
from iteration_runners.languages import LANGUAGE_RUNNERS, STARTUP_NATIVE_RUNNER, STARTUP_ONLY_RUNNERS
from supervisor.errors import ColdrunError
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.experiment.quantities import format_size, parse_duration, parse_size
from supervisor.kinds.duet import table as duet_table
from supervisor.kinds.screening import table as screening
from supervisor.kinds.stop import table as run_length
from supervisor.kinds.duet.table import Duet
from supervisor.kinds.stop.table import Stop
from supervisor.kinds.screening.table import Screening
from supervisor.experiment.union_forms import is_tag, one_of

NAME_PATTERN = r"^[A-Za-z0-9_.+-]+$"
# Krun's ExternalSuiteVMDef protocol: the script gets the benchmark's name, and prints Krun's JSON.
KRUN_EXTERNAL_RUNNER = "krun-external"

# Each job is one reboot (minutes), and every boot parses the whole schedule
# (about 1 s for 100,000 jobs): 100,000 jobs is months of machine time already.
MAX_JOBS = 100_000
# Krun-style experiments use up to ~2000 in-process iterations.  A runner keeps
# 8 bytes per iteration in each of 1 + 3 x cores preallocated buffers and sends
# them all in one results document, which the supervisor reads up to 64 MiB: at
# 100,000 iterations that fits a 16-core machine with its cycle counters.
MAX_ITERATIONS = 100_000
# run_iter(param) takes a C int (and a Java int).
PARAM_MIN, PARAM_MAX = -2 ** 31, 2 ** 31 - 1
# CPython needs 8 MiB of data segment to start, a JVM about 512 MiB: below
# 64 MiB no runner starts with a benchmark and its buffers loaded.
MIN_HEAP_LIMIT = 64 << 20
# CPython does not start with less than 128 KiB of stack; Linux's default is 8 MiB.
MIN_STACK_LIMIT = 1 << 20
# Starting an interpreter alone can take most of a second; the timeout guards
# against hangs, it does not measure anything.
MIN_EXECUTION_TIMEOUT = 1.0

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
# A name is one file name (benchmarks/<bench>/, a plot's file): at most NAME_MAX bytes, and never a
# directory's own entries, which would resolve outside their directory.
NAME_MAX = 255


def _plain_name(value: str) -> str:
    if value in (".", ".."):
        raise ValueError(f"{value!r} is not a name (it would resolve outside its directory); rename it")
    if len(value) > NAME_MAX:
        raise ValueError(f"name of {len(value)} characters is too long: at most {NAME_MAX} (a file name's "
                         f"limit, NAME_MAX); shorten it")
    return value


Name = Annotated[str, Field(pattern=NAME_PATTERN), AfterValidator(_plain_name)]


def _at_most(limit: int, why: str) -> AfterValidator:
    def check(value: int) -> int:
        if value > limit:
            raise ValueError(f"more than {limit:,}; {why}")
        return value
    return AfterValidator(check)


def _at_least_size(minimum: int, why: str) -> AfterValidator:
    def check(value: int) -> int:
        if value < minimum:
            raise ValueError(f"{format_size(value)} is too small: at least {format_size(minimum)} ({why})")
        return value
    return AfterValidator(check)


def _timeout_floor(value: float | None) -> float | None:
    if value is not None and value < MIN_EXECUTION_TIMEOUT:
        raise ValueError(f"{value:g}s is too short: at least {MIN_EXECUTION_TIMEOUT:g}s (starting an interpreter "
                         f"alone can take that long); remove execution_timeout for no timeout")
    return value


# strict: TOML's true and 1e9 are not counts (lax mode took true as 1).
Count = Annotated[int, Field(strict=True, gt=0)]



class ShellCommand(StrictTable):
    """A command run through /bin/sh -c: only when the user writes {shell = "..."}."""
    shell: str


COMMAND_FORMS = 'a command is a list of strings like ["sync"] or a table like {shell = "echo hi"}'
# mypy cannot follow one_of's union built at run time: it checks the plain union (the same branches) instead.
if TYPE_CHECKING:
    Command = list[str] | ShellCommand
else:
    Command = one_of(Annotated[list[str], Field(min_length=1)], ShellCommand, forms=COMMAND_FORMS)


def command_argv(cmd: Command) -> list[str]:
    if isinstance(cmd, ShellCommand):
        return ["/bin/sh", "-c", cmd.shell]
    return list(cmd)


def instrumentable_runners() -> tuple[str, ...]:
    """Runners whose language implementation reports JIT/GC events (iteration_runners.languages)."""
    return tuple(name for name, r in LANGUAGE_RUNNERS.items() if r.instrumentable)


# In a VM's args and env values: the experiment file's directory, so a moved experiment keeps its paths.
EXPERIMENT_DIR_VAR = "${EXPERIMENT_DIR}"
# What `import-krun` writes where the importing machine could not answer one of Krun's look-ups; no
# machine has it, and `check` refuses a VM that still names it.
PLACEHOLDER_DIR = "/SET-ME"


def startup_runners() -> tuple[str, ...]:
    """Runners that have a startup-time dummy runner."""
    return (STARTUP_NATIVE_RUNNER, *STARTUP_ONLY_RUNNERS, *LANGUAGE_RUNNERS)


class VM(StrictTable):
    """A language implementation (Krun's VMS entry)."""
    runner: str = Field(description=f"iteration runner: python, c, ..., external or {KRUN_EXTERNAL_RUNNER}")
    executable: str | None = Field(
        default=None,
        description='absolute path, a path relative to the experiment file\'s directory (with a /), a name '
                    'found on PATH, or "@python" for the interpreter running coldrun; not needed for the c runner')
    args: list[str] = Field(default_factory=list, description="arguments before the runner file; "
                            f"{EXPERIMENT_DIR_VAR} is the experiment file's directory")
    env: dict[str, str] = Field(default_factory=dict, description="extra environment (appended with ':' when "
                                f"the name is already set); {EXPERIMENT_DIR_VAR} is the experiment file's directory")
    iterations: Annotated[Count, _at_most(MAX_ITERATIONS, "each iteration takes 8 bytes in every per-core "
                                          "buffer of the runner and of its results document")] = Field(
        description=f"in-process iterations per process execution (1 to {MAX_ITERATIONS:,})",
        json_schema_extra={"maximum": MAX_ITERATIONS})
    variants: list[Name] = Field(min_length=1)
    mode: Literal["iterations", "startup"] = Field(
        default="iterations",
        description='"startup" measures the time from exec to the runner\'s first line instead of run_iter '
                    "(iterations must be 1; not for the external runners)")
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


class Variant(StrictTable):
    """Krun's EntryPoint: benchmarks/<bench>/<subdir>/<target>."""
    target: str | None = Field(
        default=None,
        description=f"the benchmark file; only VMs with runner {KRUN_EXTERNAL_RUNNER!r} (which get the "
                    f"benchmark's name, as Krun's external suites did) may use a variant without one")
    subdir: str | None = None


class Waits(StrictTable):
    boot_settle: Duration = Field(default=120.0, description="wait after boot before measuring (Krun: 2 min)")
    sync: Duration = Field(default=30.0, description="pause after sync before each run (Krun: 30 s)")
    temperature_tolerance: float = Field(default=3.0, ge=0, description="degrees C around the baseline (Krun: 3)")
    temperature_deadline: Duration = Field(default=3600.0, description="give up waiting for temperatures (Krun: 1 h)")
    baseline_pause: Duration = Field(default=60.0, description="pause before the baseline temperatures (Krun: 60 s)")

    @property
    def per_execution(self) -> float:
        """Seconds each process execution waits besides running (boot settle + sync): check's and status's ETA."""
        return self.boot_settle + self.sync


# An address sendmail takes as a recipient, never as an option: local part (not starting with "-"), then
# an optional @domain; no spaces, commas or angle brackets.
MAIL_ADDRESS = re.compile(r"[A-Za-z0-9._%+=~!#$&'*/?^`{|}][A-Za-z0-9._%+=~!#$&'*/?^`{|}-]*(@[A-Za-z0-9.-]+)?")


class Mail(StrictTable):
    to: list[str] = Field(default_factory=list, description="recipients: user@host, or a local user name")
    quota: int = Field(default=5, ge=0, le=9999, strict=True,
                       description="mails per experiment that are subject to the quota (Krun: 5)")

    @field_validator("to")
    @classmethod
    def _addresses(cls, v: list[str]) -> list[str]:
        for address in v:
            if not MAIL_ADDRESS.fullmatch(address):
                raise ValueError(f"{address!r} is not a mail address (user@host or a local user name; "
                                 f"nothing starting with \"-\", which sendmail would read as an option)")
        return v


class Rerun(StrictTable):
    max_attempts: int = Field(default=3, ge=1, le=999, strict=True, description="attempts per job, first run included")
    on_flags: list[str] = Field(
        default_factory=lambda: ["thermal_throttle", "amperf_throttle", "amperf_turbo", "clocksource", "pinning"],
        description="post-check flags that make a run count as disturbed and be re-run")
    crashed: Literal["requeue", "mark"] = Field(
        default="requeue", description="a job claimed at a boot that never finished it: run again, or mark crashed")
    max_unexplained_boots: int = Field(
        default=10, ge=0, strict=True,
        description="reboot-loop guard: boots that claimed no job before the experiment stops")


class Experiment(StrictTable):
    name: Name
    # Required unless [stop] decides the run length (checked by parse_experiment on the file's keys).
    executions: Annotated[Count, _at_most(MAX_JOBS, "each one is a reboot and the schedule holds at most "
                                          f"{MAX_JOBS:,} jobs")] | None = Field(
        default=None,
        description=f"process executions per bench:vm:variant key; at most {MAX_JOBS:,} jobs in all; required "
                    f"unless [stop] sets a CI target instead",
        json_schema_extra={"maximum": MAX_JOBS})
    stop: Stop | None = Field(
        default=None, description="run each key until its mean's confidence interval is narrow enough (Pilot's "
                                  "stopping rule), instead of a fixed number of executions")
    duet: Duet | None = Field(
        default=None, description="run pairs of keys side by side, one pair execution per boot, synchronised "
                                  "before every iteration (duet benchmarking)")
    order: Literal["round-robin", "random"] = "round-robin"
    seed: int | None = Field(default=None, ge=0, le=2 ** 63 - 1, strict=True,
                             description="seed for order = random; chosen and recorded when absent")
    benchmarks_dir: str = Field(default="benchmarks", description="relative to the experiment file's directory")
    heap_limit: Annotated[Size, _at_least_size(MIN_HEAP_LIMIT, "a JVM needs 512MiB, CPython 8MiB plus the "
                                               "benchmark and its buffers")] = Field(
        default="2GiB", validate_default=True, description="RLIMIT_DATA of the runner (at least 64MiB)")
    stack_limit: Annotated[Size, _at_least_size(MIN_STACK_LIMIT, "CPython does not start below 128KiB; "
                                                "Linux's default is 8MiB")] = Field(
        default="8MiB", validate_default=True, description="RLIMIT_STACK of the runner (at least 1MiB)")
    execution_timeout: Annotated[Duration | None, AfterValidator(_timeout_floor)] = Field(
        default=None, description="per process execution, at least 1 s; none when absent")
    stop_on_launch_failure: bool = Field(
        default=True, description="stop the experiment when a key's runner cannot even launch (missing file, bad "
        "interpreter, runner setup error) before any of its executions completed, instead of rebooting for "
        "every remaining execution of that key")
    on_changed_files: Literal["stop", "flag"] = Field(
        default="stop", description="a key's benchmark, runner or interpreter files differ from their digests at "
        "start: stop the experiment before the execution, or run it and flag its record (files_changed, "
        "platform_before.changed_files)")
    skip: list[str] = Field(default_factory=list, description='"bench:vm:variant" patterns, * matches anything')
    pre_execution: list[Command] = Field(default_factory=list)
    post_execution: list[Command] = Field(default_factory=list)
    waits: Waits = Field(default_factory=Waits)
    mail: Mail = Field(default_factory=Mail)
    rerun: Rerun = Field(default_factory=Rerun)
    platform: PlatformPolicy = Field(default_factory=PlatformPolicy)
    screening: Screening | None = Field(
        default=None, description="a screening experiment (NIST TN 1855): factors, levels and design; "
                                  "executions is then the number of replicates")
    benchmarks: dict[Name, Annotated[int, Field(strict=True, ge=PARAM_MIN, le=PARAM_MAX)]] = Field(
        min_length=1, description="benchmark name -> run_iter param (a 32-bit int)")
    variants: dict[Name, Variant] = Field(min_length=1)
    vms: dict[Name, VM] = Field(min_length=1)

    @field_validator("skip")
    @classmethod
    def _skip_shape(cls, patterns: list[str]) -> list[str]:
        for p in patterns:
            if p.count(":") != 2:
                raise ValueError(f"skip pattern {p!r} must look like \"bench:vm:variant\" (each part may be *)")
        return patterns


def should_skip(key: str, patterns: list[str]) -> bool:
    """Krun's SKIP: each of bench, vm, variant matches literally or by * wildcard."""
    for pattern in patterns:
        if all(fnmatch.fnmatchcase(k, p) for k, p in zip(Key.parse(key), Key.parse(pattern))):
            return True
    return False


def keys_in_order(exp: Experiment) -> list[str]:
    return [str(Key(bench, vm_name, variant))
            for vm_name, vm in exp.vms.items()
            for bench in exp.benchmarks
            for variant in vm.variants]


def _whole_experiment_problems(exp: Experiment) -> list[tuple[str, str]]:
    """Problems between fields, as (dotted field, message): what would otherwise fail at start or run time."""
    problems = []
    for vm_name, vm in exp.vms.items():
        for i, v in enumerate(vm.variants):
            if v not in exp.variants:
                problems.append((dotted(("vms", vm_name, "variants", i)),
                                 f"names {v!r}, which is not under [variants]; add [variants.{v}] or fix the name"))
            elif exp.variants[v].target is None and vm.runner != KRUN_EXTERNAL_RUNNER:
                problems.append((dotted(("variants", v, "target")),
                                 f"required: vms.{vm_name} (runner {vm.runner!r}) runs a benchmark file; only "
                                 f"runner {KRUN_EXTERNAL_RUNNER!r} takes a variant without one"))
    if exp.stop is not None:
        problems += run_length.problems(exp.stop, exp.vms)
    if exp.duet is not None and exp.screening is not None:
        problems.append(("screening", "[screening] and [duet] cannot be combined in one experiment: run the "
                                      "screening design over single executions, or the pairs without a design"))
    if exp.duet is not None and not problems:
        problems += duet_table.problems(exp.duet, exp.vms, keys_in_order(exp), stop=exp.stop is not None,
                                        skip=bool(exp.skip))
    if exp.screening is not None:    # its job count depends on the design: screening_plan checks it
        return problems + screening.problems(exp)
    if problems or (exp.executions is None and exp.stop is None):   # the latter: parse_experiment says so
        return problems
    n_keys = sum(len(exp.benchmarks) * len(vm.variants) for vm in exp.vms.values())
    most = _most_executions(exp)
    if n_keys * most > MAX_JOBS:
        field = "executions" if exp.stop is None else "stop.max_executions"
        return [(field, f"{most:,} executions x {n_keys:,} bench:vm:variant keys = "
                        f"{n_keys * most:,} jobs, more than the {MAX_JOBS:,} a schedule holds "
                        f"(each job is a reboot); lower {field} or the number of keys")]
    if exp.skip and all(should_skip(key, exp.skip) for key in keys_in_order(exp)):
        problems.append(("skip", "every bench:vm:variant key is skipped, so there is nothing to run; "
                                 "remove a pattern"))
    return problems


def _most_executions(exp: Experiment) -> int:
    """Process executions a key may get: the fixed count, or [stop]'s maximum (for the schedule's bound)."""
    if exp.stop is not None:
        return exp.stop.max_executions
    assert exp.executions is not None    # the caller returned early when both are missing
    return exp.executions


def _run_length_problems(data: dict) -> list[str]:
    """executions or [stop], exactly one (on the file's keys, so it shows beside every other problem)."""
    if not isinstance(data, dict):
        return []
    has_count, has_stop = "executions" in data, "stop" in data
    if not has_count and not has_stop:
        return ["executions: required field is missing; add it (or a [stop] table with a CI target)"]
    if has_count and has_stop:
        return ["executions: [stop] decides how many executions each key gets; remove executions (or [stop])"]
    return []


def experiment_sha256(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def _model_in(ann: Any) -> type[BaseModel] | None:
    """The model class ``ann`` names: itself, or the table among a union's forms (``stop: Stop | None``)."""
    while get_origin(ann) is Annotated:
        ann = get_args(ann)[0]
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    if get_origin(ann) in (Union, types.UnionType):
        return next((m for m in map(_model_in, get_args(ann)) if m is not None), None)
    return None


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The model class that owns the field at ``loc[:-1]`` (for "did you mean")."""
    ann: Any = Experiment
    for part in loc[:-1]:
        model = _model_in(ann)
        if model is not None:
            if part not in model.model_fields:
                return None
            ann = model.model_fields[part].annotation
        elif get_origin(ann) in (list, dict):     # an element or a value: the last type argument
            ann = get_args(ann)[-1]
        else:
            return None
    return _model_in(ann)


def dotted(loc: tuple) -> str:
    """The field path as written in TOML: vms.pypy.iterations; a key with other characters is quoted
    (a newline in a key must not split a problem's line)."""
    return ".".join(str(p) if isinstance(p, int) or re.fullmatch(r"[A-Za-z0-9_+-]+", p) else _quoted(p)
                    for p in loc)


def _quoted(key: str) -> str:
    return '"' + key.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _message(err: ErrorDetails) -> str:
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err["type"] == "string_pattern_mismatch":
        msg = "names may only use letters, digits and _ . + - (no spaces or ':')"
    if err["type"] == "greater_than":
        msg = f"must be more than {err['ctx']['gt']}"
    if err["type"] == "int_type":
        msg = ("must be an integer written without quotes or a decimal point (true, 5.0 and 1e9 are not "
               "integers here)")
    return msg


def _problem_text(err: ErrorDetails) -> str:
    """One problem's line.  The location drops what pydantic adds: a union form's tag, "[key]" for a key."""
    loc = tuple(part for part in err["loc"] if not is_tag(part) and part != "[key]")
    path = dotted(loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        model = _model_at(loc)
        hint = ""
        if model is not None and loc:
            close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else \
                f"; known keys: {', '.join(model.model_fields)}"
        return f"{path}: unknown key{hint}"
    if err["type"] == "missing":
        return f"{path}: required field is missing; add it"
    return f"{path}: {_message(err)}"


def _string_problems(data: Any) -> list[tuple[str, str]]:
    """NUL bytes in any key or string: no path, argument or environment value can hold one."""
    problems = []
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:      # iterative: a deep dotted key must not exhaust the recursion limit
        loc, value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for k, v in items:
            here = loc + (k,)
            if isinstance(k, str) and "\0" in k:
                problems.append((dotted(here), "the key contains a NUL character (\\u0000); remove it"))
            if isinstance(v, str) and "\0" in v:
                problems.append((dotted(here), "contains a NUL character (\\u0000); remove it"))
            elif isinstance(v, (dict, list)):
                stack.append((here, v))
    return sorted(problems)


def _problem_lines(path: str, problems: list[str]) -> ColdrunError:
    """One line per problem, each naming the file (the CLI prefixes each line with "coldrun: ")."""
    return ColdrunError("\n".join(f"{path}: {p}" for p in dict.fromkeys(problems)))


def parse_experiment(text: bytes, path: str) -> Experiment:
    """Parse and validate; raises ColdrunError with one line per problem, each naming file and field."""
    try:
        source = text.decode("utf-8")
    except UnicodeDecodeError:
        raise ColdrunError(f"{path}: not UTF-8 text; save the experiment file as UTF-8") from None
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as e:
        raise ColdrunError(f"{path}: malformed TOML: {e}") from None
    except RecursionError:   # tomllib recurses per array or inline table and gives up near 300 levels
        raise ColdrunError(f"{path}: arrays or tables nested too deeply; an experiment needs at most 3 levels: "
                           f"check for unclosed or repeated [ or {{") from None
    except ValueError as e:  # tomllib lets int() refuse numbers of more than 4300 digits
        reason = str(e).split(";")[0]     # not Python's advice to raise its digit limit
        raise ColdrunError(f"{path}: malformed TOML: {reason}") from None
    problems = [f"{field}: {msg}" for field, msg in _string_problems(data)] + _run_length_problems(data)
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as e:
        problems += [_problem_text(err) for err in e.errors()]
    else:
        problems += [f"{field}: {msg}" for field, msg in _whole_experiment_problems(exp)]
    if problems:
        raise _problem_lines(path, problems)
    return exp


def read_input_file(path: str | Path, kind: str, expected: str) -> bytes:
    """The bytes of a file the user named, or one line saying why they cannot be read."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise ColdrunError(f"{path}: {kind} not found") from None
    except IsADirectoryError:
        raise ColdrunError(f"{path}: is a directory, expected {expected}") from None
    except PermissionError:
        raise ColdrunError(f"{path}: cannot read the {kind} (permission denied)") from None


def load_experiment(path: str | Path) -> tuple[Experiment, bytes]:
    text = read_input_file(path, "experiment file", "a TOML experiment file")
    return parse_experiment(text, str(path)), text


def json_schema() -> dict:
    return Experiment.model_json_schema()
