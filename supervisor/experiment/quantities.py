"""Durations and sizes as people write them: "3min", "90s", "1h", "2GiB", "512MiB"."""

from __future__ import annotations

import re

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

_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*")


def parse_duration(value: object) -> float:
    """Seconds from a number (seconds) or a string like "1h30min", "90s", "0"."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string like \"90s\", \"3min\", \"1h\"")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("a duration cannot be negative")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("a duration is a number of seconds or a string like \"90s\", \"3min\", \"1h\"")
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
            return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
        raise ValueError(f"cannot read size {value!r}: write e.g. \"2GiB\", \"512MiB\", \"8MiB\"")
    raise ValueError("a size needs a unit: write e.g. \"2GiB\" or \"512MiB\"")


def format_duration(seconds: float) -> str:
    """Short human form for logs and ETAs: "1h02m", "3m05s", "4.2s"."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"
