"""bzip2 input decompressed on every CPU, with the standard library's meaning.

A paper-scale Krun results file is 28 MB of bzip2 holding 91 MB of JSON;
``bz2.decompress`` takes 2.5 s on one core. indexed_bzip2 decodes bzip2
blocks in parallel threads (and a little faster per core), so it is used
when installed and the data can mean nothing else than what ``bz2`` reads:

- only when the data ends exactly at a stream's end marker (what every
  bzip2 writer leaves); data with anything after it (garbage, which ``bz2``
  ignores, or a cut second stream, which it refuses) goes to ``bz2``;
- any error of indexed_bzip2 (truncated or corrupt data: it checks every
  block's CRC) sends the data to ``bz2``, which raises its own error, so
  callers see the same exceptions either way;
- decoding in parallel, indexed_bzip2 does not check a stream's combined CRC
  (the one after the end marker), which ``bz2`` does: ``stream_crcs_agree``
  folds the block CRCs stored in the data and compares, and a mismatch goes to
  ``bz2`` too.

Without indexed_bzip2 (OpenBSD has no wheel) ``bz2`` does all, and so it does
for data smaller than a few bzip2 blocks, where threads gain nothing (and a
small table need not import indexed_bzip2: 11 ms).
"""

from __future__ import annotations

import bz2
import io
from functools import cache
from types import ModuleType

from analysis.cpus import usable_cpus

# bzip2's end-of-stream marker (the bits of sqrt(pi)); it is followed by the
# 32-bit stream CRC and zero bits up to the next byte boundary.  Each block
# starts with its magic (the bits of pi), followed by the block's 32-bit CRC.
END_MARKER = 0x177245385090
BLOCK_MAGIC = 0x314159265359
MARKER_BITS = 48
CRC_BITS = 32
# Compressed size from which the parallel decoder is used: 3 blocks of bzip2's largest (level 9).
PARALLEL_FROM_BYTES = 3 * 900_000


def stream_end_padding(data: bytes) -> int:
    """How many zero padding bits follow the end-of-stream marker and CRC that end ``data``; -1 if they do not."""
    tail = int.from_bytes(data[-11:], "big")  # 7 + 32 + 48 bits fit in 11 bytes
    for padding in range(8):
        if tail & ((1 << padding) - 1):
            return -1  # padding bits are zero
        if (tail >> (padding + CRC_BITS)) & ((1 << MARKER_BITS) - 1) == END_MARKER:
            return padding if len(data) * 8 >= padding + CRC_BITS + MARKER_BITS else -1
    return -1


def ends_at_stream_end(data: bytes) -> bool:
    """True when ``data`` ends with an end-of-stream marker, its CRC and at most 7 zero padding bits."""
    return stream_end_padding(data) >= 0


def _bits(data: bytes, offset: int, count: int) -> int | None:
    """``count`` bits of ``data`` from bit ``offset`` (most significant first); None past the end."""
    first, skip = divmod(offset, 8)
    chunk = data[first : first + (skip + count + 7) // 8]
    if len(chunk) * 8 < skip + count:
        return None
    return (int.from_bytes(chunk, "big") >> (len(chunk) * 8 - skip - count)) & ((1 << count) - 1)


def combine_crc(combined: int, block_crc: int) -> int:
    """bzip2's stream CRC after one more block: the running value rotated left by one bit, xor the block's CRC."""
    return (((combined << 1) | (combined >> 31)) & 0xFFFFFFFF) ^ block_crc


def stream_crcs_agree(data: bytes, offsets: list[int]) -> bool:
    """Does each stream's stored combined CRC equal the fold of its blocks' stored CRCs?

    ``offsets``: the bit offsets of every block magic and end marker, as the
    decoder found them (the block CRCs themselves it has checked against the data)."""
    combined, streams = 0, 0
    for offset in sorted(offsets):
        marker = _bits(data, offset, MARKER_BITS)
        crc = _bits(data, offset + MARKER_BITS, CRC_BITS)
        if marker == BLOCK_MAGIC and crc is not None:
            combined = combine_crc(combined, crc)
        elif marker == END_MARKER and crc is not None:
            if crc != combined:
                return False
            combined, streams = 0, streams + 1
    return streams > 0


@cache
def parallel_decoder() -> ModuleType | None:
    """indexed_bzip2, or None when it is not installed."""
    try:
        import indexed_bzip2
    except ImportError:  # an optional speed-up
        return None
    return indexed_bzip2


def decompress(data: bytes) -> bytes:
    """``bz2.decompress(data)``: the same bytes, or the same error."""
    decoder = parallel_decoder() if len(data) >= PARALLEL_FROM_BYTES else None
    if decoder is not None and ends_at_stream_end(data):
        try:
            # Closed on every path: an open one aborts the interpreter at exit.
            with decoder.IndexedBzip2File(io.BytesIO(data), parallelization=usable_cpus()) as fh:
                text = fh.read()
                offsets = list(fh.block_offsets())
            if stream_crcs_agree(data, offsets):
                return text
        except Exception:  # noqa: BLE001  (any failure: bz2 decides, and names the problem)
            pass
    return bz2.decompress(data)
