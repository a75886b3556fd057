"""One process execution: launch the runner, judge how it ended, and fill the execution record."""

from __future__ import annotations

import math
import os
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from contracts.keys import Key
from contracts.execution_record import MEASUREMENT_KEYS, RECORD_VERSION, Cause, ExecutionRecord
from iteration_runners.protocol import (DOCUMENT_FLOOR, OPTIONAL_KEYS, ProtocolError, document_limit,
                                       parse_document)
from supervisor import __version__
from supervisor.boot.context import Boot
from supervisor.boot.crash_points import pause_point
from supervisor.boot.execution_outcome import COMPLETED, ExecutionOutcome, errored, rerun, timed_out
from supervisor.errors import ColdrunError
from supervisor.experiment.model import VM, Experiment
from supervisor.launch.cpuset import PlacementRequest
from supervisor.launch.memory_limit import LIMIT_FLAG
from supervisor.launch.process import ProcessResult, error_line, run_process
from supervisor.launch.runner_command import Launch, env_size, runner_launch
from supervisor.state.records import executions_dir
from supervisor.platforms.base import LaunchPrefix, Platform
from supervisor.platforms.controls import ControlReport
from supervisor.state.schedule import JobLine

RUNNER_SETUP_EXIT = 2    # PROTOCOL.md: the runner's usage/setup failure, before any iteration
PROCESS_FLAGS = "process_flags"   # in a run's fields: flags from how the process ran (not a record field)


@dataclass
class Executed:
    """One finished attempt: its records (not yet written; a pair's two sides, a and b), how it ended, each
    record's own ending (a pair side's), and the re-run verdict."""

    records: list[ExecutionRecord]
    outcome: ExecutionOutcome
    own: list[ExecutionOutcome]   # per record: how that run itself ended
    disturbed: list[str]          # post-check flags the re-run policy acts on
    exhausted: bool               # disturbed on the last allowed attempt


class JobRun:
    """One job at this boot, as its kind runs it: steps 4 (apply and verify) and 8 (execute)."""

    reboot_first = False     # the kind switched something that needs a reboot: reboot before claiming the job

    def __init__(self, ctx: Boot):
        self.ctx = ctx       # the boot as this job sees it (a kind may give the job its own experiment)

    def apply_and_verify(self) -> list[ControlReport]:
        return self.ctx.platform.apply_and_verify()

    def execute(self, job: JobLine, attempt: int, before: dict[str, Any]) -> Executed:
        return execute(self.ctx, self.ctx.platform, job, attempt, before)


# Reads back what an execution ran with, once it ended: the outcome it stands at (a condition not as planned
# fails a completed run and clears its measurements) and the record's part for it.
ReadBack = Callable[[dict[str, Any], ExecutionOutcome], tuple[ExecutionOutcome, dict[str, Any]]]


def execute(ctx: Boot, platform: Platform, job: JobLine, attempt: int, before: dict[str, Any],
            refusal: ExecutionOutcome | None = None, read_back: ReadBack | None = None) -> Executed:
    """Run the claimed job once and judge it, post-checks and re-run policy included.

    ``refusal``: the job must not launch (a screening level not in force): recorded so.  ``read_back``: what
    the kind checks once the runner ended (a screening job's levels)."""
    warn_instrumented(ctx, Key.parse(job.key).vm)
    # The launch, process and measurement fields of the record, as far as the run got.
    run = empty_run()
    own = launch_and_judge(ctx, platform, job, run) if refusal is None else refusal
    post = platform.post_checks(before, {k: run[k] for k in MEASUREMENT_KEYS})
    part: dict[str, Any] = {}
    if read_back is not None:
        own, part = read_back(run, own)
    verdict = rerun_verdict(ctx, attempt, own, post.flags, post.rerun)
    record = build_record(ctx, job, attempt, job.key, run, before, post.details, verdict, **part)
    return Executed([record], verdict.outcome, [own], verdict.disturbed, verdict.exhausted)


