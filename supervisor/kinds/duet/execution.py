"""One pair execution (duet benchmarking): both sides of a pair job at once, and their two records.

The two runners start together (in the AB or BA order drawn from the
schedule's seed for this job and attempt), each pinned to its own CPU (which
side gets which CPU drawn the same way; by its execution cgroup's cpuset where
cgroup v2 has one, and by affinity in any case), and meet at a fresh duet
barrier before every iteration (unless [duet] barrier = false).  The pair completes
only when both sides do; otherwise both records carry the pair's failure, and
a side that completed keeps its measurements, marked ``partner_failed``.
Each side waits on its own runner in a thread (run_process watches a pidfd,
so two can wait at once).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from contracts.execution_record import MEASUREMENT_KEYS, PairSide
from supervisor.boot.context import Boot
from supervisor.boot.crash_points import pause_point
from supervisor.boot.execution import (Executed, JobRun, PairSideRun, build_launch, build_record, empty_run,
                                       rerun_verdict, run_and_judge, warn_instrumented)
from supervisor.boot.execution_outcome import ExecutionOutcome, errored, worst
from supervisor.errors import ColdrunError
from contracts.keys import Key, SIDES, Side, pair_sides
from supervisor.kinds.duet.table import OneCpu, StartOrder, pair_cpus, side_cpus, start_order
from supervisor.launch import cpuset
from supervisor.launch.containment import cgroup2_mount
from supervisor.launch.cpuset import Placement, PlacementAtEnd, PlacementRequest
from supervisor.kinds.duet.barrier import barrier_env, pair_barrier
from supervisor.launch.runner_command import Launch
from supervisor.platforms.base import LaunchPrefix, Platform
from supervisor.state.schedule import JobLine

PLACEMENT_WIDENED = "placement_widened"   # a side could run beyond its CPU at its end (the record's flag)


@dataclass
class _Side:
    side: Side
    key: str
    cpu: int
    run: dict[str, Any] = field(default_factory=empty_run)
    outcome: ExecutionOutcome | None = None     # None: not run (yet)
    launch: Launch | None = None
    verified_cpus: list[int] | None = None
    placement: Placement | None = None     # None: never got as far as its cgroup
    at_end: PlacementAtEnd | None = None   # where it could run at its end (None: it never ran)
    error: BaseException | None = None


class PairRun(JobRun):
    def execute(self, job: JobLine, attempt: int, before: dict[str, Any]) -> Executed:
        return execute_pair(self.ctx, self.ctx.platform, job, attempt, before)


def execute_pair(ctx: Boot, platform: Platform, job: JobLine, attempt: int, before: dict[str, Any]) -> Executed:
    """Run one pair execution of the claimed pair job; its two records (a, b), not yet written."""
    sides_keys = pair_sides(job.key)
    assert sides_keys is not None and ctx.exp.duet is not None
    order = start_order(ctx.schedule.seed, job.index, attempt)
    try:
        cpus = side_cpus(pair_cpus(ctx.exp.duet, ctx.cpus()), ctx.schedule.seed, job.index, attempt)
    except OneCpu as e:       # the machine lost a CPU since start
        raise ColdrunError(f"{job.key}: {e}") from None
    sides = [_Side(s, k, c) for s, k, c in zip(SIDES, sides_keys, cpus)]
    barrier_name: str | None = "" if ctx.exp.duet.barrier else None   # "": wanted, not made (pair not started)
    prefix = platform.launch_prefix(job.key)
    prefix_cgroup = prefix.cgroup
    try:
        for s in sides:
            warn_instrumented(ctx, Key.parse(s.key).vm)
            try:
                s.launch = build_launch(ctx, s.key, job, prefix)
            except ColdrunError as e:
                s.outcome = errored("launch_failure", f"cannot launch: {e}")
        for s in sides:
            if s.launch and not all(other.launch for other in sides):
                s.outcome = errored("partner_failed", "not started: its partner cannot launch")
        if all(s.launch for s in sides):
            mount = cgroup2_mount()
            try:
                # Both sides' execution cgroups go under one parent: cpuset is handed on to it for the pair's run.
                with cpuset.delegated(mount, prefix.cgroup or mount or "/") as no_cpuset, \
                        _maybe_barrier(ctx.exp.duet.barrier, prefix.user) as barrier_name:
                    _run_sides(ctx, job, sides, order, prefix, barrier_name)
                for s in sides:
                    if s.placement is not None and s.placement.mechanism == "affinity" and no_cpuset:
                        s.placement = replace(s.placement, note=no_cpuset)
            except ColdrunError as e:      # no barrier: neither side could run
                for s in sides:
                    s.outcome = errored("launch_failure", str(e))
    finally:
        platform.end_launch(job.key)
        ctx.state.clear_runner()
    for s in sides:
        if s.outcome is not None and s.outcome.completed and s.verified_cpus != [s.cpu]:
            s.outcome = errored("not_in_force", f"placement not as wanted: pinned to CPU {s.cpu}, runs on "
                                                f"{s.verified_cpus}")
        elif s.outcome is not None and s.outcome.completed and s.at_end is not None and s.at_end.widened(s.cpu):
            s.outcome = errored("not_in_force", f"placement widened during the run: pinned to CPU {s.cpu}, at its "
                                                f"end it could run on {s.at_end.affinity_cpus}" + (
                                                    f" (cpuset {s.at_end.effective_cpus})"
                                                    if s.at_end.effective_cpus is not None else ""))
    return _judge_pair(ctx, platform, job, attempt, before, sides, order, barrier_name, prefix_cgroup)


@contextmanager
def _maybe_barrier(wanted: bool, owner: str | None) -> Iterator[str | None]:
    """A fresh barrier's name for the pair's run, or None with [duet] barrier = false."""
    if not wanted:
        yield None
        return
    with pair_barrier(owner) as name:
        yield name


def _run_sides(ctx: Boot, job: JobLine, sides: list[_Side], order: StartOrder, prefix: LaunchPrefix,
               barrier: str | None) -> None:
    """Start both runners, first side first, and wait for both."""
    noted: list[dict] = []
    lock = threading.Lock()
    duet = ctx.exp.duet
    assert duet is not None     # a pair job runs only in a [duet] experiment (execute_pair asserts it too)
    env = barrier_env(barrier, duet.barrier_timeout, duet.spin_us) if barrier else {}
    ctx.state.note_runners([], barrier)     # a cut from here on leaves nothing behind (reconcile removes it)
    ctx.log.info("pair execution", key=job.key, start_order=order, barrier=barrier,
                 cpus=" ".join(f"{s.side}:{s.cpu}" for s in sides))

    def run(s: _Side) -> None:
        def started(pid: int, created: float | None, cgroup: str | None) -> None:
            try:
                s.verified_cpus = sorted(os.sched_getaffinity(pid))   # what the kernel will schedule it on
            except OSError:
                s.verified_cpus = []
            with lock:     # runner.json names both runners, so a crash of ours leaves no orphan
                noted.append({"pid": pid, "create_time": created, "cgroup": cgroup})
                ctx.state.note_runners(list(noted), barrier)
                both = len(noted) == len(sides)
            if both:
                pause_point("during-run", ctx.schedule.boots)

        assert s.launch is not None     # execute_pair runs the sides only when both have their launch
        launch = Launch(s.launch.argv, {**s.launch.env, **env})
        placement = PlacementRequest(s.cpu, on_placed=lambda p: setattr(s, "placement", p),
                                     on_ended=lambda e: setattr(s, "at_end", e))
        try:
            s.outcome = run_and_judge(ctx, s.key, launch, side_prefix(prefix, s.cpu), job.iterations, s.run,
                                      started, PairSideRun(placement, barrier=barrier is not None))
        except BaseException as e:     # re-raised in the boot's thread
            s.error = e

    first, second = (sides if order == "AB" else sides[::-1])
    threads = [threading.Thread(target=run, args=(s,), name=f"coldrun-side-{s.side}") for s in (first, second)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except BaseException:    # SIGTERM (abort): end both runners, so each thread cleans up, then unwind
        with lock:
            for runner in noted:
                try:
                    os.killpg(runner["pid"], signal.SIGKILL)
                except OSError:
                    pass
        for t in threads:
            t.join()
        raise
    for s in sides:
        if s.error is not None:
            raise s.error


def side_prefix(prefix: LaunchPrefix, cpu: int) -> LaunchPrefix:
    """A side's launch prefix: the platform's, plus ``taskset`` last when a wrapper moves the runner into the
    pinning partition (moving into a cpuset resets a task's affinity, so the one set before exec is lost)."""
    if prefix.cgroup is None:
        return prefix
    # No "--" after the list: taskset would try to run it.
    return replace(prefix, wrappers=[*prefix.wrappers, "taskset", "--cpu-list", str(cpu)])


def _judge_pair(ctx: Boot, platform: Platform, job: JobLine, attempt: int, before: dict[str, Any],
                sides: list[_Side], order: StartOrder, barrier: str | None, prefix_cgroup: str | None) -> Executed:
    """The pair's outcome from its sides', post-checks per side, and the two records."""
    duet = ctx.exp.duet
    assert duet is not None     # a pair job runs only in a [duet] experiment (execute_pair asserts it too)
    own = [s.outcome or errored("launch_failure", "not started") for s in sides]
    failed = [(s, o) for s, o in zip(sides, own) if not o.completed]
    outcome = worst(own)
    if failed:
        outcome = ExecutionOutcome(outcome.flag, outcome.cause,
                                   "; ".join(f"side {s.side} ({s.key}): {o.reason}" for s, o in failed))
    else:
        lengths = {len(s.run["wallclock_times"]) for s in sides}
        if len(lengths) > 1:    # the protocol checks each against the job; this guards the pairing itself
            outcome = errored("protocol_refusal", f"the sides ran different iteration counts ({sorted(lengths)})")
    posts = [platform.post_checks(before, {k: s.run[k] for k in MEASUREMENT_KEYS}) for s in sides]
    verdict = rerun_verdict(ctx, attempt, outcome, sorted({f for p in posts for f in p.flags}),
                            any(p.rerun for p in posts))
    records = []
    placement: Literal["sched_setaffinity", "sched_setaffinity+taskset"] = (
        "sched_setaffinity" if prefix_cgroup is None else "sched_setaffinity+taskset")
    for s, mine, post, theirs, partner in zip(sides, own, posts, own[::-1], sides[::-1]):
        partner_only = not verdict.outcome.completed and mine.completed
        placed = s.placement or Placement("affinity", note="the runner was not started")
        pair = PairSide(pair_id=f"{job.key}#{job.pexec}", side=s.side, partner_key=partner.key,
                        start_order=order, order_seed=ctx.schedule.seed, cpu=s.cpu, placement=placement,
                        verified_cpus=s.verified_cpus, placement_mechanism=placed.mechanism,
                        effective_cpus=placed.effective_cpus, placement_note=placed.note,
                        cpus_at_end=s.at_end.affinity_cpus if s.at_end else None,
                        effective_cpus_at_end=s.at_end.effective_cpus if s.at_end else None, barrier=barrier,
                        spin_us=duet.spin_us if barrier is not None else None, own_outcome=mine.flag,
                        own_reason=mine.reason, own_cause=mine.cause, partner_failed=not theirs.completed)
        widened = s.at_end is not None and s.at_end.widened(s.cpu)
        records.append(build_record(ctx, job, attempt, s.key, s.run, before, post.details, verdict,
                                    flags=["partner_failed"] * partner_only + [PLACEMENT_WIDENED] * widened,
                                    pair=pair))
    return Executed(records, verdict.outcome, own, verdict.disturbed, verdict.exhausted)
