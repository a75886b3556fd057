"""Crash-test hook: COLDRUN_TEST_PAUSE_AT=<point>[@<boot>] kills the supervisor at a named point.

The supervisor SIGKILLs itself when it reaches that point (at the given boot
number, or the first time when no boot is given), which is what a power cut
there would look like.  Tests use it to land kills exactly between a record
write and a flag update, etc.  Unset in normal use: one env lookup per point.
"""

from __future__ import annotations

import os
import signal

PAUSE_ENV = "COLDRUN_TEST_PAUSE_AT"
POINTS = (
    "after-boot-count",    # boots incremented, nothing reconciled
    "in-reconcile",        # after the first reconciliation change
    "after-claim",         # job marked running, runner not started
    "during-run",          # runner started and running
    "after-run",           # runner finished, record not written
    "after-record",        # record written, flag not updated
    "after-flag",          # flag updated, not yet rebooted
    "before-finish",       # nothing outstanding, finish not done
    # [stop] run length (boot/run_length.py, state/schedule.py Schedule.append):
    "after-decision",      # a key's decision written to run_length.json, its next job not appended
    "append-intent",       # append_end announced, no job line written
    "append-half-written", # half of the new job lines written (a torn line)
    "append-written",      # new job lines written and fsynced, not committed
    "append-committed",    # count and digest committed
)


def pause_point(name: str, boot: int) -> None:
    wanted = os.environ.get(PAUSE_ENV)
    if not wanted:
        return
    point, _, at_boot = wanted.partition("@")
    if point == name and (not at_boot or int(at_boot) == boot):
        os.kill(os.getpid(), signal.SIGKILL)
