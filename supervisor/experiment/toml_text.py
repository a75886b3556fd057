"""Writing TOML text with comments (tomllib only reads; tomli-w writes no comments).

Only what an experiment file holds: strings, integers, finite floats, booleans,
arrays and inline tables of those, under ``[dotted.tables]``.  Strings are
basic strings with every control character escaped, so any text (newlines,
quotes, backslashes, NUL is refused by the model later) reads back as written;
keys are bare when TOML allows it, else quoted the same way.  Round trips are
tested against tomllib with generated values.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else string(k)


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r} cannot be written to an experiment file")
        return repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write a {type(v).__name__} as TOML")


def comment(text: str) -> str:
    """One comment line: a newline inside must not end the comment and start TOML."""
    flat = " ".join(text.split())
    return "# " + "".join(ch if ch.isprintable() else "?" for ch in flat)


@dataclass
class Entry:
    key: str
    value: Any
    note: str = ""          # written as a comment at the end of the line


@dataclass
class Table:
    path: tuple[str, ...]                   # () for the top level
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)      # comment lines above the header

    def add(self, k: str, v: Any, note: str = "") -> None:
        self.entries.append(Entry(k, v, note))


def render(header: list[str], tables: list[Table]) -> str:
    """The document: header comments, then each table (the top level first)."""
    lines = [comment(h) if h else "#" for h in header]
    for t in sorted(tables, key=lambda t: bool(t.path)):   # top-level keys must precede every [table]
        if lines:
            lines.append("")
        lines += [comment(n) for n in t.notes]
        if t.path:
            lines.append("[" + ".".join(key(p) for p in t.path) + "]")
        for e in t.entries:
            line = f"{key(e.key)} = {value(e.value)}"
            lines.append(f"{line}   {comment(e.note)}" if e.note else line)
    return "\n".join(lines) + "\n"
