"""A small progress bar on stderr for long analyses (no dependencies)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress("annotate", total) as bar: bar.advance(n)``.

    Redraws at most ten times a second, and only on a terminal unless
    ``force`` is set (so logs and CI output stay clean).
    """

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, force: bool = False):
        self.label = label
        self.total = max(int(total), 0)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0
        self._start = time.monotonic()

    def __enter__(self) -> "Progress":
        self._draw(force=True)
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        width = 30
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(frac * width)
        elapsed = now - self._start
        self.stream.write(f"\r{self.label}: [{bar:<{width}}] {self.done}/{self.total} {elapsed:5.1f}s")
        self.stream.flush()

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
