"""From experiment names to files and argv: benchmark paths, executables, runner command, environment.

Benchmarks follow Krun's layout: <experiment dir>/<benchmarks_dir>/<bench>/<subdir>/<target>.
The runner ``external`` runs ``<executable> [args] <benchmark file> <iterations> <param> <debug>``
and reads the results document from fd 3, no runner file; ``krun-external`` runs a Krun
ExternalSuiteVMDef script unmodified (it gets the benchmark's *name* and prints Krun's JSON) through
iteration_runners/krun_external.py; other runner names come from iteration_runners.
A Java variant's target is Krun's class name (``KrunEntry``), or that class's .class or .java file:
the class file must exist (``coldrun build-java DIR`` compiles it against the runner's classes).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import iteration_runners
from contracts.keys import Key
from iteration_runners.protocol import ENV_LOAD_ONLY
from supervisor.errors import ColdrunError
from supervisor.experiment.model import EXPERIMENT_DIR_VAR, KRUN_EXTERNAL_RUNNER, PLACEHOLDER_DIR, VM, Experiment

EXTERNAL_RUNNER = "external"
PYTHON_SELF = "@python"          # the interpreter running coldrun
FIXED_PATH = "/usr/local/bin:/usr/bin:/bin"
BUILD_JAVA = "coldrun build-java"
KRUN_EXTERNAL_ADAPTER = "krun_external.py"      # in iteration_runners/


def known_runners() -> tuple[str, ...]:
    return tuple(iteration_runners.KNOWN_RUNNERS) + (EXTERNAL_RUNNER, KRUN_EXTERNAL_RUNNER)


def java_class_file(target: str) -> str:
    """Krun's Java target is a class name; coldrun also takes the .class or .java file's name."""
    stem = target.removesuffix(".class").removesuffix(".java")
    return stem + ".class"


def benchmark_path(exp: Experiment, exp_dir: Path, bench: str, variant: str, runner: str | None = None) -> Path | None:
    """The benchmark file of a key; None for a krun-external variant, which has none."""
    v = exp.variants[variant]
    if v.target is None or runner == KRUN_EXTERNAL_RUNNER:
        return None
    target = java_class_file(v.target) if runner == "java" else v.target
    parts = [exp.benchmarks_dir, bench] + ([v.subdir] if v.subdir else []) + [target]
    return (exp_dir.joinpath(*parts)).resolve()


def _make_hint(missing: Path, exp_dir: Path) -> str:
    """Point at the nearest Makefile between the missing file and the experiment dir."""
    d = missing.parent
    top = exp_dir.resolve()
    while True:
        if (d / "Makefile").is_file():
            try:
                shown = os.path.relpath(d)
            except ValueError:
                shown = str(d)
            return f": run make -C {shown}"
        if d == top or d.parent == d:
            return ""
        d = d.parent


def _shown(p: Path) -> str:
    rel = os.path.relpath(p)
    return str(p) if rel.startswith("../..") else rel


def _java_hint(missing: Path) -> str:
    sources = sorted(missing.parent.glob("*.java")) if missing.parent.is_dir() else []
    if not sources:
        return (f"; no .java sources in {_shown(missing.parent)} either: put the benchmark's sources there "
                f"and compile them with `{BUILD_JAVA} {_shown(missing.parent)}`")
    return (f": compile the {len(sources)} .java file{'s' if len(sources) > 1 else ''} there against coldrun's "
            f"runner classes with `{BUILD_JAVA} {_shown(missing.parent)}`")


def check_benchmark_file(exp: Experiment, exp_dir: Path, bench: str, vm: str, variant: str,
                         exp_path: str) -> Path | None:
    runner = exp.vms[vm].runner
    p = benchmark_path(exp, exp_dir, bench, variant, runner)
    if p is not None and not p.is_file():
        what = "Java benchmark class" if runner == "java" else "benchmark file"
        hint = _java_hint(p) if runner == "java" else _make_hint(p, exp_dir)
        raise ColdrunError(
            f"{exp_path}: benchmarks.{bench} (vm {vm}, variant {variant}): {what} {_shown(p)} missing{hint}")
    return p


def resolve_executable(vm_name: str, vm: VM, exp_path: str, exp_dir: Path) -> str:
    """Absolute path of the VM's executable, or "" when the runner brings its own (c); a relative path
    with a directory part is the experiment file's directory's."""
    exe = vm.executable
    if exe is None:
        if vm.runner == "c":
            return ""
        raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: required for runner {vm.runner!r}; "
                           f"give an absolute path, a name on PATH, or \"{PYTHON_SELF}\"")
    if exe == PYTHON_SELF:
        return sys.executable
    if os.sep in exe:
        p = Path(exe) if Path(exe).is_absolute() else Path(os.path.abspath(exp_dir / exe))
        if not (p.is_file() and os.access(p, os.X_OK)):
            shown = exe if exe == str(p) else f"{exe} ({p})"
            raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: {shown} does not exist or is not executable")
        return str(p)
    found = shutil.which(exe, path=FIXED_PATH) or shutil.which(exe)
    if not found:
        raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: {exe!r} not found on PATH; install it or "
                           f"give its absolute path")
    return os.path.abspath(found)


def check_no_placeholder(vm_name: str, vm: VM, exp_path: str) -> None:
    """`import-krun` writes a placeholder where the importing machine could not answer Krun's look-up;
    it must be set before the experiment can run (an env value would otherwise pass unnoticed)."""
    fields = [("executable", vm.executable or "")] + [(f"args[{i}]", a) for i, a in enumerate(vm.args)] + \
        [(f"env.{k}", v) for k, v in vm.env.items()]
    for field, value in fields:
        if f"{PLACEHOLDER_DIR}/" in value:
            raise ColdrunError(f"{exp_path}: vms.{vm_name}.{field}: {value} is a placeholder `coldrun import-krun` "
                               f"left for what it could not look up on the importing machine; set it to the value "
                               f"on this machine (the file's header says what it stands for)")


def with_experiment_dir(vm: VM, exp_dir: Path) -> VM:
    """The VM with ``${EXPERIMENT_DIR}`` in its args and env values replaced by the experiment file's
    directory, so an experiment that moves with its files (as a Krun experiment directory did) keeps working."""
    def sub(text: str) -> str:
        return text.replace(EXPERIMENT_DIR_VAR, str(exp_dir.resolve()))
    return vm.model_copy(update={"args": [sub(a) for a in vm.args],
                                 "env": {k: sub(v) for k, v in vm.env.items()}})


def check_runner_name(vm_name: str, vm: VM, exp_path: str) -> None:
    names = known_runners()
    if vm.runner not in names:
        raise ColdrunError(f"{exp_path}: vms.{vm_name}.runner: unknown runner {vm.runner!r}; "
                           f"known: {', '.join(names)}")


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


def merge_env(base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """Krun's EnvChangeAppend: a name already set gets the new value appended with ':'."""
    out = dict(base)
    for k, v in extra.items():
        out[k] = f"{out[k]}{os.pathsep}{v}" if k in out and out[k] else v
    return out


