"""Iteration runners: how the supervisor launches one process execution.

A runner loads one benchmark, runs its ``run_iter(param)`` for N in-process
iterations measured with libkruntime, and writes one JSON document to file
descriptor 3 at the end.  The wire protocol is in PROTOCOL.md next to this
file; ``runner_command`` builds the argv and extra environment for it.
"""

from __future__ import annotations

from pathlib import Path

from iteration_runners.args import check_run_args

PROTOCOL_VERSION = 1
RESULTS_FD = 3

RUNNERS_DIR = Path(__file__).resolve().parent
PYTHON_RUNNER = RUNNERS_DIR / "python" / "iterations_runner.py"
C_RUNNER = RUNNERS_DIR / "c" / "iterations_runner"

_CORE_RUNNERS = ("python", "c")
_BENCHMARK_FILENAMES = {"python": "bench.py", "c": "bench.so"}


def _language_runners() -> tuple[str, ...]:
    from iteration_runners import languages

    return languages.KNOWN_LANGUAGE_RUNNERS


KNOWN_RUNNERS: tuple[str, ...] = _CORE_RUNNERS + _language_runners()


def _check_runner(runner: str) -> None:
    if runner not in KNOWN_RUNNERS:
        raise ValueError(f"unknown runner {runner!r}; known runners: {', '.join(KNOWN_RUNNERS)}")


def benchmark_filename(runner: str) -> str:
    """Default benchmark file name for a runner (e.g. "bench.py", "bench.so")."""
    _check_runner(runner)
    if runner in _BENCHMARK_FILENAMES:
        return _BENCHMARK_FILENAMES[runner]
    from iteration_runners import languages

    return languages.benchmark_filename(runner)


def c_runner_path() -> Path:
    """The built C runner binary; FileNotFoundError (with the fix) if not built."""
    if not C_RUNNER.is_file():
        raise FileNotFoundError(
            f"{C_RUNNER} does not exist; build it with `python setup.py build_ext --inplace` (or reinstall coldrun)"
        )
    return C_RUNNER


def _python_env() -> dict[str, str]:
    # Absolute paths, so a runner started by another interpreter (not the
    # venv's, e.g. /usr/bin/python3 as the benchmark user) finds libkruntime
    # without coldrun on its sys.path.  Either one is enough.
    import libkruntime

    env: dict[str, str] = {}
    try:
        env["COLDRUN_KRUNTIME_EXTENSION"] = str(libkruntime.extension_path())
    except FileNotFoundError:
        pass
    try:
        env["COLDRUN_LIBKRUNTIME"] = str(libkruntime.shared_library_path())
    except FileNotFoundError:
        if not env:
            raise
    return env


def runner_command(
    runner: str,
    executable: str,
    vm_args: list[str],
    benchmark_path: str,
    iterations: int,
    param: int,
    debug: bool,
    *,
    instrument: bool = False,
    startup: bool = False,
    log_dir: str | None = None,
) -> tuple[list[str], dict[str, str]]:
    """Argv (Krun order) and extra environment for one process execution.

    ``log_dir``: where an instrumented VM writes its own log (PyPy's PYPYLOG): the runner's own
    directory (its HOME, which coldrun made and only the runner's user may write), never a shared one.

    ``<executable> [vm_args] <runner file> <benchmark> <iterations> <param> <debug 0|1>``.
    For "c" there is no runner file: the executable is the runner binary (the
    built one when ``executable`` is empty) and ``vm_args`` must be empty.
    The results channel (fd 3) must be passed by the caller (``pass_fds``).
    Other languages, instrumentation and startup-time mode are built by
    ``iteration_runners.languages``.
    """
    _check_runner(runner)
    if runner not in _CORE_RUNNERS or startup:
        from iteration_runners import languages

        return languages.language_runner_command(
            runner, executable, vm_args, benchmark_path, iterations, param, debug,
            instrument=instrument, startup=startup, log_dir=log_dir)
    if instrument:
        raise ValueError(f"instrumentation is available for pypy and java only, not {runner!r}")
    check_run_args(iterations, param)
    tail = [str(benchmark_path), str(iterations), str(param), "1" if debug else "0"]
    env = {"COLDRUN_RESULTS_FD": str(RESULTS_FD)}

    if runner == "python":
        if not executable:
            raise ValueError("runner 'python' needs an interpreter executable (e.g. /usr/bin/python3)")
        env.update(_python_env())
        return [executable, *vm_args, str(PYTHON_RUNNER), *tail], env

    # runner == "c"
    if vm_args:
        raise ValueError(f"runner 'c' takes no vm_args, got {vm_args!r}")
    binary = executable or str(c_runner_path())
    return [binary, *tail], env
