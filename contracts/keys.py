"""An execution's key: ``bench:vm:variant`` (``Key``), and a [duet] pair job's ``A/B`` (what the schedule, the
records and both exports name), read and written here alone.

A pair job is ONE job of the schedule whose key is ``A/B`` (``/`` cannot occur in
a name): its two sides are its ``a`` and ``b`` records; a single execution's
record has no side.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

PAIR_SEPARATOR = "/"
Side = Literal["a", "b"]
SIDES: tuple[Side, Side] = ("a", "b")
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


KEY_SEPARATOR = ":"


@dataclass(frozen=True)
class Key:
    """An execution's key, ``bench:vm:variant``: parsed here, at the edges (schedule lines, records,
    exports), and nowhere else; iterates as (benchmark, vm, variant)."""
    benchmark: str
    vm: str
    variant: str

    @classmethod
    def parse(cls, text: str) -> Key:
        parts = text.split(KEY_SEPARATOR)
        if len(parts) != 3:
            raise ValueError(f"{text!r} is not a bench:vm:variant key")
        return cls(*parts)

    def __str__(self) -> str:
        return KEY_SEPARATOR.join(self)

    def __iter__(self) -> Iterator[str]:
        return iter((self.benchmark, self.vm, self.variant))


def first_side(job_key: str) -> Key:
    """The key a job runs: its own, or a pair's a side (whose iterations and param the pair runs; a pair's
    sides agree on them)."""
    return Key.parse(side_key(job_key, SIDES[0]))


def is_key(text: str) -> bool:
    """Whether ``text`` reads as a bench:vm:variant key (a results file may hold anything)."""
    return text.count(KEY_SEPARATOR) == 2
