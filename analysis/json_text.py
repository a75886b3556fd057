"""``json.dumps(doc, indent=4)``'s exact text, produced in chunks and fast.

With ``indent`` set, the standard library encodes in pure Python, one
generator step per value: for paper-scale annotated results (7.3 million
iteration times) that alone takes seconds. Results are mostly long lists of
plain floats or ints, so each such list is joined at C speed here
(``float.__repr__``, as json uses); anything else goes the general way with
json's own rules (``NaN``/``Infinity``, ASCII-escaped strings, non-string
keys as json converts them, tuples as lists). Output is byte-identical to
``json.dumps(doc, indent=4)``; tests/analysis compare the two.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator

_escape = json.encoder.encode_basestring_ascii  # json's own (C) string encoder
CHUNK_CHARS = 1 << 20  # yield roughly this much text at a time


def _float_text(value: float) -> str:
    if math.isfinite(value):
        return float.__repr__(value)
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _scalar_text(value: Any) -> str | None:
    """json's text of a non-container value, None for containers."""
    if isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, (list, tuple, dict)):
        return None
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key_text(key: Any) -> str:
    """json's conversion of a dict key (skipkeys=False)."""
    if isinstance(key, str):
        return _escape(key)
    if isinstance(key, float):
        return _escape(_float_text(key))
    if key is True or key is False or key is None:
        return _escape({True: "true", False: "false", None: "null"}[key])
    if isinstance(key, int):
        return _escape(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _flat_list_text(values: list | tuple, inner: str, outer: str) -> str | None:
    """A list of plain finite floats or plain ints in one join, else None."""
    kinds = set(map(type, values))
    if kinds == {float}:
        if not all(map(math.isfinite, values)):
            return None
        text = inner.join(map(float.__repr__, values))
    elif kinds == {int}:
        text = inner.join(map(int.__repr__, values))
    else:
        return None
    return "[" + inner[1:] + text + outer + "]"


def _pieces(value: Any, level: int, indent: str) -> Iterator[str]:
    scalar = _scalar_text(value)
    if scalar is not None:
        yield scalar
        return
    if not value:
        yield "{}" if isinstance(value, dict) else "[]"
        return
    inner = "\n" + indent * (level + 1)
    outer = "\n" + indent * level
    if isinstance(value, dict):
        yield "{" + inner
        first = True
        for key, item in value.items():
            if not first:
                yield "," + inner
            first = False
            yield _key_text(key) + ": "
            yield from _pieces(item, level + 1, indent)
        yield outer + "}"
        return
    flat = _flat_list_text(value, "," + inner, outer)
    if flat is not None:
        yield flat
        return
    yield "[" + inner
    for i, item in enumerate(value):
        if i:
            yield "," + inner
        yield from _pieces(item, level + 1, indent)
    yield outer + "]"


def indented_chunks(doc: Any, indent: int = 4) -> Iterator[str]:
    """The text of ``json.dumps(doc, indent=indent)`` in chunks of about CHUNK_CHARS."""
    buffer: list[str] = []
    size = 0
    for piece in _pieces(doc, 0, " " * indent):
        buffer.append(piece)
        size += len(piece)
        if size >= CHUNK_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)