def build_record(ctx: Boot, job: JobLine, attempt: int, key: str, run: dict[str, Any], before: dict[str, Any],
                 after: dict[str, Any] | None, verdict: Verdict, *, flags: Sequence[str] = (),
                 **parts: Any) -> ExecutionRecord:
    """The one way an execution record is made: which execution (``key``: the side's, for a pair job), how it
    ran (``run``), the platform before and after, the verdict (plus ``flags`` of its own), and a kind's
    ``parts`` (``pair``, ``screening``)."""
    bench, vm_name, variant = Key.parse(key)
    vm = ctx.exp.vms[vm_name]
    outcome = verdict.outcome
    run = dict(run)
    flags = [*flags, *run.pop(PROCESS_FLAGS, [])]
    return ExecutionRecord(
        record_version=RECORD_VERSION, supervisor_version=__version__, job_index=job.index, key=key,
        bench=bench, vm=vm_name, variant=variant, pexec=job.pexec, attempt=attempt, boot=ctx.schedule.boots,
        iterations=job.iterations, param=run_param(ctx, job, key), debug=ctx.state.debug(), mode=vm.mode,
        instrument=vm.instrument, flags=[*verdict.flags, *flags, *(["files_changed"] if before.get("changed_files")
                                                                  else [])],
        platform_before=before, platform_after=after,
        rerun_requested=verdict.rerun_requested, outcome=outcome.flag, state=outcome.state, reason=outcome.reason,
        cause=outcome.cause, **parts, **run)


def warn_instrumented(ctx: Boot, vm_name: str) -> None:
    if ctx.exp.vms[vm_name].instrument:
        ctx.log.warning("instrumentation is on for this VM: it perturbs the measurement; do not use these "
                        "times as results", vm=vm_name)


def empty_run() -> dict[str, Any]:
    """A record's measurement fields before the runner has written any."""
    return {"wallclock_times": [], "core_cycle_counts": [], "aperf_counts": [], "mperf_counts": [],
            "counters": None}


def clear_measurements(run: dict[str, Any]) -> None:
    """A run that does not count keeps no measurements."""
    run.update({k: [] for k in MEASUREMENT_KEYS})


def run_param(ctx: Boot, job: JobLine, key: str) -> int:
    """run_iter's param for ``key``: the job's; a pair job's side runs its own benchmark's."""
    return job.param if key == job.key else ctx.exp.benchmarks[Key.parse(key).benchmark]


@dataclass
class Verdict:
    """The re-run policy's say on one attempt, given its post-check flags."""

    outcome: ExecutionOutcome
    flags: list[str]
    disturbed: list[str]
    rerun_requested: bool
    exhausted: bool


def rerun_verdict(ctx: Boot, attempt: int, outcome: ExecutionOutcome, post_flags: list[str],
                  post_rerun: bool) -> Verdict:
    """A completed run that the post-checks call disturbed is re-queued ("O") until rerun.max_attempts;
    the last attempt keeps its data and gets the flag rerun_exhausted."""
    rerun_policy = ctx.exp.rerun
    flags = list(post_flags)
    exhausted = False
    disturbed = sorted(set(post_flags) & set(rerun_policy.on_flags))
    rerun_requested = bool(post_rerun and disturbed and outcome.completed)
    if rerun_requested:
        if attempt < rerun_policy.max_attempts:
            outcome = rerun(f"re-run requested by post-checks ({', '.join(disturbed)})")
        else:
            exhausted = True
            flags.append("rerun_exhausted")
    return Verdict(outcome, flags, disturbed, rerun_requested, exhausted)


def launch_and_judge(ctx: Boot, platform: Platform, job: JobLine, record: dict[str, Any]) -> ExecutionOutcome:
    """Run the runner; fill the record's launch, process and measurement fields; return how it ended."""
    prefix = platform.launch_prefix(job.key)

    def started(pid: int, created: float | None, cgroup: str | None) -> None:
        ctx.state.note_runner(pid, created, cgroup)

    try:
        try:
            launch = build_launch(ctx, job.key, job, prefix)
        except ColdrunError as e:
            return errored("launch_failure", f"cannot launch: {e}")
        return run_and_judge(ctx, job.key, launch, prefix, job.iterations, record, started)
    finally:
        platform.end_launch(job.key)
        ctx.state.clear_runner()


