"""Where a command's output may go: anywhere but into a state dir (contracts/state_dir.py says why)."""

from __future__ import annotations

from pathlib import Path

from contracts.state_dir import output_problem
from supervisor.errors import ColdrunError


def refuse_state_dir_output(path: str | Path, fix: str) -> None:
    """One line naming ``path``, the state dir it leads into and ``fix``, when it leads into one."""
    problem = output_problem(path, fix)
    if problem:
        raise ColdrunError(problem)
