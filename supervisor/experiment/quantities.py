"""Durations and sizes as people write them: "3min", "90s", "1h", "2GiB", "512MiB"."""

from __future__ import annotations

import math
import re
from decimal import Decimal

_DURATION_UNITS = {
    "ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}

_SIZE_UNITS = {
    "b": 1, "kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "tib": 1024 ** 4,
    "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4,
    "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3,   # ulimit-style shorthands are binary
}

# A wait or timeout of more than 30 days is a typo, and far larger ones
# overflow the operating system's timers.
MAX_DURATION = 30 * 86400.0
# Larger than any machine's memory and than a resource limit can hold (rlim_t).
MAX_SIZE = 1 << 60

_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*")


def parse_duration(value: object) -> float:
    """Seconds from a number (seconds) or a string like "1h30min", "90s", "0"; finite, 0 to 30 days."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string like \"90s\", \"3min\", \"1h\"")
    if isinstance(value, int) and value > MAX_DURATION:   # before float(): 10**400 overflows it
        seconds = math.inf
    elif isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = _duration_text(value)
    else:
        raise ValueError("a duration is a number of seconds or a string like \"90s\", \"3min\", \"1h\"")
    if math.isnan(seconds):
        raise ValueError("a duration must be a number of seconds, not nan")
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    if seconds > MAX_DURATION:
        raise ValueError("a duration is at most 30 days (\"30d\")")
    return seconds


def _duration_text(value: str) -> float:
    text = value.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    pos, total = 0, 0.0
    while pos < len(text):
        m = _PART.match(text, pos)
        if not m or m.group(2).lower() not in _DURATION_UNITS:
            raise ValueError(f"cannot read duration {value!r}: write e.g. \"90s\", \"3min\", \"1h\", \"500ms\"")
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2).lower()]
        pos = m.end()
    if pos == 0:
        raise ValueError(f"cannot read duration {value!r}: write e.g. \"90s\", \"3min\", \"1h\"")
    return total


def parse_size(value: object) -> int:
    """Bytes from a string like "2GiB", "512MiB", "8M". Bare numbers are refused: units are required."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*", value)
        if m and m.group(2).lower() in _SIZE_UNITS:
            # Decimal, not float: "99999...9TiB" must give a number to compare, not inf.
            size = int(Decimal(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
            if size > MAX_SIZE:
                raise ValueError(f"size {value!r} is more than 1EiB; write e.g. \"2GiB\"")
            return size
        raise ValueError(f"cannot read size {value!r}: write e.g. \"2GiB\", \"512MiB\", \"8MiB\"")
    raise ValueError("a size needs a unit: write e.g. \"2GiB\" or \"512MiB\"")


def format_size(n: int) -> str:
    """Short binary form for messages: "64MiB", "1.5KiB", "0B"."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor:
            return f"{n / factor:g}{unit}"
    return f"{n}B"


def format_duration(seconds: float) -> str:
    """Short human form for logs and ETAs: "1h02m", "3m05s", "4.2s"."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"