def build_launch(ctx: Boot, key: str, job: JobLine, prefix: LaunchPrefix) -> Launch:
    """The runner command for ``key`` (a pair's side: its own benchmark's param) run behind ``prefix``;
    ColdrunError if it cannot be."""
    exp, state = ctx.exp, ctx.state
    bench, vm_name, variant = Key.parse(key)
    # The HOME the runner gets: the fresh benchmark user's (the prefix sets it), else the state dir's.
    home = prefix.environment({"HOME": str(state.home_path)})["HOME"]
    return runner_launch(exp, state.experiment_dir(), str(state.experiment_path), bench, vm_name, variant,
                         home=home, debug=state.debug(), iterations=job.iterations,
                         param=run_param(ctx, job, key))


@dataclass(frozen=True)
class PairSideRun:
    """What makes a runner one side of a pair execution: where it is placed, and whether its document has
    barrier waits.  Its crash point is the pair's, taken once both sides started."""

    placement: PlacementRequest
    barrier: bool


def run_and_judge(ctx: Boot, key: str, launch: Launch, prefix: LaunchPrefix, iterations: int,
                  record: dict[str, Any], note_started: Callable[[int, float | None, str | None], None],
                  side: PairSideRun | None = None) -> ExecutionOutcome:
    """Start one runner (``side``: as a pair's side), wait for it, fill ``record``'s launch, process and
    measurement fields; return how it ended."""
    exp, state, log = ctx.exp, ctx.state, ctx.log
    argv = prefix.argv() + launch.argv
    seen_env = prefix.environment(launch.env)
    record.update({"argv": argv, "environment": seen_env, "environment_bytes": env_size(seen_env),
                   "cwd": str(state.home_path)})

    def started(pid: int, created: float | None, cgroup: str | None) -> None:
        note_started(pid, created, cgroup)
        log.info("runner started", pid=pid, argv=" ".join(argv), cgroup=cgroup or "none", key=key)
        if side is None:
            pause_point("during-run", ctx.schedule.boots)

    vm = exp.vms[Key.parse(key).vm]
    res = run_process(argv, launch.env, cwd=str(state.home_path), heap_limit=exp.heap_limit,
                      stack_limit=exp.stack_limit, timeout=exp.execution_timeout, on_started=started,
                      results_limit=results_limit(vm, iterations), memory_limit=memory_bound(exp),
                      results_spill=str(executions_dir(state.path) / f"results-over-limit-{time.time_ns()}.json"),
                      cgroup_parent=prefix.cgroup,     # inside the pinning partition, if any
                      placement=side.placement if side else None)
    _fill_process_fields(record, res)
    if res.containment != "cgroup":
        log.info("runner contained by its process group", why=res.containment_detail)
    if res.containment_problem:
        log.warning("containment not cleaned up", problem=res.containment_problem)
    if res.leftover_processes:
        log.warning("processes the runner left running were killed", count=res.leftover_processes,
                    containment=res.containment)
    ended = judge_ending(res, exp.execution_timeout)
    if ended is not None:
        return ended
    return judge_document(res.results, vm, iterations, record, side=side, wall_seconds=res.duration)


def memory_bound(exp: Experiment) -> int:
    """What all of a run's processes may use together (memory_limit.py): what the rlimits allow one."""
    return exp.heap_limit + exp.stack_limit


def results_limit(vm: VM, iterations: int) -> int:
    """The document an execution of ``vm`` may write: it follows the run (iterations, this machine's cores,
    instrumentation), so a big machine's per-core counters are never refused for their size."""
    return document_limit(iterations, os.cpu_count() or 1, instrument=vm.instrument)


