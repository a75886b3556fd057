"""supervisor.experiment.toml_text: what it writes reads back through tomllib as the same values."""

from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supervisor.experiment import toml_text
from supervisor.experiment.toml_text import Table

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)   # TOML is UTF-8: no lone surrogates
scalars = st.one_of(text, st.booleans(), st.integers(-2 ** 63, 2 ** 63 - 1),
                    st.floats(allow_nan=False, allow_infinity=False))
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(text, scalars, max_size=3))
tables = st.dictionaries(st.tuples(text, text), st.dictionaries(text, values, max_size=4), max_size=3)


def same(a, b) -> bool:
    """Equal, with -0.0 == 0.0 told apart (TOML keeps the sign)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(top=st.dictionaries(text, values, max_size=5), nested=tables,
       notes=st.lists(text, max_size=3), header=st.lists(text, max_size=3))
def test_any_values_under_any_keys_read_back_unchanged(top, nested, notes, header):
    t = Table((), notes=notes)
    for k, v in top.items():
        t.add(k, v, note=k)       # a key is any text, so also any comment text
    others = []
    for path, entries in nested.items():
        if path[0] in top:
            continue             # a key cannot be both a value and a table
        table = Table(path, notes=notes)
        for k, v in entries.items():
            table.add(k, v, note=str(v))
        others.append(table)
    doc = tomllib.loads(toml_text.render(header, others + [t]))
    expected: dict = dict(top)
    for table in others:
        expected.setdefault(table.path[0], {})
        expected[table.path[0]].setdefault(table.path[1], {}).update({e.key: e.value for e in table.entries})
    assert same(doc, expected)


def test_keys_are_bare_only_when_toml_allows():
    assert toml_text.key("vms") == "vms" and toml_text.key("default-python") == "default-python"
    assert toml_text.key("pypy3.9") == '"pypy3.9"' and toml_text.key("") == '""'
    assert toml_text.key('a"b') == '"a\\"b"'


def test_a_comment_never_spills_onto_a_line_of_its_own():
    rendered = toml_text.render(["line one\nname = 'evil'"], [Table((), notes=["x\r\ny = 1"])])
    assert tomllib.loads(rendered) == {}
    assert all(line.startswith("#") or not line for line in rendered.splitlines())


def test_values_an_experiment_cannot_hold_are_refused():
    with pytest.raises(ValueError):
        toml_text.value(float("nan"))
    with pytest.raises(TypeError):
        toml_text.value(object())
