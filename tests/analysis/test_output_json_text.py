"""The chunked indented JSON writer and the bzip2 output: same text as json.dumps, one bzip2 stream."""

from __future__ import annotations

import bz2
import json
import random

import pytest

from analysis import json_text, output
from analysis.errors import AnalysisError


def _documents() -> list:
    rng = random.Random(7)
    times = [rng.uniform(0.001, 3.0) for _ in range(500)]
    annotated_like = {
        "wallclock_times": {"b:vm:default-c": [times, [], [1.5, 2]]},
        "all_outliers": {"b:vm:default-c": [[3, 17], [], []]},
        "classifications": {"b:vm:default-c": ["warmup", None, "flat"]},
        "classifier": {"delta": "0.001", "steady": 500},
        "window_size": 200,
        "audit": {"uname": "Linux m\u00e4chine 6.1 \"quoted\"\n"},
    }
    odd = {"nan": [float("nan"), 1.0], "inf": [float("inf"), -float("inf")], "mixed": [1, 2.0, True, None, "s"],
           "tuple": (1, 2), 5: 1, 2.5: "x", None: [], True: {}, "bools": [True, False], "nested": [[[]], [{}]],
           "ints": [1, -2, 10**30]}
    return [annotated_like, odd, {}, [], [[]], "text", 3, 1.25, None]


@pytest.mark.parametrize("doc", _documents())
def test_indented_chunks_equal_json_dumps(doc, monkeypatch):
    monkeypatch.setattr(json_text, "CHUNK_CHARS", 64)  # many chunk boundaries
    chunks = list(json_text.indented_chunks(doc))
    assert "".join(chunks) == json.dumps(doc, indent=4)
    if len(json.dumps(doc, indent=4)) > 200:
        assert len(chunks) > 1


def test_indented_chunks_refuse_what_json_refuses():
    with pytest.raises(TypeError):
        "".join(json_text.indented_chunks({"x": object()}))
    with pytest.raises(TypeError):
        "".join(json_text.indented_chunks({(1, 2): 1}))


def test_bz2_output_is_one_stream_of_the_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(json_text, "CHUNK_CHARS", 1000)
    doc = _documents()[0]
    path = tmp_path / "out.json.bz2"
    output.write_output(path, json_text.indented_chunks(doc))
    data = path.read_bytes()
    decompressor = bz2.BZ2Decompressor()
    assert decompressor.decompress(data).decode() == json.dumps(doc, indent=4)
    assert decompressor.eof and decompressor.unused_data == b""  # a single stream (Python 2's bz2 reads only one)
    assert not (tmp_path / "out.json.bz2.tmp").exists()


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
        output.write_output(tmp_path / "missing-dir" / "out.json.bz2", json_text.indented_chunks({"a": 1}))