def judge_ending(res: ProcessResult, timeout: float | None) -> ExecutionOutcome | None:
    """How a runner that did not end well ended, its reason the runner's own error line; None when it
    exited 0 with a document of a size to judge."""
    if res.launch_error:
        return errored("launch_failure", f"runner could not start: {res.launch_error}")
    if res.timed_out:
        return timed_out(f"timed out after {timeout:g}s; the runner and its processes killed")
    if res.signal is not None:
        oom = (f": the memory limit's OOM killer ended {res.memory.oom_kills} process(es) (heap_limit + "
               f"stack_limit = {res.memory.limit_bytes:,} bytes for all of them)"
               ) if res.memory and res.memory.hit else ""
        return errored("signal", f"runner killed by signal {res.signal} ({signal_name(res.signal)}){oom}")
    if res.exit_code != 0:
        said = error_line(res.stderr.text())
        cause: Cause = "runner_setup" if res.exit_code == RUNNER_SETUP_EXIT else "exit_status"
        return errored(cause, f"runner exited with status {res.exit_code}" + (f": {said}" if said else ""))
    if res.results_oversize:
        kept = f"; the whole document is kept in {res.results_spilled}" if res.results_spilled else ""
        return errored("protocol_refusal", f"results document larger than its limit of {res.results_limit:,} "
                                           f"bytes (twice what the run's iterations and cores imply, plus "
                                           f"{DOCUMENT_FLOOR >> 20} MiB){kept}")
    return None


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


# The runner's clock (CLOCK_MONOTONIC_RAW) and the supervisor's (CLOCK_MONOTONIC) may differ by NTP's slew, at
# most 500 ppm; a millisecond more covers rounding of tiny runs.
CLOCK_RATE_SLACK = 1e-3
CLOCK_SLACK_SECONDS = 1e-3


def judge_document(raw: bytes, vm: VM, iterations: int, record: dict[str, Any], *,
                   side: PairSideRun | None = None, wall_seconds: float | None = None) -> ExecutionOutcome:
    """A runner that exited 0: its document, checked against what this VM's run of ``iterations``
    implies, fills the record's measurements (completed), or its refusal is the reason (errored).
    ``wall_seconds``: how long the runner lived by the supervisor's clock, which its iterations cannot exceed."""
    try:
        doc = parse_document(raw, iterations=iterations, startup=vm.mode == "startup",
                             instrument=vm.instrument, duet=side is not None,
                             barrier=side.barrier if side else True)
    except ProtocolError as e:
        return errored("protocol_refusal", str(e))
    timed = math.fsum(doc["wallclock_times"])
    if wall_seconds is not None and timed > wall_seconds * (1 + CLOCK_RATE_SLACK) + CLOCK_SLACK_SECONDS:
        return errored("protocol_refusal", f"iteration times add up to {timed:.6g}s, more than the {wall_seconds:.6g}s "
                       f"the runner ran by the supervisor's clock: forged or mis-scaled times (a runner reports "
                       f"seconds); measurements not kept")
    for k in (*MEASUREMENT_KEYS, "counters"):
        record[k] = doc[k]
    # Optional objects and the iteration timeline (start/end ns, barrier waits), kept as the runner wrote them.
    for k in OPTIONAL_KEYS:
        if k in doc:
            record[k] = doc[k]
    return COMPLETED


def _fill_process_fields(record: dict[str, Any], res: ProcessResult) -> None:
    sig_name = None if res.signal is None else signal_name(res.signal)
    record.update({
        "runner_pid": res.pid, "exit_code": res.exit_code, "signal": res.signal, "signal_name": sig_name,
        "timed_out": res.timed_out, "started_at": res.started_at, "ended_at": res.ended_at,
        "duration_seconds": res.duration, "rusage": res.rusage,
        "stdout_tail": res.stdout.text(), "stdout_bytes": res.stdout.total,
        "stderr_tail": res.stderr.text(), "stderr_bytes": res.stderr.total,
        "launch_error": res.launch_error, "results_bytes": len(res.results),
        # containment: "cgroup" | "process_group" (fallback); leftover_processes: how many processes
        # besides the runner were still alive at its end (or at the timeout) and were killed
        "containment": res.containment, "leftover_processes": res.leftover_processes,
        "memory_limit": res.memory.as_dict() if res.memory else None,
        # flags the process itself raised (build_record adds them to the post-checks')
        PROCESS_FLAGS: [LIMIT_FLAG] if res.memory and res.memory.hit else [],
    })
