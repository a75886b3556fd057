"""Errors and warnings a user can cause in the analysis.

Every message names the file (and where useful the benchmark key, process
execution and field) and says what to do; the CLI prints it on one line and
exits non-zero, never with a traceback.
"""

from __future__ import annotations

import sys
from typing import Callable


class AnalysisError(ValueError):
    """Fatal for the command: bad file, bad option. ``exit_code`` is 2.

    A ValueError so callers that guard library calls with ValueError see it.
    """

    exit_code = 2


# Where non-fatal problems go (one line each). The CLI keeps the default
# (stderr); tests and library users can collect them instead.
WarningSink = Callable[[str], None]


def one_line(message: str) -> str:
    """``message`` with every character that would break or hide its line (newlines, other controls,
    a benchmark key's stray separator) written as its Python escape."""
    if message.isprintable():
        return message
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)


def stderr_warning(message: str) -> None:
    print(f"coldrun-analyze: warning: {one_line(message)}", file=sys.stderr)


def warning_for(source: object) -> WarningSink:
    """stderr_warning with each message naming ``source`` (the input it is about) first."""
    return lambda message: stderr_warning(f"{source}: {message}")
