"""Fast JSON reading/writing (orjson when installed, json otherwise) and the bzip2 output.

Every check runs twice: with orjson, and with it hidden (the fallback a
platform without orjson uses); both must mean what json means."""

from __future__ import annotations

import bz2
import json
import math
import random
import threading

import pytest

from analysis import json_text, output
from analysis.errors import AnalysisError
from analysis.inputs import read_document


@pytest.fixture(params=["orjson", "json only"])
def engine(request, monkeypatch):
    if request.param == "orjson":
        if json_text.orjson is None:
            pytest.fail("orjson is not installed: scripts/setup installs the analysis extra, which has it")
    else:
        monkeypatch.setattr(json_text, "orjson", None)
    return request.param


def _documents() -> list:
    rng = random.Random(7)
    times = [rng.uniform(0.001, 3.0) for _ in range(500)] + [1e-05, 1e16, 5e-324]
    annotated_like = {
        "wallclock_times": {"b:vm:default-c": [times, [], [1.5, 2]]},
        "all_outliers": {"b:vm:default-c": [[3, 17], [], []]},
        "classifications": {"b:vm:default-c": ["warmup", None, "flat"]},
        "classifier": {"delta": "0.001", "steady": 500},
        "window_size": 200,
        "audit": {"uname": "Linux m\u00e4chine 6.1 \"quoted\"\n"},
    }
    odd = {"nan": [float("nan"), 1.0], "inf": [float("inf"), -float("inf")], "mixed": [1, 2.0, True, None, "s"],
           "tuple": (1, 2), "bools": [True, False], "nested": [[[]], [{}]], "ints": [1, -2, 10**30],
           "deep": {"x": [[0.5, float("nan")]]}, "surrogate": "\ud800", "huge": [1e308, 1e308]}
    keys = {5: 1, 2.5: "x", None: [], True: {}}
    return [annotated_like, odd, keys, {}, [], [[]], "text", 3, 1.25, None]


def _same(a, b) -> bool:
    """Equal, with NaN equal to NaN (json's NaN round-trips as NaN)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("doc", _documents())
def test_dumps_reads_back_as_json_dumps_would(doc, engine):
    text = json_text.dumps(doc)
    assert _same(json.loads(text), json.loads(json.dumps(doc)))
    assert b"\n" not in text  # compact


def test_non_finite_floats_stay_nan_and_infinity(engine):
    text = json_text.dumps({"x": [[1.0, float("nan")], [float("inf")]], "y": -float("inf")})
    back = json.loads(text)
    assert math.isnan(back["x"][0][1]) and back["x"][1] == [math.inf] and back["y"] == -math.inf
    assert b"null" not in text


@pytest.mark.parametrize("raw", [b'{"a": [1.5, 2, null, "\\u00e4"]}', b'[NaN, Infinity, -Infinity]',
                                 b'[123456789012345678901234567890]', b'"\\ud800"', b'{"a": 1, "a": 2}',
                                 '{"x": 1}'.encode("utf-16")])
def test_loads_means_json_loads(raw, engine):
    assert _same(json_text.loads(raw), json.loads(raw))


@pytest.mark.parametrize("raw", [b"{", b"[1,]", b"\xff\xfe\x00"])
def test_loads_fails_as_json_loads_does(raw, engine):
    with pytest.raises(ValueError) as ours:
        json_text.loads(raw)
    with pytest.raises(ValueError) as theirs:
        json.loads(raw)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_object_chunks_make_one_object_in_two_parts(engine):
    doc = _documents()[0]
    items = list(doc.items())
    text = b"".join([*json_text.object_chunks(items[:2], close=False),
                     *json_text.object_chunks(items[2:], opened=True)])
    assert _same(json.loads(text), doc)
    assert list(json.loads(text)) == list(doc)  # key order kept
    assert len(list(json_text.object_chunks(items))) > len(items)  # dict values come entry by entry
    assert json.loads(b"".join(json_text.object_chunks([]))) == {}


def test_dumps_refuses_what_json_refuses(engine):
    with pytest.raises(TypeError):
        json_text.dumps({"x": object()})
    with pytest.raises(TypeError):
        json_text.dumps({(1, 2): 1})


def test_bz2_output_is_one_stream_of_the_chunks(tmp_path, engine):
    doc = _documents()[0]
    path = tmp_path / "out.json.bz2"
    output.write_output(path, json_text.object_chunks(doc.items()))
    data = path.read_bytes()
    decompressor = bz2.BZ2Decompressor()
    assert _same(json.loads(decompressor.decompress(data)), doc)
    assert decompressor.eof and decompressor.unused_data == b""  # a single stream (Python 2's bz2 reads only one)
    assert not (tmp_path / "out.json.bz2.tmp").exists()
    assert _same(read_document(path), doc)


def test_failed_chunks_leave_no_file(tmp_path):
    def chunks():
        yield "partial"
        raise TypeError("not serialisable")

    path = tmp_path / "out.json.bz2"
    with pytest.raises(TypeError):
        output.write_output(path, chunks())
    assert list(tmp_path.iterdir()) == []


def test_unwritable_output_is_one_clear_error(tmp_path):
    with pytest.raises(AnalysisError, match="cannot write"):
        output.write_output(tmp_path / "missing-dir" / "out.json.bz2", json_text.object_chunks([("a", 1)]))


def test_streamed_write_writes_head_then_tail(tmp_path):
    path = tmp_path / "out.json.bz2"
    head_done = threading.Event()

    def head():
        yield b'{"a":1'
        head_done.set()

    writer = output.StreamedWrite(path, head())
    assert head_done.wait(10)
    assert not path.exists()  # in place only once whole
    writer.finish([b',"b":2}'])
    assert json.loads(bz2.decompress(path.read_bytes())) == {"a": 1, "b": 2}


def test_abandoned_streamed_write_leaves_nothing(tmp_path):
    writer = output.StreamedWrite(tmp_path / "out.json.bz2", [b'{"a":1'])
    writer.abandon(KeyboardInterrupt())
    assert list(tmp_path.iterdir()) == []


def test_streamed_write_error_is_raised_by_finish(tmp_path):
    writer = output.StreamedWrite(tmp_path / "missing-dir" / "out.json", [b"{"])
    with pytest.raises(AnalysisError, match="cannot write"):
        writer.finish([b"}"])


@pytest.mark.parametrize("depth", [1, 3, 10])
def test_loads_refuses_nesting_beyond_max_depth(depth, engine):
    within = ("[" * depth + "1.5" + "]" * depth).encode()
    assert json_text.loads(within, max_depth=depth) == json.loads(within)
    deeper = ('{"a":' + "[" * depth + "[]" + "]" * depth + "}").encode()
    with pytest.raises(json_text.TooDeep):
        json_text.loads(deeper, max_depth=depth)
    assert json_text.loads(deeper) == json.loads(deeper)  # no limit unless asked
