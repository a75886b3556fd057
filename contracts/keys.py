"""An execution's key: ``bench:vm:variant``, and a [duet] pair job's ``A/B`` (what the schedule, the
records and both exports name), read and written here alone.

A pair job is ONE job of the schedule whose key is ``A/B`` (``/`` cannot occur in
a name): its two sides are its ``a`` and ``b`` records; a single execution's
record has no side.
"""

from __future__ import annotations

PAIR_SEPARATOR = "/"
SIDES = ("a", "b")
SINGLE = ""          # the side of a single (not paired) execution


def pair_key(a: str, b: str) -> str:
    return f"{a}{PAIR_SEPARATOR}{b}"


def pair_sides(job_key: str) -> tuple[str, str] | None:
    """(a, b) for a pair job's key, None for a single execution's."""
    a, sep, b = job_key.partition(PAIR_SEPARATOR)
    return (a, b) if sep else None


def record_sides(job_key: str) -> tuple[str, ...]:
    """The sides whose records make up one attempt of the job."""
    return SIDES if pair_sides(job_key) else (SINGLE,)


def side_key(job_key: str, side: str) -> str:
    """The bench:vm:variant key a side runs (a single execution's own key)."""
    sides = pair_sides(job_key)
    return job_key if sides is None else sides[SIDES.index(side)]
