"""Experiment lifecycle: start (create the state dir), finish, stop (fatal), abort, continue.

Everything these do to the machine (boot service, active-experiment marker,
mail, reboot) goes through the platform, which does it for real on hardware
and only logs it (re-executing instead of rebooting) when simulated.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from supervisor.boot.context import Boot
from supervisor.boot.key_files import record_at_start
from supervisor.boot.kinds import kind_for
from supervisor.boot.reconcile import reconcile
from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from supervisor.eventlog import make_logger
from supervisor.experiment.model import experiment_sha256
from supervisor.platforms.factory import HARDWARE, SIMULATED, Machine
from supervisor.state.outcome import EXIT_STOPPED, failures, standing_code
from supervisor.state.schedule import MailCounter, Schedule, render_new
from supervisor.state import layout
from supervisor.state.statedir import AlreadyRunning, StateDir


def start(experiment_file: str, state_dir: str, *, simulate: bool, machine: Machine | None = None,
          stderr=sys.stderr, debug: bool = False) -> int:
    """Prepare, create the state dir and schedule, then hand over to the first boot (a reboot).

    ``debug`` makes runners write a line per iteration to stderr, for every boot.
    """
    from supervisor.boot.prepare import prepare, refuse_problems   # start's alone: a boot never prepares

    mode = SIMULATED if simulate else HARDWARE
    machine = machine or Machine()
    machine.require_privileges(mode)
    machine.refuse_volatile_state_dir(mode, state_dir)    # before anything is written or changed
    as_user = machine.runs_as_benchmark_user(mode)
    prep = prepare(experiment_file, random_seed=secrets.randbelow(10 ** 12), as_benchmark_user=as_user,
                   machine=machine, simulate=simulate)
    # The runner will run as a fresh unprivileged user: refuse now rather than after the first reboot.
    refuse_problems(prep, as_benchmark_user=as_user)
    state = StateDir(state_dir)
    state.prepare_new(prep.kind.records_to_write(prep.jobs), prep.kind.most_iterations_of_any())
    lock_fd = state.lock()
    try:
        return _start_locked(prep, state, mode, machine, stderr, debug)
    finally:
        os.close(lock_fd)


def _start_locked(prep, state: StateDir, mode: str, machine: Machine, stderr, debug: bool) -> int:
    exp = prep.exp
    # prepare_new looked before the lock: another start may have made an experiment here since.  Nothing
    # (experiment copy, meta, audit, marker, undo replay) is written before this second look.
    if state.exists():
        raise ColdrunError(f"{state.path}: state dir already holds an experiment (started while this start "
                           f"was preparing); continue it with coldrun resume {state.path}, or choose another "
                           f"--state-dir")
    log = make_logger(state.log_path, stderr)
    platform = machine.platform(mode, exp, state.path, log)
    # Before this experiment changes anything: undo what a dead one left, then say who is changing things.
    platform.claim_machine()
    state.write_experiment(prep.text, Path(prep.experiment_file), sys.argv, debug=debug)
    # What each key runs, pinned before anything on the machine changes (a boot compares before each execution).
    record_at_start(state.path, exp, state.experiment_dir(), str(state.experiment_path),
                    [j.key for j in prep.jobs if not j.skipped], str(state.home_path))
    for vm_name, vm in exp.vms.items():
        if vm.instrument:
            log.warning("instrumentation is on: it perturbs the measurement; use these runs to explain "
                        "behaviour, not as results", vm=vm_name)
    try:
        audit = json.loads(json.dumps(platform.audit(), default=str))
        audit["experiment_sha256"] = experiment_sha256(prep.text)
        write_atomic(state.path / layout.AUDIT, json.dumps(audit).encode())
        for report in platform.apply_and_verify():
            if not report.ok:
                log.warning("platform control not as wanted", **{k: str(v) for k, v in report.as_dict().items()})
        baselines = platform.take_baselines()
    except ColdrunError as e:
        platform.restore()     # undo whatever was applied before the failure
        platform.release_machine()
        raise ColdrunError(f"{e} (nothing was started; settings restored)", e.exit_code) from None
    prep.kind.on_start(state.path, log, prep.seed)
    Schedule.create(state.schedule_path, render_new(
        prep.jobs, experiment_sha256=experiment_sha256(prep.text), mode=mode, order=exp.order, seed=prep.seed,
        baselines=baselines))
    log.info("experiment started", name=exp.name, jobs=prep.n_run, skipped=len(prep.jobs) - prep.n_run,
             seed=prep.seed, order=exp.order, state_dir=str(state.path), debug=debug)
    platform.install_boot_service()
    schedule = state.schedule()
    platform.mail(exp.mail, MailCounter(schedule), f"started {exp.name}",
                  f"coldrun started {prep.n_run} process executions (state dir {state.path}).")
    prep.kind.before_reboot(Boot(state, schedule, exp, log, platform, kind=prep.kind), machine)
    platform.reboot()
    return 0


def summary_line(schedule: Schedule) -> str:
    c = schedule.counts()
    parts = [f"{c[k]} {k.replace('_', ' ')}" for k in ("completed", "errored", "timed_out", "crashed",
                                                          "skipped", "outstanding") if c[k]]
    return ", ".join(parts) or "no jobs"


def _wind_down(ctx: Boot, subject: str, body: str, *, ended: bool = True) -> None:
    """Restore settings, remove the boot service, mail.

    ``ended``: the experiment is over (finished, aborted), so the active-experiment
    marker goes once nothing is left to restore; a stopped one may continue and keeps it.
    """
    platform = ctx.platform
    platform.restore()
    platform.remove_boot_service()
    if ended:
        platform.release_machine()
    platform.mail(ctx.exp.mail, MailCounter(ctx.schedule), subject, body)


def finish(ctx: Boot) -> int:
    """Nothing outstanding: wind down; exit non-zero when executions failed or [stop] keys missed their
    target (state/outcome.py)."""
    missed = ctx.kind.short_of_target(ctx.state.path)
    line = summary_line(ctx.schedule) + (f"; {ctx.kind.short_of_target_text(missed)}" if missed else "")
    failed = (f" Failed executions, each with its reason: coldrun status {ctx.state.path}."
              if failures(ctx.schedule) else "")
    _wind_down(ctx, f"finished {ctx.exp.name}", f"coldrun finished: {line}.{failed} Results: coldrun "
               f"export {ctx.state.path} --format krun -o results.json.bz2")
    ctx.schedule.set_status("finished")
    ctx.log.info("experiment finished", summary=line)
    if failures(ctx.schedule):
        ctx.log.warning(f"{failures(ctx.schedule)} process execution(s) errored, timed out or crashed; "
                        f"`coldrun status {ctx.state.path}` lists every one with its reason")
    return standing_code(ctx.schedule.status, failures(ctx.schedule), len(missed))


def stop(ctx: Boot, reason: str) -> int:
    """A fatal condition: record why, wind down, and refuse to continue until told to."""
    try:
        write_atomic(ctx.state.stop_reason_path, (reason + "\n").encode())
    except OSError as e:     # a full disk: stopped all the same; the log and the mail say why
        ctx.log.error("could not write the stop reason", problem=str(e))
    ctx.schedule.set_status("stopped")
    ctx.log.error("experiment stopped", reason=reason)
    _wind_down(ctx, f"stopped {ctx.exp.name}", f"coldrun stopped the experiment: {reason}", ended=False)
    return EXIT_STOPPED


def abort(state_dir: str, *, machine: Machine | None = None, stderr=sys.stderr, wait_seconds: float = 30.0) -> int:
    """Stop a running or idle experiment for good: settle jobs, restore, disable, mail.  A state dir that is
    gone (wiped): restore and disable from what the machine kept of it."""
    state = StateDir(state_dir)
    machine = machine or Machine()
    if not state.exists():          # no schedule: wiped (a mount point left empty), deleted, or never started
        log = make_logger(None, stderr)
        if machine.forget_lost_state_dir(state.path, log):
            log.warning("state dir is gone with its results; restored the settings its experiment changed and "
                        "removed its boot service", state_dir=str(state.path))
            return 0
    state.schedule()                 # a clear error for a non-state dir first
    try:
        lock_fd = state.lock()
    except AlreadyRunning:
        holder = state.lock_holder()
        if holder:
            try:
                os.kill(holder, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait_seconds
        while True:   # waiting for another process to let go: nothing to block on but the lock itself
            try:
                lock_fd = state.lock()
                break
            except AlreadyRunning:
                if time.monotonic() > deadline:
                    raise ColdrunError(f"{state.path}: supervisor pid {holder} did not stop within "
                                       f"{wait_seconds:.0f}s; stop it and run coldrun abort again") from None
                time.sleep(0.1)
    try:
        return _abort_locked(state, machine, stderr)
    finally:
        os.close(lock_fd)


def _abort_locked(state: StateDir, machine: Machine, stderr) -> int:
    schedule = state.schedule()
    if schedule.status == "aborted":
        raise ColdrunError(f"{state.path}: experiment was already aborted")
    if schedule.status == "finished":
        stderr.write(f"coldrun: {state.path}: experiment already finished; nothing to abort\n")
        return 0
    exp, _ = state.experiment(schedule, check_source=False)
    log = make_logger(state.log_path, stderr)
    ctx = Boot(state, schedule, exp, log, machine.platform(schedule.mode, exp, state.path, log), kind=kind_for(exp))
    reconcile(ctx)
    _wind_down(ctx, f"aborted {exp.name}", f"coldrun experiment aborted: {summary_line(schedule)}")
    schedule.set_status("aborted")
    log.info("experiment aborted", summary=summary_line(schedule))
    return 0


def continue_stopped(state_dir: str, *, machine: Machine | None = None, stderr=sys.stderr) -> None:
    """Let a stopped experiment run again (after the cause was fixed); re-enables the boot service."""
    state = StateDir(state_dir)
    state.schedule()
    lock_fd = state.lock()
    try:
        schedule = state.schedule()
        if schedule.status != "stopped":
            raise ColdrunError(f"{state.path}: --continue is for stopped experiments; this one is "
                               f"{schedule.status}")
        exp, _ = state.experiment(schedule, check_source=False)
        log = make_logger(state.log_path, stderr)
        platform = (machine or Machine()).platform(schedule.mode, exp, state.path, log)
        platform.reclaim_machine()
        platform.install_boot_service()
        # The reboot-loop guard counts afresh from here; the boot count goes on, so boots keep their order.
        state.set_guard_base(schedule.boots, schedule.total_attempts())
        schedule.set_status("running")
        log.info("continuing a stopped experiment", reason_was=state.stop_reason())
    finally:
        os.close(lock_fd)
