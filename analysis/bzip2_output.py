"""One bzip2 stream, compressed on every CPU.

bzip2 compresses each block on its own; only the stream around the blocks
(header, end marker, combined CRC) ties them together, and blocks follow one
another at any bit offset. So text is cut into pieces that each fit one
block, the pieces are compressed as streams of their own in threads
(``bz2.compress`` releases the GIL), and their blocks are joined into a
single stream. A single stream matters: Python 2's ``bz2`` module, which
warmup_stats uses, reads only the first one.

A piece fits one block whatever its bytes: bzip2's first run-length step
turns 4 equal bytes into 5 at worst, and a block at level L holds
100000 * L - 19 bytes after it.
"""

from __future__ import annotations

import bz2
from collections import deque
from typing import TYPE_CHECKING

from analysis.bzip2_input import CRC_BITS, END_MARKER, MARKER_BITS, combine_crc, stream_end_padding
from analysis.cpus import usable_cpus

if TYPE_CHECKING:
    from concurrent.futures import Future

_HEADER_BITS = 32  # "BZh" and the level digit


def piece_size(level: int) -> int:
    """The most bytes that always compress to one block at ``level``."""
    return (100_000 * level - 19) * 4 // 5


class ParallelCompressor:
    """``bz2.BZ2Compressor``'s ``compress``/``flush``, writing one stream whose blocks are made in threads."""

    def __init__(self, level: int, threads: int | None = None):
        from concurrent.futures import ThreadPoolExecutor  # here: `--help` need not import it

        threads = threads or usable_cpus()
        self._level = level
        self._piece = piece_size(level)
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="bz2-block")
        self._pending: deque[Future[bytes]] = deque()
        self._limit = 2 * threads  # pieces in flight: bounded memory
        self._buffer = bytearray()
        self._bits = 0  # block bits not yet written (fewer than 8), and how many
        self._nbits = 0
        self._crc = 0  # the stream's combined CRC over the blocks so far
        self._header = b"BZh" + str(level).encode()

    def compress(self, data: bytes) -> bytes:
        self._buffer += data
        whole = len(self._buffer) // self._piece * self._piece
        if whole:
            with memoryview(self._buffer) as view:
                for start in range(0, whole, self._piece):
                    self._submit(bytes(view[start : start + self._piece]))
            del self._buffer[:whole]
        out = [self._header] if self._header else []
        self._header = b""
        while self._pending and (self._pending[0].done() or len(self._pending) > self._limit):
            out.append(self._join(self._pending.popleft().result()))
        return b"".join(out)

    def flush(self) -> bytes:
        if self._buffer:
            self._submit(bytes(self._buffer))
            self._buffer.clear()
        out = [self._header]
        self._header = b""
        while self._pending:
            out.append(self._join(self._pending.popleft().result()))
        self._pool.shutdown()
        # End marker, combined CRC, zero bits to the byte boundary.
        tail_bits = MARKER_BITS + CRC_BITS
        self._bits = (self._bits << tail_bits) | (END_MARKER << CRC_BITS) | self._crc
        self._nbits += tail_bits
        padding = -self._nbits % 8
        out.append((self._bits << padding).to_bytes((self._nbits + padding) // 8, "big"))
        return b"".join(out)

    def close(self) -> None:
        """Give up (the writer failed): pieces not started are dropped, and the threads end."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pending.clear()

    def _submit(self, piece: bytes) -> None:
        self._pending.append(self._pool.submit(bz2.compress, piece, self._level))

    def _join(self, stream: bytes) -> bytes:
        """The block of a one-block ``stream`` appended to the output: the whole bytes now ready."""
        padding = stream_end_padding(stream)
        total = len(stream) * 8
        block_bits = total - padding - MARKER_BITS - CRC_BITS - _HEADER_BITS
        if padding < 0 or block_bits <= 0:
            raise AssertionError("bz2.compress made no single-block stream")  # cannot happen: bz2 wrote it
        value = int.from_bytes(stream, "big")
        crc = (value >> padding) & 0xFFFFFFFF
        block = (value >> (padding + MARKER_BITS + CRC_BITS)) & ((1 << block_bits) - 1)
        self._crc = combine_crc(self._crc, crc)  # a one-block stream's CRC is its block's
        bits = (self._bits << block_bits) | block
        nbits = self._nbits + block_bits
        whole = nbits // 8
        self._nbits = nbits - whole * 8
        self._bits = bits & ((1 << self._nbits) - 1)
        return (bits >> self._nbits).to_bytes(whole, "big")
