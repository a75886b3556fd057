"""bzip2 input: indexed_bzip2's parallel decoder when installed, bz2 otherwise.

Every check runs twice: with indexed_bzip2 (used here for any size), and with it
hidden (the fallback a platform without it uses); both must give exactly what
``bz2.decompress`` gives, bytes or error."""

from __future__ import annotations

import bz2
import json
import random

import pytest

from analysis import bzip2_input
from analysis.errors import AnalysisError
from analysis.inputs import read_document


@pytest.fixture(params=["indexed_bzip2", "bz2 only"])
def decoder(request, monkeypatch):
    if request.param == "indexed_bzip2":
        if bzip2_input.parallel_decoder() is None:
            pytest.fail("indexed_bzip2 is not installed: scripts/setup installs the analysis extra, which has it")
        monkeypatch.setattr(bzip2_input, "PARALLEL_FROM_BYTES", 0)
    else:
        monkeypatch.setattr(bzip2_input, "parallel_decoder", lambda: None)
    return request.param


def _text(values: int = 60_000) -> bytes:
    rng = random.Random(3)
    return json.dumps({"b:vm:default-c": [[rng.uniform(0.1, 2) for _ in range(values)]]}).encode()


def _outcome(data: bytes):
    try:
        return bz2.decompress(data)
    except (OSError, ValueError, EOFError) as exc:
        return type(exc), str(exc)


def _ours(data: bytes):
    try:
        return bzip2_input.decompress(data)
    except (OSError, ValueError, EOFError) as exc:
        return type(exc), str(exc)


def test_multi_block_data_decompresses_to_the_same_bytes(decoder):
    text = _text()
    data = bz2.compress(text, 1)  # 100 kB blocks: several, so the parallel decoder splits the work
    assert len(text) > 3 * 100_000
    assert bzip2_input.decompress(data) == text


def test_parallel_decoder_is_used_when_installed(decoder, monkeypatch):
    calls = []
    real = bzip2_input.bz2.decompress
    monkeypatch.setattr(bzip2_input.bz2, "decompress", lambda d: calls.append(d) or real(d))
    assert bzip2_input.decompress(bz2.compress(b"[1.5]")) == b"[1.5]"
    assert len(calls) == (0 if decoder == "indexed_bzip2" else 1)


def _cases() -> dict[str, bytes]:
    good = bz2.compress(_text(3000))
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x10
    bad_stream_crc = bytearray(good)   # the combined CRC ends 0-7 padding bits before the last byte's end
    bad_stream_crc[-2] ^= 0x01
    return {
        "two streams": good + bz2.compress(b" "),
        "trailing garbage": good + b"junk",
        "a cut second stream": good + b"BZh9",
        "truncated": good[:-40],
        "only a header": b"BZh9",
        "corrupt block": bytes(flipped),
        "corrupt stream CRC": bytes(bad_stream_crc),
        "corrupt stream CRC, two streams": bytes(bad_stream_crc) + bz2.compress(b" "),
        "empty stream": bz2.compress(b""),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_odd_data_means_what_bz2_says(name, decoder, capfd):
    data = _cases()[name]
    assert _ours(data) == _outcome(data)
    assert capfd.readouterr().err == ""  # no decoder chatter on stderr


def test_stream_crcs_are_checked_in_every_stream():
    one, two = bz2.compress(_text(3000), 1), bz2.compress(b"x" * 250_000, 1)
    with bzip2_input.parallel_decoder().IndexedBzip2File(__import__("io").BytesIO(one + two)) as fh:
        fh.read()
        offsets = list(fh.block_offsets())
    assert bzip2_input.stream_crcs_agree(one + two, offsets)
    second = bytearray(one + two)
    second[-2] ^= 0x04      # the second stream's combined CRC
    assert not bzip2_input.stream_crcs_agree(bytes(second), offsets)
    first = bytearray(one + two)
    first[len(one) - 2] ^= 0x04
    assert not bzip2_input.stream_crcs_agree(bytes(first), offsets)


def test_stream_end_is_found_at_every_padding():
    for size in range(1, 40):  # stream lengths in bits vary, so does the padding before the byte boundary
        data = bz2.compress(bytes(range(size)) * size)
        assert bzip2_input.ends_at_stream_end(data)
        assert not bzip2_input.ends_at_stream_end(data + b"\0")
        assert not bzip2_input.ends_at_stream_end(data[:-1])


def test_truncated_file_is_one_clear_error(tmp_path, decoder):
    path = tmp_path / "cut.json.bz2"
    path.write_bytes(bz2.compress(_text(3000))[:-40])
    with pytest.raises(AnalysisError, match="truncated"):
        read_document(path)
