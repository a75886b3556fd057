"""One boot of the supervisor (DESIGN.md "The life of an experiment", steps 1-10).

Each call of ``boot()`` runs at most one process execution, then calls
``platform.reboot()``: a real reboot on hardware, a re-execution of
``coldrun resume`` when simulated, so every process execution runs in a fresh
supervisor process.  The start/finish/stop/abort paths are in lifecycle.py.

Departures from DESIGN.md, on purpose: pre-commands run before the job is
claimed (a failing pre-command stops the experiment with the job still
outstanding), and post-checks run before the record is written, so the record
is written once, with its flags and its outcome, and is the only truth about
its attempt.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from supervisor.boot import interrupts
from supervisor.boot import key_files
from supervisor.boot.context import Boot
from supervisor.boot.key_files import single_keys
from supervisor.boot.crash_points import pause_point
from supervisor.boot.execution import Executed, JobRun
from supervisor.boot.kinds import kind_for
from supervisor.boot.lifecycle import finish, stop
from supervisor.boot.reconcile import reconcile
from supervisor.boot.user_commands import HookFailed, run_hooks
from supervisor.errors import ColdrunError, PlatformError
from supervisor.eventlog import make_logger
from supervisor.experiment.quantities import format_duration
from supervisor.launch.process import error_line, last_lines
from supervisor.platforms.audit import compare_audit
from supervisor.platforms.factory import Machine
from supervisor.state.outcome import exit_code
from supervisor.state.records import write_record
from supervisor.state.schedule import COMPLETED, RUNNING, JobLine, Schedule
from supervisor.state.statedir import StateDir
from supervisor.state import layout
from supervisor.state.verify import altered_line, verify_records

LOG_STDERR_CHARS = 1500  # whole last lines of a failed run's stderr in the log (a stack trace's end)


def boot(state_dir: str | Path, *, machine: Machine | None = None, stderr=sys.stderr,
         debug: bool | None = None) -> int:
    """Run one boot; returns the exit code when there is nothing more to do in this process.

    ``debug`` True/False changes the state dir's debug setting for this and later boots;
    None keeps it (re-executed and boot-service boots pass None).
    """
    state = StateDir(state_dir)
    if not state.exists():
        state.schedule()             # a clear error for a non-state dir before touching it
    lock_fd = state.lock()
    try:
        if debug is not None:
            state.set_debug(debug)
        return _boot_locked(state, machine or Machine(), stderr)
    finally:
        os.close(lock_fd)


def _boot_locked(state: StateDir, machine: Machine, stderr) -> int:
    began = time.monotonic()
    try:
        schedule = state.schedule()      # read under the lock
        exp, text = state.experiment(schedule, check_source=False)   # the copy, which matches the schedule
    except ColdrunError as e:
        raise _refuse_unreadable(state, machine, e) from None
    log = make_logger(state.log_path, stderr)
    if schedule.status == "finished":
        log.info("experiment already finished; nothing to do")
        return exit_code(schedule, len(kind_for(exp).short_of_target(state.path)))
    if schedule.status == "aborted":
        raise ColdrunError(f"{state.path}: experiment was aborted; start a new one")
    if schedule.status == "stopped":
        raise ColdrunError(f"{state.path}: experiment stopped: {state.stop_reason() or 'unknown reason'}; "
                           f"fix the cause and run coldrun resume --continue {state.path}, "
                           f"or coldrun abort {state.path}")
    boot_no = schedule.boots + 1
    schedule.set_boots(boot_no)
    log = log.bind(boot=boot_no)
    ctx = Boot(state, schedule, exp, log, machine.platform(schedule.mode, exp, state.path, log), machine.seams,
               lambda: machine.cpus(schedule.mode, exp.platform), kind_for(exp))
    log.info("boot", state_dir=str(state.path), mode=schedule.mode, debug=state.debug())
    # From here every ending leaves the experiment running with this supervisor (a reboot next), finished, or
    # stopped with its reason, settings restored and mail sent: never "running" with nobody to run it.
    try:
        with interrupts.stopping_signals_raise():
            return _boot_steps(ctx, machine, text, began)
    except interrupts.Interrupted as e:
        return _stop_cut_short(ctx, f"the supervisor received {e.name}; the runner in flight was killed")
    except ColdrunError as e:
        return _stop_cut_short(ctx, str(e))
    except Exception as e:
        _stop_cut_short(ctx, f"supervisor error ({type(e).__name__}: {e}); please report it with the log")
        raise


def _refuse_unreadable(state: StateDir, machine: Machine, problem: ColdrunError) -> ColdrunError:
    """A boot that cannot read its schedule or experiment copy: no job can run, and the stop path needs the
    experiment (its mail, its platform).  What a hardware experiment can still do without one: restore the
    settings from the machine's copy of the undo log and remove the boot service, so the machine neither keeps
    its benchmark settings nor reboots into the damaged state dir for ever.  The error to raise, saying so."""
    log = make_logger(state.log_path, None)     # a log it cannot write never raises (eventlog._AppendLogger)
    with interrupts.stopping_signals_ignored():
        done, failures = machine.wind_down_unreadable(state.path, log)
    if failures:
        return ColdrunError(f"{problem}; {len(failures)} setting(s) could not be restored ({failures[0]}): "
                            f"restore them by hand; its boot service was removed")
    if done:
        return ColdrunError(f"{problem}; the settings it changed were restored and its boot service removed")
    return problem


def _stop_cut_short(ctx: Boot, reason: str) -> int:
    """A boot that cannot go on: settle a job it claimed as the next boot would (re-queued or crashed, per
    rerun.crashed), then the stop path."""
    with interrupts.stopping_signals_ignored():
        try:
            reconcile(ctx)
        except ColdrunError as e:     # e.g. what cut the boot short: the next boot after --continue tries again
            ctx.log.warning("could not settle the job in flight", problem=str(e))
        return stop(ctx, reason)


def _boot_steps(ctx: Boot, machine: Machine, text: bytes, began: float) -> int:
    state, schedule, exp, log = ctx.state, ctx.schedule, ctx.exp, ctx.log
    boot_no = schedule.boots
    pause_point("after-boot-count", boot_no)

    reconcile(ctx)
    edited = state.source_change(text)
    if edited:
        return stop(ctx, edited)
    altered = verify_records(state, schedule)   # never re-run or overwrite what the state dir says was done
    if altered:
        return stop(ctx, "state dir altered: " + altered_line(altered))

    # Reboot-loop guard: every boot claims a job, except the finishing one (counted since the last continue).
    base_boots, base_attempts = state.guard_base()
    boots, attempts = boot_no - base_boots, schedule.total_attempts() - base_attempts
    if boots - attempts - 1 > exp.rerun.max_unexplained_boots:
        return stop(ctx, f"reboot-loop guard: {boots} boots but only {attempts} job attempts"
                    f"{' since the experiment continued' if base_boots else ''} (more than "
                    f"rerun.max_unexplained_boots = {exp.rerun.max_unexplained_boots} boots claimed no job)")

    # [stop]: settle what a cut left undecided after the last execution (run_one decides right after it).
    settle_failed = ctx.kind.settle(ctx)
    if settle_failed:
        return stop(ctx, settle_failed)

    job = schedule.next_outstanding()
    if job is None:
        pause_point("before-finish", boot_no)
        return finish(ctx)
    run = ctx.kind.job_run(ctx, machine, job)
    if run.reboot_first:     # e.g. a screening level that needs a reboot was switched: boot into it first
        state.add_boot_seconds(time.monotonic() - began)
        ctx.platform.ensure_boot_service()
        ctx.platform.reboot()
        return 0

    try:
        with interrupts.sigterm_raises():
            rc = run_one(run, job)
    except interrupts.Terminated:
        log.warning("terminated by SIGTERM; the job in flight is settled at the next start")
        return 143
    if rc is not None:
        return rc
    ctx.kind.before_reboot(ctx, machine)
    state.add_boot_seconds(time.monotonic() - began)
    log.info("rebooting", **_progress(state, schedule))
    run.ctx.platform.ensure_boot_service()
    run.ctx.platform.reboot()
    return 0


def _progress(state: StateDir, schedule: Schedule) -> dict[str, str]:
    """done/total and a rough ETA: the boots' monotonic seconds so far / attempts so far x outstanding jobs.
    Never the wall clock, which may be set back or forward between boots; the reboots themselves (firmware,
    kernel) are not counted, so it errs short."""
    c = schedule.counts()
    total = len(schedule.jobs) - c["skipped"]
    done = total - c["outstanding"] - c["running"]
    out = {"done": f"{done}/{total}"}
    attempts = schedule.total_attempts()
    if attempts:
        out["eta"] = format_duration(state.boot_seconds() / attempts * c["outstanding"])
    return out


def _check_audit(ctx: Boot) -> str | None:
    """Compare the machine's audit with the one stored at start; a change stops the experiment."""
    path = ctx.state.path / layout.AUDIT
    try:
        start = json.loads(path.read_text())
    except (OSError, ValueError):
        return f"{path}: audit taken at start is missing or unreadable"
    now = json.loads(json.dumps(ctx.platform.audit(), default=str))   # same normalisation as at start
    now["experiment_sha256"] = ctx.schedule.experiment_sha256
    # The job's own platform policy: a screening job's reboot levels may change the kernel command line.
    diffs = compare_audit(start, now, list(ctx.platform.policy.audit_allow_changes))
    if diffs:
        return "machine changed since the experiment started: " + "; ".join(diffs)
    return None


