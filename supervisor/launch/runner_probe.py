"""Preflight: launch each distinct runner once on a trivial benchmark before an experiment starts.

PLACEHOLDER for issue 10 section 1 (helper G replaces this module): the
interface is fixed so that the preparation path shared by `check` and `start`
can call it.
"""

from __future__ import annotations

from pathlib import Path

from supervisor.experiment.model import Experiment


def probe_runners(exp: Experiment, exp_dir: Path, experiment_file: str, run_keys: list[str], *,
                  as_benchmark_user: bool, timeout: float = 30.0) -> list[str]:
    """One line per runner that cannot run (naming the runner and the fix); [] when all can."""
    return []
