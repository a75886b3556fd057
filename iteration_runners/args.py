"""Checks on the run arguments every runner command shares."""

from __future__ import annotations


def check_run_args(iterations: object, param: object) -> None:
    """ValueError unless iterations is a positive int and param an int (bools are not ints here)."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, not {iterations!r}")
    if isinstance(param, bool) or not isinstance(param, int):
        raise ValueError(f"param must be an integer, not {param!r}")
