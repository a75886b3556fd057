"""Preflight: launch each distinct runner once on a trivial benchmark before an experiment starts.

`coldrun check` and `coldrun start` (before anything on the machine changes)
run every VM of the experiment once on the trivial benchmark of its language
shipped in iteration_runners/probe/, exactly as an execution would run it
(same executable, args, environment, instrumentation, startup mode, limits),
with a short timeout, and validate the results document.  A missing
interpreter, an unbuilt JNI library or Node.js addon, a runner that dies or
hangs is then found now, not as an error record after the first reboot.

As the benchmark user: the fresh account a real run uses does not exist yet,
so the probe runs as ``nobody`` (runner_access.unprivileged_prefix), who, like
it, owns none of coldrun's files.

``external`` runners are not launched: coldrun cannot know what trivial input
an arbitrary program accepts, and running one of the experiment's own
benchmarks could take any time.  Their executable and benchmark files are
still checked by file_problems and runner_access.
"""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from contracts.keys import Key
from iteration_runners import languages
from iteration_runners.protocol import ProtocolError, parse_document
from supervisor.errors import ColdrunError
from supervisor.experiment.model import KRUN_EXTERNAL_RUNNER, Experiment, Variant
from supervisor.launch.process import run_process
from supervisor.launch.runner_access import unprivileged_prefix
from supervisor.launch.runner_command import EXTERNAL_RUNNER, runner_launch

PROBE = "probe"
PROBE_PARAM = 10
PROBE_ITERATIONS = 2        # more than one: the runner's loop and per-iteration lists are exercised


def _probe_experiment(exp: Experiment, vm_name: str, bench_file: Path) -> Experiment:
    """``exp`` reduced to one key that runs ``bench_file`` through ``vm_name`` a couple of times.

    The benchmarks dir is absolute, so the experiment dir is ignored for it
    (pathlib joins drop what precedes an absolute part).
    """
    vm = exp.vms[vm_name]
    iterations = 1 if vm.mode == "startup" else PROBE_ITERATIONS
    probe_vm = vm.model_copy(update={"iterations": iterations, "variants": [PROBE]})
    return exp.model_copy(update={
        "benchmarks_dir": str(bench_file.parent.parent),
        "benchmarks": {bench_file.parent.name: PROBE_PARAM},
        "variants": {PROBE: Variant(target=bench_file.name)},
        "vms": {vm_name: probe_vm},
    })


def reproduce_command(prefix: list[str], argv: list[str], env: dict[str, str]) -> str:
    """A shell command that runs what the probe ran: the same user prefix, the runner's whole environment
    (CLASSPATH, the JNI glue, ...; HOME was a throwaway directory) and its results on stdout (fd 3)."""
    shown = {k: ("/tmp" if k == "HOME" else v) for k, v in env.items()}
    return f"{shlex.join([*prefix, 'env', '-i', *(f'{k}={v}' for k, v in shown.items()), *argv])} 3>&1"


def _install_fix(runner: str) -> str:
    package = languages.DEBIAN_PACKAGES.get(runner)
    return f"install the interpreter (Debian: apt-get install {package})" if package else "install the runner"


def _probe_one(exp: Experiment, exp_dir: Path, experiment_file: str, vm_name: str, *, prefix: list[str],
               timeout: float) -> str | None:
    """What keeps ``vm_name`` from running (text and fix), or None."""
    runner = exp.vms[vm_name].runner
    try:
        bench_file = languages.probe_benchmark(runner)
    except languages.RunnerNotBuilt as e:
        return str(e)
    probe = _probe_experiment(exp, vm_name, bench_file)
    with tempfile.TemporaryDirectory(prefix="coldrun-probe-") as home:
        Path(home).chmod(0o755)          # the unprivileged user runs in it
        try:
            launch = runner_launch(probe, exp_dir, experiment_file, bench_file.parent.name, vm_name, PROBE,
                                   home=home)
        except ColdrunError as e:        # no interpreter, runner not built, bad args: already says the fix
            return str(e).removeprefix(f"{experiment_file}: vms.{vm_name}.").removeprefix("runner: ")
        argv = prefix + launch.argv
        res = run_process(argv, launch.env, cwd=home, heap_limit=exp.heap_limit, stack_limit=exp.stack_limit,
                          timeout=timeout)
    again = f"reproduce with: {reproduce_command(prefix, launch.argv, launch.env)}"
    if res.launch_error:
        return f"{launch.argv[0]} cannot be started ({res.launch_error}); {_install_fix(runner)}"
    if res.timed_out:
        return f"a trivial benchmark did not finish within {timeout:g}s; {again}"
    if res.signal is not None:
        return f"killed by signal {res.signal} on a trivial benchmark; {again}"
    if res.exit_code != 0:
        lines = res.stderr.text().strip().splitlines()
        said = f" ({lines[-1].strip()})" if lines else ""
        return f"exited with status {res.exit_code} on a trivial benchmark{said}; {again}"
    try:
        doc = parse_document(res.results)
    except ProtocolError as e:
        return f"wrote a bad results document: {e}; {again}"
    wanted = probe.vms[vm_name].iterations
    if len(doc["wallclock_times"]) != wanted:
        return f"reported {len(doc['wallclock_times'])} iterations, not {wanted}; {again}"
    return None


def probe_runners(exp: Experiment, exp_dir: Path, experiment_file: str, run_keys: list[str], *,
                  as_benchmark_user: bool, timeout: float = 30.0) -> list[str]:
    """One line per runner that cannot run (naming the runner and the fix); [] when all can."""
    return list(probe_failures(exp, exp_dir, experiment_file, run_keys, as_benchmark_user=as_benchmark_user,
                               timeout=timeout).values())


def probe_failures(exp: Experiment, exp_dir: Path, experiment_file: str, run_keys: list[str], *,
                   as_benchmark_user: bool, timeout: float = 30.0) -> dict[str, str]:
    """VM name -> the line saying why its runner cannot run, for the VMs of ``run_keys``."""
    prefix = unprivileged_prefix() if as_benchmark_user else []
    problems = {}
    for vm_name in dict.fromkeys(Key.parse(key).vm for key in run_keys):
        runner = exp.vms[vm_name].runner
        if runner in (EXTERNAL_RUNNER, KRUN_EXTERNAL_RUNNER):
            continue
        problem = _probe_one(exp, exp_dir, experiment_file, vm_name, prefix=prefix, timeout=timeout)
        if problem:
            problems[vm_name] = f"{experiment_file}: vms.{vm_name} (runner {runner}) cannot run: {problem}"
    return problems
