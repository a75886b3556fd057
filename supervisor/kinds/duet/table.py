"""The experiment's [duet] table: pair executions (Bulej et al. 2020; methods.md §2).

A duet experiment names pairs of existing bench:vm:variant keys (A/A pairs
allowed).  Each process execution of a pair is ONE job of the schedule whose
key is ``A/B`` (``/`` cannot occur in a name): both sides run at once, each on
its own CPU, meeting at a barrier before every iteration.  The two sides of a
job are its ``a`` and ``b`` records; a single execution's record has no side.
"""

from __future__ import annotations

from contracts.keys import Key
import random
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


StartOrder = Literal["AB", "BA"]
# The barrier's wait deadline (COLDRUN_DUET_TIMEOUT): a partner that never arrives fails the pair.
DEFAULT_BARRIER_TIMEOUT = 60.0
# COLDRUN_DUET_SPIN_US: spinning this long before the futex sleep keeps a barrier wake-up out of the timed
# region (bench/bench_barrier.py: with 0, Ruby 8x and JS 11.5x the C clock floor; with 50 all <= 5x).
DEFAULT_SPIN_US = 100
MAX_SPIN_US = 1_000_000     # libkruntime's bound

KeyText = Annotated[str, Field(pattern=r"^[^:/]+:[^:/]+:[^:/]+$", description="bench:vm:variant")]


class Pair(BaseModel):
    """Two keys run side by side; x/y ratios are a over b."""
    model_config = ConfigDict(extra="forbid")
    a: KeyText
    b: KeyText


class Duet(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    pairs: list[Pair] = Field(min_length=1, description='pairs of keys, e.g. {a = "fib:python:v1", b = '
                                                        '"fib:python:v2"}; a = b (A/A) measures the noise floor')
    cpus: list[Annotated[int, Field(strict=True, ge=0)]] | None = Field(
        default=None, min_length=2, max_length=2,
        description="the two CPUs the sides run on (which side gets which is drawn per pair execution); "
                    "default the first two the supervisor may use")
    barrier_timeout: float = Field(default=DEFAULT_BARRIER_TIMEOUT, gt=0, le=86400,
                                   description="seconds a side waits at the barrier for its partner before the "
                                               "pair fails")
    spin_us: int = Field(default=DEFAULT_SPIN_US, strict=True, ge=0, le=MAX_SPIN_US,
                         description="microseconds a side spins at the barrier before it sleeps (0: sleep at "
                                     "once; a futex wake-up then lands in the timed region)")
    barrier: bool = Field(default=True, strict=True,
                          description="meet before every iteration; false: the sides start together but run "
                                      "unsynchronised, and the analysis pairs iterations that overlap by > 40% of both")


def start_order(seed: int, job_index: int, attempt: int) -> StartOrder:
    """AB or BA for one pair execution: random, but reproducible from the schedule's recorded seed."""
    return random.Random(f"{seed}:{job_index}:{attempt}").choice(("AB", "BA"))


def side_cpus(cpus: tuple[int, int], seed: int, job_index: int, attempt: int) -> tuple[int, int]:
    """The CPUs of sides a and b for one pair execution: the pair's two, swapped at random (seeded, drawn
    apart from the start order), so a difference between the two CPUs adds noise, not a bias to a/b."""
    swap = random.Random(f"cpus:{seed}:{job_index}:{attempt}").random() < 0.5
    return (cpus[1], cpus[0]) if swap else cpus


def problems(duet: Duet, vms: Mapping[str, Any], known_keys: list[str], *, stop: bool,
             skip: bool) -> list[tuple[str, str]]:
    """(dotted field, message) for pairs that cannot run: unknown keys, lockstep impossible, repeats.
    ``vms``: the experiment's VMs (model.VM; the model imports this module, not the other way)."""
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for i, pair in enumerate(duet.pairs):
        where = f"duet.pairs.{i}"
        unknown = [k for k in (pair.a, pair.b) if k not in known_keys]
        for k in unknown:
            out.append((where, f"names {k!r}, which is not a bench:vm:variant key of this experiment; known "
                               f"keys: {', '.join(known_keys[:6])}{' ...' if len(known_keys) > 6 else ''}"))
        if unknown:
            continue
        vm_a, vm_b = vms[Key.parse(pair.a).vm], vms[Key.parse(pair.b).vm]
        if vm_a.iterations != vm_b.iterations:
            out.append((where, f"its sides run {vm_a.iterations} and {vm_b.iterations} iterations; a pair meets "
                               f"before every iteration, so both VMs need the same iterations"))
        if "startup" in (vm_a.mode, vm_b.mode):
            out.append((where, 'a startup-mode VM runs no iterations to pair; use mode = "iterations"'))
        if (pair.a, pair.b) in seen:
            out.append((where, f"the pair {pair.a} / {pair.b} is listed twice; remove one"))
        seen.add((pair.a, pair.b))
    if stop:
        out.append(("duet", "[duet] runs a fixed number of pair executions: use executions, not [stop]"))
    if skip:
        out.append(("skip", "a duet experiment runs exactly its pairs; remove skip"))
    return out


class OneCpu(ValueError):
    """A pair needs two CPUs; the message is the one line to show."""


def pair_cpus(duet: Duet, available: list[int]) -> tuple[int, int]:
    """The pair's two CPUs: [duet] cpus, else the first two the supervisor may use (side_cpus assigns them)."""
    if duet.cpus is not None:
        missing = [c for c in duet.cpus if c not in available]
        if duet.cpus[0] == duet.cpus[1]:
            raise OneCpu(f"duet.cpus: both sides on CPU {duet.cpus[0]}; name two different CPUs")
        if missing:
            raise OneCpu(f"duet.cpus: CPU {missing[0]} is not one coldrun may use here "
                         f"({', '.join(map(str, available))}); name two of those")
        return duet.cpus[0], duet.cpus[1]
    if len(available) < 2:
        raise OneCpu(f"duet: this machine gives coldrun {len(available)} CPU ({', '.join(map(str, available))}); "
                     f"a pair runs its two sides at once, one per CPU, so it needs at least 2")
    return available[0], available[1]
