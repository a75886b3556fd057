"""`coldrun check` loads every benchmark: each key's runner in load-only mode (PROTOCOL.md), in parallel.

What an execution's first step does (import or compile, dlopen with every symbol resolved, finding
run_iter or the Java class, PHP include, Lua dofile, Ruby require, JS evaluation) is done for every key
before the first reboot, so a benchmark that cannot load is one line of `check`, not an errored
execution at every boot of the night.  Nothing is timed.  Loads run ``workers`` at a time (default: one
per CPU), each bounded by ``timeout`` (a hang at load is a problem too).

Not loaded, said in a note: `external` and `krun-external` VMs (coldrun cannot know that an arbitrary
program has a load step) and startup-time VMs (their dummy runner loads no benchmark).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from contracts.keys import Key
from supervisor.boot.trial_run import run_trial, shown_file
from supervisor.experiment.model import KRUN_EXTERNAL_RUNNER, Experiment
from supervisor.launch.runner_command import EXTERNAL_RUNNER

from supervisor.boot.check_defaults import LOAD_TIMEOUT


@dataclass(frozen=True)
class LoadCheck:
    problems: list[str]      # one line per key that does not load: key, file, the runner's own error line
    failed: list[str]        # those keys
    loaded: int              # keys that loaded
    not_loaded: list[str]    # keys not loadable by their runner's nature (notes)


def loadable(exp: Experiment, key: str) -> bool:
    vm = exp.vms[Key.parse(key).vm]
    return vm.runner not in (EXTERNAL_RUNNER, KRUN_EXTERNAL_RUNNER) and vm.mode != "startup"


def check_loads(exp: Experiment, exp_dir: Path, exp_path: str, keys: list[str], *, prefix: list[str],
                timeout: float = LOAD_TIMEOUT, workers: int | None = None) -> LoadCheck:
    """Load every key of ``keys`` that has a load step; the problems in ``keys``' order."""
    wanted = [k for k in keys if loadable(exp, k)]

    def load(key: str):
        return run_trial(exp, exp_dir, exp_path, key, iterations=None, prefix=prefix, timeout=timeout)

    with ThreadPoolExecutor(max_workers=max(1, workers or os.cpu_count() or 1)) as pool:
        trials = list(pool.map(load, wanted))
    failed = [t for t in trials if not t.outcome.completed]
    problems = [f"{exp_path}: {t.key}{shown_file(exp, exp_dir, t.key)} does not load: {t.outcome.reason}"
                for t in failed]
    return LoadCheck(problems, [t.key for t in failed], len(trials) - len(failed),
                     [k for k in keys if k not in wanted])
