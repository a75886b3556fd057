"""A small progress bar on stderr for long analyses (no dependencies)."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


class Progress:
    """``with Progress("annotate", total) as bar: bar.advance(n)``.

    Redraws at most ten times a second, and only on a terminal unless
    ``force`` is set (so logs and CI output stay clean).
    """

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, force: bool = False,
                 detail: Callable[[], tuple[float, str]] | None = None):
        """``detail()``: work done inside the tasks still running (in the units of ``total``) and a line
        about it, for tasks long enough that the bar would otherwise stand still (analysis.key_progress)."""
        self.label = label
        self.detail = detail
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

    def tick(self) -> None:
        """Redraw (the running tasks moved on)."""
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        width = 30
        partial, line = self.detail() if self.detail is not None and self.done < self.total else (0.0, "")
        frac = min((self.done + partial) / self.total, 1.0) if self.total else 1.0
        bar = "#" * int(frac * width)
        elapsed = now - self._start
        self.stream.write(f"\r{self.label}: [{bar:<{width}}] {self.done}/{self.total} {elapsed:5.1f}s"
                          + (f" {line}\033[K" if line else "\033[K"))
        self.stream.flush()

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
