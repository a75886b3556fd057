"""Crash-test hooks at named points of a boot.  Unset in normal use: one env lookup per point.

- COLDRUN_TEST_PAUSE_AT=<point>[@<boot>]: the supervisor SIGKILLs itself when
  it reaches that point (at the given boot number, or the first time when no
  boot is given), which is what a power cut there would look like to the
  state dir.  Tests use it to land kills exactly between a record write and a
  flag update, etc.
- COLDRUN_TEST_HOLD_AT=<point>[@<boot>]: the supervisor says so on stderr and
  sleeps there, so a real power cut (the VM test's qemu system_reset) lands
  inside a window that is otherwise a few fsyncs wide, such as an append.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PAUSE_ENV = "COLDRUN_TEST_PAUSE_AT"
HOLD_ENV = "COLDRUN_TEST_HOLD_AT"
HOLD_MESSAGE = "coldrun test hold at"
HOLD_SECONDS = 600
POINTS = (
    "after-boot-count",    # boots incremented, nothing reconciled
    "in-reconcile",        # after the first reconciliation change
    "after-claim",         # job marked running, runner not started
    "during-run",          # runner started and running
    "after-run",           # runner finished, record not written
    "between-pair-records",  # a pair job: side a's record written, side b's not
    "after-record",        # record written (a pair's both), flag not updated
    "after-flag",          # flag updated, not yet rebooted
    "before-finish",       # nothing outstanding, finish not done
    # [stop] run length (kinds/stop/decisions.py, state/schedule.py Schedule.append):
    "after-decision",      # a key's decision written to run_length.json, its next job not appended
    "append-intent",       # append_end announced, no job line written
    "append-half-written", # half of the new job lines written (a torn line)
    "append-written",      # new job lines written and fsynced, not committed
    "append-committed",    # count and digest committed
)


def _wanted(env: str, name: str, boot: int) -> bool:
    wanted = os.environ.get(env)
    if not wanted:
        return False
    point, _, at_boot = wanted.partition("@")
    return point == name and (not at_boot or int(at_boot) == boot)


def pause_point(name: str, boot: int) -> None:
    if _wanted(PAUSE_ENV, name, boot):
        os.kill(os.getpid(), signal.SIGKILL)
    if _wanted(HOLD_ENV, name, boot):
        print(f"{HOLD_MESSAGE} {name} (boot {boot}): cut the power now", file=sys.stderr, flush=True)
        time.sleep(HOLD_SECONDS)
