"""Where each key's analysis stands, for the progress bar: written by the worker doing the key (a forked
process, or a thread of this one), read by the process drawing the bar.

One execution of a million iterations is one key of hours of changepoint search (PELT is quadratic); a bar
that moves only when a key ends shows nothing for all that time.  So each key has three int64 slots in an
anonymous shared mapping made before the workers fork (nothing is pickled): its phase, the execution it is
on, and the changepoint search's step, which the C search stores now and then (analysis._pelt).
"""

from __future__ import annotations

import mmap

import numpy as np

WAITING, OUTLIERS, CHANGEPOINTS, SUMMARY, DONE = range(5)
PHASE_NAMES = ("waiting", "outliers", "changepoints", "bootstrap", "done")

_current: "KeyProgressBar | None" = None


class KeyProgressBar:
    def __init__(self, keys: list[str], sizes: list[list[int]]):
        """``keys`` and, per key, its executions' iteration counts."""
        self.keys, self.sizes = keys, sizes
        self._map = mmap.mmap(-1, max(1, len(sizes)) * 3 * 8)   # shared and anonymous: forked workers write here
        self.slots = np.frombuffer(self._map, dtype=np.int64).reshape(-1, 3)

    def phase(self, key: int, phase: int, execution: int = 0) -> None:
        self.slots[key, 2] = 0
        self.slots[key, 1] = execution
        self.slots[key, 0] = phase

    def step_counter(self, key: int) -> np.ndarray:
        """A one-element int64 view the changepoint search stores its step into."""
        return self.slots[key, 2:3]

    def running(self) -> tuple[float, str]:
        """How many executions the keys in progress have done (the one searched for changepoints as its
        share of that quadratic work), and a line about the last of them."""
        done, line = 0.0, ""
        for key, (phase, execution, step) in enumerate(self.slots.tolist()):
            sizes = self.sizes[key]
            if phase in (WAITING, DONE) or not sizes:
                continue
            name = self.keys[key]
            n = sizes[execution] if execution < len(sizes) else 0
            if phase == CHANGEPOINTS and n:
                done += execution + 0.95 * min(step / n, 1.0) ** 2
                line = f"{name}: execution {execution + 1}/{len(sizes)}, changepoints at {step:,}/{n:,} iterations"
            elif phase == SUMMARY:
                done += 0.95 * len(sizes)
                line = f"{name}: bootstrap"
            else:
                done += execution
                line = f"{name}: execution {execution + 1}/{len(sizes)}, {PHASE_NAMES[phase]}"
        return done, line


def start(keys: list[str], sizes: list[list[int]]) -> KeyProgressBar:
    """The tracker the workers of this analysis write to (set before they fork)."""
    global _current
    _current = KeyProgressBar(keys, sizes)
    return _current


def stop() -> None:
    global _current
    _current = None


def current() -> KeyProgressBar | None:
    return _current