def run_one(run: JobRun, job: JobLine) -> int | None:
    """Steps 4-9 for one job, as its kind runs it.  Returns an exit code to stop, or None to reboot."""
    ctx = run.ctx
    exp, schedule, log, state = ctx.exp, ctx.schedule, ctx.log, ctx.state
    try:
        for report in run.apply_and_verify():
            if not report.ok:
                log.warning("platform control not as wanted", **{k: str(v) for k, v in report.as_dict().items()})
        ctx = run.ctx      # the job's own (a screening job: without its control levels when they were refused)
        platform = ctx.platform
        platform.wait_until_ready(schedule.baselines)
    except PlatformError as e:
        return stop(ctx, f"platform check failed: {e}")
    changed = _check_audit(ctx)
    if changed:
        return stop(ctx, changed)
    try:
        run_hooks("pre-execution", exp.pre_execution, {"COLDRUN_STATE_DIR": str(state.path)}, log)
    except HookFailed as e:
        return stop(ctx, str(e))
    before = platform.snapshot()
    changed, files_part = _changed_files(ctx, job)
    if changed is not None:
        return stop(ctx, changed)
    before.update(files_part)

    attempt = job.attempts + 1
    schedule.set_job(job, RUNNING, attempt)
    log.info("claimed job", index=job.index, key=job.key, pexec=job.pexec, attempt=attempt)
    pause_point("after-claim", schedule.boots)

    ex = run.execute(job, attempt, before)
    outcome = ex.outcome
    pause_point("after-run", schedule.boots)
    for n, record in enumerate(ex.records):
        if n:     # a cut here leaves half a pair: reconciliation removes it and counts the attempt crashed
            pause_point("between-pair-records", schedule.boots)
        try:
            write_record(state.path, record)
        except OSError as e:   # e.g. a full disk: the boot stops the experiment, settling the claimed job
            raise ColdrunError(f"{state.path}: cannot write the execution record ({e.strerror}); free space or "
                               f"fix permissions, then coldrun resume --continue {state.path}") from None
    pause_point("after-record", schedule.boots)
    record = ex.records[0]
    schedule.set_job(job, outcome.flag)
    pause_point("after-flag", schedule.boots)
    level = log.info if outcome.completed else log.warning
    level("finished job", index=job.index, key=job.key, pexec=job.pexec, attempt=attempt,
          outcome=record.state, cause=outcome.cause, reason=outcome.reason,
          seconds=round(max(r.duration_seconds or 0.0 for r in ex.records), 3),
          stderr_tail=" | ".join(last_lines(r.stderr_tail or "", LOG_STDERR_CHARS)
                                 for r, own in zip(ex.records, ex.own) if not own.completed)
          if outcome.flag == "E" else None)
    try:
        run_hooks("post-execution", exp.post_execution,
                  {"COLDRUN_STATE_DIR": str(state.path), "COLDRUN_LOG_FILE": str(state.log_path),
                   "COLDRUN_JOB_KEY": job.key, "COLDRUN_JOB_STATE": record.state}, log)
    except HookFailed as e:
        return stop(ctx, str(e))
    if ex.exhausted:
        return stop(ctx, f"job {job.key} #{job.pexec} was disturbed ({', '.join(ex.disturbed)}) on all "
                                   f"{attempt} attempts (rerun.max_attempts); the machine keeps disturbing "
                                   f"runs, so the experiment stops instead of looping")
    cannot_launch = _launch_failure(ctx, job, ex)
    if cannot_launch:
        return stop(ctx, f"{job.key}: the runner cannot launch ({cannot_launch}); every execution of this key "
                         f"would fail the same way. Fix it, then coldrun resume --continue {state.path} (or set "
                         f"stop_on_launch_failure = false in the experiment file to record such failures and go on)")
    # [stop]: between executions, this key's records decide whether it gets another (the next boot does the
    # same first, to settle a cut here).
    settle_failed = ctx.kind.settle(ctx)
    if settle_failed:
        return stop(ctx, settle_failed)
    return None


