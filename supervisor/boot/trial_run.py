"""One key run outside an experiment, for `check`: its benchmark loaded (load-only) or timed for a few
iterations (the rehearsal).

It is the real execution but for the machine: the key's runner, interpreter, arguments, environment,
param, heap and stack limits and the one launcher (launch/process.py), judged as an execution is
(``judge_ending``, ``judge_document``: an ExecutionOutcome with its cause, the reason the runner's own
error line).  No reboot, no platform change, no state dir: it runs in a throwaway home directory, and as
the benchmark user's stand-in (``nobody``, runner_access.unprivileged_prefix) where the experiment has a
benchmark user and check runs as root, since the fresh account does not exist before `start`.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from contracts.keys import Key
from iteration_runners.protocol import ProtocolError, parse_load_document
from supervisor.boot.execution import empty_run, judge_document, judge_ending
from supervisor.boot.execution_outcome import COMPLETED, ExecutionOutcome, errored
from supervisor.errors import ColdrunError
from supervisor.experiment.model import Experiment
from supervisor.launch.process import run_process
from supervisor.launch.runner_access import NOBODY
from supervisor.launch.runner_command import benchmark_path, runner_launch


@dataclass(frozen=True)
class Trial:
    key: str
    outcome: ExecutionOutcome
    wallclock_times: list[float]     # the rehearsal's iterations (completed only)
    seconds: float                   # the process's whole run, start-up included

    def per_iteration(self) -> float | None:
        return sum(self.wallclock_times) / len(self.wallclock_times) if self.wallclock_times else None


def run_trial(exp: Experiment, exp_dir: Path, exp_path: str, key: str, *, iterations: int | None,
              prefix: list[str], timeout: float) -> Trial:
    """Run ``key`` once: ``iterations`` None loads its benchmark only (with the VM's own iteration count on
    the command line, as an execution has), else times that many iterations."""
    bench, vm_name, variant = Key.parse(key)
    with tempfile.TemporaryDirectory(prefix="coldrun-trial-") as home:
        if prefix:   # the benchmark user's stand-in owns its home, as the fresh user does at a boot; no one else
            os.chown(home, NOBODY, NOBODY)   # may write there (an instrumented VM's log goes there too)
        try:
            launch = runner_launch(exp, exp_dir, exp_path, bench, vm_name, variant, home=home,
                                   iterations=iterations, load_only=iterations is None)
        except ColdrunError as e:
            return Trial(key, errored("launch_failure", f"cannot launch: {e}"), [], 0.0)
        res = run_process(prefix + launch.argv, launch.env, cwd=home, heap_limit=exp.heap_limit,
                          stack_limit=exp.stack_limit, timeout=timeout)
    outcome = judge_ending(res, timeout)
    run = empty_run()
    if outcome is None and iterations is None:
        try:
            parse_load_document(res.results)
            outcome = COMPLETED
        except ProtocolError as e:
            outcome = errored("protocol_refusal", str(e))
    elif outcome is None:
        assert iterations is not None      # iterations None (load only) took the branch above
        outcome = judge_document(res.results, exp.vms[vm_name], iterations, run, wall_seconds=res.duration)
    return Trial(key, outcome, run["wallclock_times"], res.duration)


def shown_file(exp: Experiment, exp_dir: Path, key: str) -> str:
    """The key's benchmark file as a problem line names it ("" for a krun-external variant)."""
    bench, vm_name, variant = Key.parse(key)
    path = benchmark_path(exp, exp_dir, bench, variant, exp.vms[vm_name].runner)
    return "" if path is None else f" ({path})"
