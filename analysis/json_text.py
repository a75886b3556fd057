"""Reading and writing big JSON documents fast, with the standard library's meaning.

Paper-scale results hold 7.3 million iteration times; the standard library
takes about 2.3 s to parse them and as long to write them, orjson about a
quarter and a tenth of that. orjson is used when it is installed and gives
what ``json`` would:

- reading: orjson refuses what is not strict JSON (``NaN``, lone surrogates,
  UTF-16 text, nesting deeper than 1024), so on any refusal the text is parsed
  again by ``json.loads``, which accepts those or raises its own error; and it
  reads an integer beyond 64 bits as a float, so a parsed float that big
  (which Python would have written as ``1.8e+19``, which orjson reads the same)
  also sends the text to ``json.loads``;
- writing: orjson writes ``NaN``/``Infinity`` as ``null`` and refuses float
  subclasses, big integers and non-string keys, so a value holding any of
  those is written by ``json.dumps`` instead (``NaN`` stays ``NaN``, as Python
  writes it).

Written text is compact (no indentation): warmup_stats wrote ``indent=4``, but
readers parse it either way, and the indented text is 2.5 times longer, which
bzip2 pays for (issue 15: 211 MB against 85 MB for paper-scale annotated results).
Float text may differ from ``json.dumps``' (``1e-05`` vs ``1e-5``); the values are the same.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Iterable, Iterator

try:
    import orjson
except ImportError:  # an optional speed-up: without it the standard library does all
    orjson = None  # type: ignore[assignment]  # the module or None: every use checks for None

_PLAIN_SCALARS = frozenset({int, bool, type(None), str})
_INT64_BOUND = 2.0**63  # orjson reads integers beyond (u)int64 as floats


class TooDeep(ValueError):
    """The document nests containers deeper than the reader allows."""


def loads(raw: bytes, max_depth: int | None = None) -> Any:
    """``json.loads(raw)``: the same value, or the same error.

    With ``max_depth``, :class:`TooDeep` when a container is nested deeper
    (the top level is depth 1); the same walk checks what orjson's result needs."""
    if orjson is not None:
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # not strict JSON (or not JSON): the standard library decides
        else:
            if _all_floats(doc, lambda v: -_INT64_BOUND < v < _INT64_BOUND,
                           lambda vs: -_INT64_BOUND < min(vs) and max(vs) < _INT64_BOUND, max_depth):
                return doc
    doc = json.loads(raw)
    if max_depth is not None:
        _all_floats(doc, lambda v: True, lambda vs: True, max_depth)
    return doc


def dumps(value: Any) -> bytes:
    """Compact JSON of ``value`` that ``json.loads`` reads back as ``json.dumps``' would."""
    if orjson is not None and _all_floats(value, math.isfinite, lambda vs: math.isfinite(sum(vs))):
        try:
            return orjson.dumps(value)
        except TypeError:  # a float subclass, an int beyond 64 bits, a non-string key, a surrogate
            pass
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _all_floats(doc: Any, each: Callable[[float], bool], whole: Callable[[Iterable[float]], bool],
                max_depth: int | None = None) -> bool:
    """True when every float in ``doc`` passes ``each``; a list of only plain floats (the bulk
    of results) is checked at C speed by ``whole`` instead (which may refuse more than ``each``
    would: that only costs the slow path).  Writing asks for finite floats (orjson would write
    ``null``), reading for floats that cannot have been a big integer.  With ``max_depth``,
    raises :class:`TooDeep` on a container nested deeper (one walk for both: it is seconds' worth
    on paper-scale results)."""
    limit = max_depth if max_depth is not None else math.inf
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, (list, tuple)):
            children = value
        else:
            if isinstance(value, float) and not each(value):
                return False
            continue
        if depth > limit:
            raise TooDeep(f"containers nested deeper than {max_depth} levels")
        kinds = set(map(type, children))
        if kinds == {float}:
            if not whole(children):
                return False
        elif kinds <= _PLAIN_SCALARS:
            continue
        else:
            stack.extend((child, depth + 1) for child in children)
    return True


def object_chunks(items: Iterable[tuple[str, Any]], *, opened: bool = False, close: bool = True) -> Iterator[bytes]:
    """The text of a JSON object with ``items``, one chunk per key (per entry, for dict values).

    ``close=False`` leaves the object open; a later call with ``opened=True``
    (for an object already holding at least one item) adds more and closes it."""
    prefix = b"," if opened else b"{"
    for key, value in items:
        yield prefix + dumps(key) + b":"
        prefix = b","
        if isinstance(value, dict) and value and all(type(k) is str for k in value):
            inner = b"{"
            for k, v in value.items():
                yield inner + dumps(k) + b":" + dumps(v)
                inner = b","
            yield b"}"
        else:
            yield dumps(value)
    if prefix == b"{":
        yield b"{"
    if close:
        yield b"}"
