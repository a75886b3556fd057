"""From experiment names to files and argv: benchmark paths, executables, runner command, environment.

Benchmarks follow Krun's layout: <experiment dir>/<benchmarks_dir>/<bench>/<subdir>/<target>.
The runner ``external`` is Krun's ExternalSuiteVMDef: ``<executable> [args] <benchmark>
<iterations> <param> <debug>``, no runner file; other runner names come from iteration_runners.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from supervisor.errors import ColdrunError
from supervisor.experiment.model import VM, Experiment

EXTERNAL_RUNNER = "external"
PYTHON_SELF = "@python"          # the interpreter running coldrun
FIXED_PATH = "/usr/local/bin:/usr/bin:/bin"
DEFAULT_TARGETS = {EXTERNAL_RUNNER: None}


def known_runners() -> tuple[str, ...]:
    import iteration_runners
    return tuple(iteration_runners.KNOWN_RUNNERS) + (EXTERNAL_RUNNER,)


def benchmark_path(exp: Experiment, exp_dir: Path, bench: str, variant: str) -> Path:
    v = exp.variants[variant]
    parts = [exp.benchmarks_dir, bench] + ([v.subdir] if v.subdir else []) + [v.target]
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


def check_benchmark_file(exp: Experiment, exp_dir: Path, bench: str, vm: str, variant: str,
                         exp_path: str) -> Path:
    p = benchmark_path(exp, exp_dir, bench, variant)
    if not p.is_file():
        shown = os.path.relpath(p) if not str(os.path.relpath(p)).startswith("../..") else str(p)
        raise ColdrunError(
            f"{exp_path}: benchmarks.{bench} (vm {vm}, variant {variant}): benchmark file {shown} missing"
            f"{_make_hint(p, exp_dir)}")
    return p


def resolve_executable(vm_name: str, vm: VM, exp_path: str) -> str:
    """Absolute path of the VM's executable, or "" when the runner brings its own (c)."""
    exe = vm.executable
    if exe is None:
        if vm.runner == "c":
            return ""
        raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: required for runner {vm.runner!r}; "
                           f"give an absolute path, a name on PATH, or \"{PYTHON_SELF}\"")
    if exe == PYTHON_SELF:
        return sys.executable
    if os.sep in exe:
        p = Path(exe)
        if not p.is_absolute():
            raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: {exe!r} is relative; give an absolute "
                               f"path or a bare name found on PATH")
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: {exe} does not exist or is not executable")
        return str(p)
    found = shutil.which(exe, path=FIXED_PATH) or shutil.which(exe)
    if not found:
        raise ColdrunError(f"{exp_path}: vms.{vm_name}.executable: {exe!r} not found on PATH; install it or "
                           f"give its absolute path")
    return os.path.abspath(found)


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
                  param: int | None = None) -> Launch:
    """argv and the fixed, minimal environment for one process execution.

    ``iterations`` and ``param``: the job's (a [stop] experiment may choose them); default the experiment's."""
    vm = exp.vms[vm_name]
    check_runner_name(vm_name, vm, exp_path)
    bench_file = str(check_benchmark_file(exp, exp_dir, bench, vm_name, variant, exp_path))
    executable = resolve_executable(vm_name, vm, exp_path)
    param = exp.benchmarks[bench] if param is None else param
    iterations = vm.iterations if iterations is None else iterations
    if vm.runner == EXTERNAL_RUNNER:
        argv = [executable, *vm.args, bench_file, str(iterations), str(param), "1" if debug else "0"]
        runner_env = {"COLDRUN_RESULTS_FD": "3"}
    else:
        import iteration_runners
        try:
            argv, runner_env = iteration_runners.runner_command(
                vm.runner, executable, list(vm.args), bench_file, iterations, param, debug,
                instrument=vm.instrument, startup=vm.mode == "startup")
        except (ValueError, FileNotFoundError) as e:   # bad arguments, or the runner is not built
            raise ColdrunError(f"{exp_path}: vms.{vm_name}.runner: {e}")
        argv = list(argv)
    env = {"PATH": FIXED_PATH, "HOME": home, "LANG": "C"}
    env = merge_env(env, dict(vm.env))
    env = merge_env(env, dict(runner_env))
    return Launch(argv, env)


def env_size(env: dict[str, str]) -> int:
    """Bytes the environment occupies in the new process ("K=V\\0" each)."""
    return sum(len(k.encode()) + len(v.encode()) + 2 for k, v in env.items())


def validate_files(exp: Experiment, exp_dir: Path, exp_path: str, keys: list[str]) -> None:
    """Everything `check` and `start` require to exist: runners, executables, benchmark files."""
    for vm_name, vm in exp.vms.items():
        check_runner_name(vm_name, vm, exp_path)
        resolve_executable(vm_name, vm, exp_path)
    tried_vms: set[str] = set()
    for key in keys:
        bench, vm_name, variant = key.split(":")
        check_benchmark_file(exp, exp_dir, bench, vm_name, variant, exp_path)
        if vm_name not in tried_vms:   # builds the runner's argv once: catches unbuilt runners early
            tried_vms.add(vm_name)
            runner_launch(exp, exp_dir, exp_path, bench, vm_name, variant, home="/nonexistent")
