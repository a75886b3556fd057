"""Experiment lifecycle: start (create the state dir), finish, stop (fatal), abort.

Hardware mode talks to the boot service (install/disable) and mail; simulated
mode only logs what those would do.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.errors import ColdrunError
from supervisor.eventlog import make_logger
from supervisor.experiment.model import experiment_sha256, load_experiment
from supervisor.experiment.plan import expand
from supervisor.platforms.factory import build_platform
from supervisor.platforms.base import Platform
from supervisor.durable import write_atomic
from supervisor.launch.runner_command import validate_files
from supervisor.state.schedule import MailCounter, Schedule, render_new
from supervisor.state.statedir import StateDir
from supervisor.system import Clock, Commands, RealClock, RealCommands, SystemRoot

if TYPE_CHECKING:
    from supervisor.boot.context import Boot

EXIT_STOPPED = 3


def _mailer(exp, schedule: Schedule, commands: Commands, log: Any):
    from supervisor.platforms.mail import Mailer
    return Mailer(exp.mail.to, exp.mail.quota, MailCounter(schedule), commands=commands, log=log)


def start(experiment_file: str, state_dir: str, *, simulate: bool, root: SystemRoot | None = None,
          commands: Commands | None = None, clock: Clock | None = None, stderr=sys.stderr,
          reexec: bool = True, platform: Platform | None = None, debug: bool = False) -> int:
    """Validate, create the state dir and schedule, then hand over to the first boot.

    ``platform`` is injected by tests; otherwise built for the mode.  ``debug``
    makes runners write a line per iteration to stderr, for every boot.
    """
    if not simulate and os.geteuid() != 0:
        raise ColdrunError("coldrun start without --simulate-reboots controls the machine and must run as "
                           "root; add --simulate-reboots to try the experiment without touching the system")
    exp, text = load_experiment(experiment_file)
    exp_dir = Path(experiment_file).absolute().parent
    if exp.order == "random":
        seed = exp.seed if exp.seed is not None else secrets.randbelow(10 ** 12)
    else:
        seed = exp.seed or 0   # unused by round-robin
    jobs = expand(exp, seed)
    if all(j.skipped for j in jobs):
        raise ColdrunError(f"{experiment_file}: skip: every job is skipped; nothing to run")
    run_keys = sorted({j.key for j in jobs if not j.skipped})
    validate_files(exp, exp_dir, experiment_file, run_keys)
    if exp.platform.benchmark_user and (not simulate or os.geteuid() == 0):
        # The runner will run as a fresh unprivileged user (simulated as root too): refuse now, not at the first run.
        from supervisor.launch.runner_access import unreachable_files
        problems = unreachable_files(exp, exp_dir, experiment_file, run_keys)
        if problems:
            more = f" (and {len(problems) - 1} more; coldrun check lists them)" if len(problems) > 1 else ""
            raise ColdrunError(problems[0] + more)
    state = StateDir(state_dir)
    state.prepare_new(Path(experiment_file))
    lock_fd = state.lock()
    try:
        return _start_locked(exp, text, experiment_file, jobs, seed, state, simulate, root, commands, clock,
                             stderr, reexec, platform, debug)
    finally:
        os.close(lock_fd)


def _start_locked(exp, text, experiment_file, jobs, seed, state, simulate, root, commands, clock, stderr,
                  reexec, platform, debug) -> int:
    log = make_logger(state.log_path, stderr)
    root, commands, clock = root or SystemRoot("/"), commands or RealCommands(), clock or RealClock()
    mode = "simulated" if simulate else "hardware"
    if not simulate:
        # Before this experiment changes anything: undo what a dead one left, then say who is changing things.
        from supervisor.platforms.active_marker import replay_previous, write_marker
        replay_previous(root, commands, log, state.path)
        write_marker(root, state.path)
    state.write_experiment(text, Path(experiment_file), sys.argv, debug=debug)
    for vm_name, vm in exp.vms.items():
        if vm.instrument:
            log.warning("instrumentation is on: it perturbs the measurement; use these runs to explain "
                        "behaviour, not as results", vm=vm_name)
    platform = platform or build_platform(mode, exp, state.path, root=root, commands=commands, clock=clock,
                                          log=log)
    try:
        audit = json.loads(json.dumps(platform.audit(), default=str))
        audit["experiment_sha256"] = experiment_sha256(text)
        write_atomic(state.path / "audit.json", json.dumps(audit).encode())
        for report in platform.apply_and_verify():
            if not report.get("ok", True):
                log.warning("platform control not as wanted", **{k: str(v) for k, v in report.items()})
        baselines = platform.take_baselines()
    except ColdrunError as e:
        platform.restore()     # undo whatever was applied before the failure
        if not simulate:
            from supervisor.platforms.active_marker import clear_marker
            clear_marker(root, state.path, log)
        raise ColdrunError(f"{e} (nothing was started; settings restored)", e.exit_code)
    Schedule.create(state.schedule_path, render_new(
        jobs, experiment_sha256=experiment_sha256(text), mode=mode, order=exp.order, seed=seed,
        baselines=baselines))
    n_run = sum(1 for j in jobs if not j.skipped)
    log.info("experiment started", name=exp.name, jobs=n_run, skipped=len(jobs) - n_run, seed=seed,
             order=exp.order, state_dir=str(state.path), debug=debug)
    if simulate:
        log.info("simulated: would enable the boot service and reboot; re-executing instead")
        if reexec:
            from supervisor.boot.one_boot import reexec_resume
            reexec_resume(state.path)
        return 0
    from supervisor.platforms.boot_service import install_and_enable
    install_and_enable(state.path, root=root, commands=commands, log=log)
    schedule = state.schedule()
    _mailer(exp, schedule, commands, log).send(f"started {exp.name}", f"coldrun started {n_run} process executions "
                                f"(state dir {state.path}).", bypass_quota=True)
    platform.reboot()
    return 0


def summary_line(schedule: Schedule) -> str:
    c = schedule.counts()
    parts = [f"{c[k]} {k.replace('_', ' ')}" for k in ("completed", "errored", "timed_out", "crashed",
                                                          "skipped", "outstanding") if c[k]]
    return ", ".join(parts) or "no jobs"


def _wind_down(platform: Platform, ctx: "Boot", subject: str, body: str, *, ended: bool = True) -> None:
    """Restore settings, disable the boot service (hardware), mail.

    ``ended``: the experiment is over (finished, aborted), so the active-experiment
    marker goes once nothing is left to restore; a stopped one may continue and keeps it.
    """
    platform.restore()
    if ctx.schedule.mode == "hardware":
        from supervisor.platforms.boot_service import disable_and_remove
        disable_and_remove(ctx.state.path, root=ctx.root, commands=ctx.commands, log=ctx.log)
        if ended:
            from supervisor.platforms.active_marker import clear_marker
            clear_marker(ctx.root, ctx.state.path, ctx.log)
        _mailer(ctx.exp, ctx.schedule, ctx.commands, ctx.log).send(subject, body, bypass_quota=True)
    else:
        ctx.log.info("simulated: would disable the boot service and mail", subject=subject)


def finish(platform: Platform, ctx: "Boot") -> int:
    line = summary_line(ctx.schedule)
    _wind_down(platform, ctx, f"finished {ctx.exp.name}", f"coldrun finished: {line}. Results: coldrun "
               f"export {ctx.state.path} --format krun -o results.json.bz2")
    ctx.schedule.set_status("finished")
    ctx.log.info("experiment finished", summary=line)
    return 0


def stop(platform: Platform, ctx: "Boot", reason: str) -> int:
    """A fatal condition: record why, wind down, and refuse to continue until told to."""
    write_atomic(ctx.state.stop_reason_path, (reason + "\n").encode())
    ctx.schedule.set_status("stopped")
    ctx.log.error("experiment stopped", reason=reason)
    _wind_down(platform, ctx, f"stopped {ctx.exp.name}", f"coldrun stopped the experiment: {reason}",
               ended=False)
    return EXIT_STOPPED


def abort(state_dir: str, *, root: SystemRoot | None = None, commands: Commands | None = None,
          clock: Clock | None = None, stderr=sys.stderr, wait_seconds: float = 30.0) -> int:
    """Stop a running or idle experiment for good: settle jobs, restore, disable, mail."""
    import signal
    import time
    from supervisor.state.statedir import AlreadyRunning
    state = StateDir(state_dir)
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
                                       f"{wait_seconds:.0f}s; stop it and run coldrun abort again")
                time.sleep(0.1)
    try:
        return _abort_locked(state, root, commands, clock, stderr)
    finally:
        os.close(lock_fd)


def _abort_locked(state: StateDir, root, commands, clock, stderr) -> int:
    from supervisor.boot.context import Boot
    from supervisor.boot.reconcile import reconcile
    schedule = state.schedule()
    if schedule.status == "aborted":
        raise ColdrunError(f"{state.path}: experiment was already aborted")
    if schedule.status == "finished":
        stderr.write(f"coldrun: {state.path}: experiment already finished; nothing to abort\n")
        return 0
    exp, _ = state.experiment(schedule, check_source=False)
    log = make_logger(state.log_path, stderr)
    ctx = Boot(state, schedule, exp, log, root or SystemRoot("/"), commands or RealCommands(),
               clock or RealClock())
    reconcile(state, schedule, exp, log)
    platform = build_platform(schedule.mode, exp, state.path, root=ctx.root, commands=ctx.commands,
                              clock=ctx.clock, log=log)
    _wind_down(platform, ctx, f"aborted {exp.name}", f"coldrun experiment aborted: {summary_line(schedule)}")
    schedule.set_status("aborted")
    log.info("experiment aborted", summary=summary_line(schedule))
    return 0


def continue_stopped(state_dir: str, *, root: SystemRoot | None = None, commands: Commands | None = None,
                     stderr=sys.stderr) -> None:
    """Let a stopped experiment run again (after the cause was fixed); re-enables the boot service."""
    state = StateDir(state_dir)
    state.schedule()
    lock_fd = state.lock()
    try:
        schedule = state.schedule()
        if schedule.status != "stopped":
            raise ColdrunError(f"{state.path}: --continue is for stopped experiments; this one is "
                               f"{schedule.status}")
        log = make_logger(state.log_path, stderr)
        if schedule.mode == "hardware":
            from supervisor.platforms.active_marker import claim_for_continue
            from supervisor.platforms.boot_service import install_and_enable
            claim_for_continue(root or SystemRoot("/"), state.path)
            install_and_enable(state.path, root=root or SystemRoot("/"), commands=commands or RealCommands(),
                               log=log)
        # The reboot-loop guard counts afresh from here.
        schedule.set_boots(schedule.total_attempts())
        schedule.set_status("running")
        log.info("continuing a stopped experiment", reason_was=state.stop_reason())
    finally:
        os.close(lock_fd)
