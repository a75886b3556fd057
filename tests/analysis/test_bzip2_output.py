"""One bzip2 stream made of blocks compressed in threads (analysis.bzip2_output)."""

from __future__ import annotations

import bz2
import random

import pytest

from analysis import bzip2_input, output
from analysis.bzip2_output import ParallelCompressor, piece_size


def _one_stream(data: bytes) -> bytes:
    """The text of ``data``, which must be exactly one bzip2 stream (Python 2's bz2 reads no more)."""
    decompressor = bz2.BZ2Decompressor()
    text = decompressor.decompress(data)
    assert decompressor.eof and decompressor.unused_data == b""
    return text


def _compressed(text: bytes, level: int, feed: int, threads: int = 2) -> bytes:
    compressor = ParallelCompressor(level, threads)
    parts = [compressor.compress(text[i : i + feed]) for i in range(0, len(text), feed)]
    return b"".join(parts + [compressor.flush()])


def _texts() -> dict[str, bytes]:
    rng = random.Random(5)
    return {
        "nothing": b"",
        "one byte": b"x",
        "runs of four (the most bzip2's run-length step grows)": b"aaaabbbb" * 60_000,
        "long runs": b"a" * 500_000,
        "random bytes": bytes(rng.getrandbits(8) for _ in range(250_000)),
        "json-like": b",".join(str(rng.uniform(0, 3)).encode() for _ in range(60_000)),
    }


@pytest.mark.parametrize("name", list(_texts()))
@pytest.mark.parametrize("level", [1, 9])
def test_one_stream_with_the_same_text(name, level):
    text = _texts()[name]
    for feed in (7_919, 1 << 20):
        assert _one_stream(_compressed(text, level, feed)) == text


def test_a_piece_of_the_worst_bytes_is_one_block():
    """A piece that became two blocks would make the stream's combined CRC wrong: bz2 would refuse it."""
    text = b"aaaabbbb" * (piece_size(1) // 8 + 1)
    assert len(text) > piece_size(1)
    assert _one_stream(_compressed(text[: piece_size(1)], 1, piece_size(1), threads=1)) == text[: piece_size(1)]
    assert _one_stream(_compressed(text, 1, 1 << 20)) == text


def test_empty_stream_is_what_bz2_writes():
    assert _compressed(b"", 1, 1) == bz2.compress(b"", 1)


def test_written_bz2_files_are_one_stream(tmp_path, monkeypatch):
    text = b"".join(str(i).encode() + b"," for i in range(300_000))
    path = tmp_path / "out.json.bz2"
    output.write_output(path, (text[i : i + 50_000] for i in range(0, len(text), 50_000)))
    assert _one_stream(path.read_bytes()) == text
    monkeypatch.setattr(bzip2_input, "PARALLEL_FROM_BYTES", 0)  # our input side's parallel decoder reads it too
    assert bzip2_input.parallel_decoder() is not None, "indexed_bzip2 is in the analysis extra"
    # ... by itself: bz2's fallback (taken when indexed_bzip2 refuses the stream or its CRCs disagree) would
    # return the same text, so it must not be reached
    monkeypatch.setattr(bzip2_input.bz2, "decompress", lambda data: pytest.fail("fell back to bz2"))
    assert bzip2_input.decompress(path.read_bytes()) == text


def test_a_closed_compressor_drops_its_pieces_and_its_threads_end():
    import threading
    import time

    compressor = ParallelCompressor(1, threads=2)
    compressor.compress(bytes(range(256)) * 20_000)      # ~64 pieces queued behind 2 threads
    compressor.close()
    deadline = time.monotonic() + 30
    while any(t.name.startswith("bz2-block") for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(t.name.startswith("bz2-block") for t in threading.enumerate())
