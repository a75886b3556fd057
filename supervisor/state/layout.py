"""The state dir's layout: every file and directory name in it, in one place.

    schedule          the schedule: fixed-width fields, grown only by durable appends (state.schedule)
    experiment.toml   the copy of the experiment that was started
    meta.json         where it came from, when, the argv, the debug setting
    audit.json        the platform audit taken at start, plus the experiment's hash
    key_files.json    digests of every key's benchmark, runner and interpreter files at start (boot.key_files)
    undo.json         the undo log in simulated mode and in state dirs of an earlier coldrun; in hardware mode it
                      lives on the machine (/var/lib/coldrun/experiments/, platforms/kept_state.py), where a lost
                      state dir leaves it
    lock              the single-instance lock (holder's pid)
    log               the structured log (JSON lines)
    runner.json       pid and start time of the runner in flight
    stop_reason       why a stopped experiment stopped
    home/             HOME of the runners in simulated mode
    benchmark_user    the name of the benchmark user coldrun created (it never touches one it did not)
    benchmark_next_uid  the lowest uid a later benchmark user may get (none is used twice in an experiment)
    empty-skel/       the empty skeleton for fresh benchmark users (hardware mode)
    executions/       one record per process execution attempt: job<index>-attempt<n>.json (-a/-b: a pair's sides)
    run_length.json   [stop] experiments: each key's latest run-length decision (state.run_length)
    screening.json    [screening] experiments: the design and every job's treatment, batch, replicate
    screening_switch.json   the job whose reboot-factor levels were last switched (one switch per attempt)

A file being written durably is a dot-prefixed ``.tmp`` beside its final name
(supervisor.durable); it never counts.
"""

from __future__ import annotations

import re

from contracts import state_dir

SCHEDULE = state_dir.SCHEDULE
EXPERIMENT = "experiment.toml"
META = "meta.json"
AUDIT = "audit.json"
KEY_FILES = "key_files.json"
UNDO = "undo.json"
LOCK = "lock"
LOG = "log"
RUNNER = "runner.json"
STOP_REASON = "stop_reason"
HOME = "home"
EMPTY_SKEL = "empty-skel"
BENCHMARK_USER = "benchmark_user"
BENCHMARK_NEXT_UID = "benchmark_next_uid"
EXECUTIONS = "executions"
RUN_LENGTH = "run_length.json"
SCREENING = "screening.json"
SCREENING_SWITCH = "screening_switch.json"
BOOT_BASELINES = "baselines.json"   # temperature baselines of the first boot (the platform's)

# Written before the schedule exists: a start that failed before it left only these.
BEFORE_SCHEDULE = frozenset({LOCK, LOG, EXPERIMENT, META, AUDIT, KEY_FILES, UNDO, HOME, EXECUTIONS, SCREENING})

RECORD_NAME = re.compile(r"job(\d{6})-attempt(\d{3})(?:-([ab]))?\.json")


def record_name(index: int, attempt: int, side: str = "") -> str:
    """The file name, inside executions/, of job ``index``'s record for ``attempt`` (a pair job: one per side)."""
    return f"job{index:06d}-attempt{attempt:03d}{'-' + side if side else ''}.json"