def _changed_files(ctx: Boot, job: JobLine) -> tuple[str | None, dict]:
    """(the stop reason when the job's keys' files differ from start's digests and on_changed_files = "stop",
    what the record's platform_before says of them: each key's files digest, and with "flag" what changed)."""
    state, exp = ctx.state, ctx.exp
    lines: list[str] = []
    now: dict[str, str] = {}
    for key in single_keys([job.key]):
        changed, digest = key_files.changes(state.path, exp, state.experiment_dir(), str(state.experiment_path),
                                            key, str(state.home_path))
        lines += changed
        if digest:
            now[key] = digest
    part: dict = {"key_files_sha256": now} if now else {}
    if not lines:
        return None, part
    if exp.on_changed_files == "flag":
        ctx.log.warning("files changed since start; running and flagging the execution", key=job.key,
                        changed="; ".join(lines))
        return None, {**part, "changed_files": lines}
    n = key_files.SHOWN_CHANGES
    shown = "; ".join(lines[:n]) + (f"; and {len(lines) - n} more" if len(lines) > n else "")
    return (f"{job.key}: files changed since the experiment started ({shown}); its executions would measure "
            f"another program. Restore them and coldrun resume --continue {state.path}, or set "
            f"on_changed_files = \"flag\" to run on with such executions flagged (files_changed)"), part


def _launch_failure(ctx: Boot, job: JobLine, ex: Executed) -> str | None:
    """Why a key cannot even launch its runner, or None.

    Missing files and bad interpreters fail every execution of the key alike, so
    (with stop_on_launch_failure) the experiment stops instead of spending a
    reboot on each.  That holds after the key's first success too (a benchmarks
    disk unmounted mid-night): coldrun itself could not start the runner.  A
    runner's own setup failure (exit 2) after a success is the benchmark's, and
    is recorded like any other.
    """
    if not ctx.exp.stop_on_launch_failure or ex.outcome.flag != "E":
        return None
    launched_before = any(j.key == job.key and j.state == COMPLETED for j in ctx.schedule.jobs)
    for record, own in zip(ex.records, ex.own):    # a pair: either side's own failure
        if not own.cannot_launch or (launched_before and own.cause != "launch_failure"):
            continue
        if own.cause == "runner_setup":
            said = error_line(record.stderr_tail or "")
            reason = "runner exited with status 2 (usage/setup) before any iteration" + (f": {said}" if said else "")
        else:
            reason = own.reason or ""
        return reason if record.pair is None else f"side {record.pair.side} ({record.key}): {reason}"
    return None