def runner_launch(exp: Experiment, exp_dir: Path, exp_path: str, bench: str, vm_name: str,
                  variant: str, home: str, debug: bool = False, *, iterations: int | None = None,
                  param: int | None = None, load_only: bool = False) -> Launch:
    """argv and the fixed, minimal environment for one process execution.

    ``home``: the runner's HOME as it will run (the fresh benchmark user's own, where there is one); an
    instrumented VM's log goes there too, never into a shared directory.

    ``iterations`` and ``param``: the job's (a [stop] experiment may choose them); default the experiment's.
    ``load_only``: the runner only loads the benchmark (PROTOCOL.md, "Load-only mode"): `check`'s load."""
    vm = exp.vms[vm_name]
    check_runner_name(vm_name, vm, exp_path)
    bench_path = check_benchmark_file(exp, exp_dir, bench, vm_name, variant, exp_path)
    bench_file = str(bench_path) if bench_path else ""
    executable = resolve_executable(vm_name, vm, exp_path, exp_dir)
    vm = with_experiment_dir(vm, exp_dir)
    param = exp.benchmarks[bench] if param is None else param
    iterations = vm.iterations if iterations is None else iterations
    tail = [str(iterations), str(param), "1" if debug else "0"]
    if vm.runner == EXTERNAL_RUNNER:
        argv = [executable, *vm.args, bench_file, *tail]
        runner_env = {"COLDRUN_RESULTS_FD": "3"}
    elif vm.runner == KRUN_EXTERNAL_RUNNER:     # Krun passed the benchmark's name, not a file
        adapter = iteration_runners.RUNNERS_DIR / KRUN_EXTERNAL_ADAPTER
        argv = [sys.executable, "-I", str(adapter), executable, *vm.args, bench, *tail]
        runner_env = {"COLDRUN_RESULTS_FD": "3"}
    else:
        try:
            argv, runner_env = iteration_runners.runner_command(
                vm.runner, executable, list(vm.args), bench_file, iterations, param, debug,
                instrument=vm.instrument, startup=vm.mode == "startup", log_dir=home)
        except (ValueError, FileNotFoundError) as e:   # bad arguments, or the runner is not built
            raise ColdrunError(f"{exp_path}: vms.{vm_name}.runner: {e}") from None
        argv = list(argv)
    env = {"PATH": FIXED_PATH, "HOME": home, "LANG": "C"}
    env = merge_env(env, dict(vm.env))
    env = merge_env(env, dict(runner_env))
    if load_only:
        env[ENV_LOAD_ONLY] = "1"
    return Launch(argv, env)


def env_size(env: dict[str, str]) -> int:
    """Bytes the environment occupies in the new process ("K=V\\0" each)."""
    return sum(len(k.encode()) + len(v.encode()) + 2 for k, v in env.items())


def file_problems(exp: Experiment, exp_dir: Path, exp_path: str, keys: list[str]) -> tuple[list[str], list[str]]:
    """Everything `check` and `start` require to exist (runners, executables, benchmark files), one line per
    problem: each VM's first, and every key's missing benchmark file, so one check lists them all; and the
    keys that have all they need."""
    problems: list[str] = []
    bad_vms: set[str] = set()
    for vm_name, vm in exp.vms.items():
        try:
            check_runner_name(vm_name, vm, exp_path)
            check_no_placeholder(vm_name, vm, exp_path)
            resolve_executable(vm_name, vm, exp_path, exp_dir)
        except ColdrunError as e:
            problems.append(str(e))
            bad_vms.add(vm_name)
    tried_vms: set[str] = set()
    good: list[str] = []
    for key in keys:
        bench, vm_name, variant = Key.parse(key)
        try:
            check_benchmark_file(exp, exp_dir, bench, vm_name, variant, exp_path)
        except ColdrunError as e:
            problems.append(str(e))
            continue
        if vm_name not in tried_vms and vm_name not in bad_vms:
            tried_vms.add(vm_name)     # builds the runner's argv once: catches unbuilt runners early
            try:
                runner_launch(exp, exp_dir, exp_path, bench, vm_name, variant, home="/nonexistent")
            except ColdrunError as e:
                problems.append(str(e))
                bad_vms.add(vm_name)
        if vm_name not in bad_vms:
            good.append(key)
    return problems, good
