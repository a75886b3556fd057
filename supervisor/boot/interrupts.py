"""Signals that end a boot, turned into exceptions so the runner in flight is killed as the stack unwinds.

SIGTERM is the shutdown's and ``coldrun abort``'s: the boot ends and the job in
flight is settled by whoever comes next (the next boot, or abort itself).  Any
other signal whose default would kill the supervisor (SIGHUP from a closed
terminal, SIGINT, SIGQUIT, SIGUSR1/2 sent by mistake) has nobody coming next,
so the boot stops the experiment (one_boot.py): a supervisor that dies of it
would leave the runner running and the state dir saying "running" for ever.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator

from supervisor.launch.process import STOPPING_SIGNALS   # besides SIGTERM; SIGKILL is reconciliation's


class Terminated(BaseException):
    """SIGTERM (coldrun abort, shutdown): unwind so the runner's group is killed."""


class Interrupted(BaseException):
    """A stopping signal: unwind so the runner's group is killed, then stop the experiment."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.name = signal.Signals(signum).name


def _raise_terminated(signum, frame):
    raise Terminated()


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


@contextlib.contextmanager
def handling(signals: tuple[int, ...], handler) -> Iterator[None]:
    """``handler`` for ``signals`` inside the block, the old handlers after it."""
    old = {s: signal.signal(s, handler) for s in signals}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def stopping_signals_raise():
    return handling(STOPPING_SIGNALS, _raise_interrupted)


def sigterm_raises():
    return handling((signal.SIGTERM,), _raise_terminated)


def stopping_signals_ignored():
    """While the experiment is being stopped: a second signal must not cut the stop short."""
    return handling(STOPPING_SIGNALS, signal.SIG_IGN)
