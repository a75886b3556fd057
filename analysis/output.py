"""Where a command's report goes: stdout, or a file written atomically."""

from __future__ import annotations

import os
import queue
import sys
import threading
from pathlib import Path
from typing import BinaryIO, Iterable

from analysis.errors import AnalysisError

# bzip2 level of written .bz2 files. The level only sets the block size
# (100-900 kB). On annotated results level 1 is both the fastest and about the
# smallest: 2.10 MB in 0.54 s for 17 MB of (then indented) text, against 2.29 MB
# in 0.66 s at level 9 (measured with bench/bench_paper_scale_cli.py's file).
# Kept at one stream, so Python 2's bz2 module (warmup_stats') still reads our files.
BZ2_LEVEL = 1


Text = str | bytes  # bytes are UTF-8 already


def write_output(path: Path, text: Text | Iterable[Text]) -> None:
    """Write atomically (temp file + rename) so a failure never leaves half a file; bzip2 for ``.bz2``.

    ``text`` may come in chunks (e.g. ``analysis.json_text.object_chunks``):
    bzip2 then compresses one chunk in a second thread while the next is made."""
    tmp = path.with_name(path.name + ".tmp")
    chunks = [text] if isinstance(text, (str, bytes)) else text
    try:
        with open(tmp, "wb") as fh:
            if path.name.endswith(".bz2"):
                _write_bz2(fh, chunks)
            else:
                for chunk in chunks:
                    fh.write(_utf8(chunk))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise AnalysisError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _utf8(chunk: Text) -> bytes:
    return chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")


def _write_bz2(fh: BinaryIO, chunks: Iterable[Text]) -> None:
    """One bzip2 stream of ``chunks``; the compressor releases the GIL, so it
    runs beside the code producing the next chunk (its blocks in threads of their own)."""
    from analysis.bzip2_output import ParallelCompressor  # here: only .bz2 outputs need its threads

    compressor = ParallelCompressor(BZ2_LEVEL)
    pending: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
    failure: list[BaseException] = []

    def compress() -> None:
        ended = False
        try:
            while (data := pending.get()) is not None:
                fh.write(compressor.compress(data))
            ended = True
            fh.write(compressor.flush())
        except BaseException as exc:  # handed to the producing thread below
            failure.append(exc)
            compressor.close()
            while not ended and pending.get() is not None:  # unblock the producer
                pass

    worker = threading.Thread(target=compress, name="bz2-writer")
    worker.start()
    try:
        for chunk in chunks:
            if failure:
                break
            pending.put(_utf8(chunk))
    finally:
        pending.put(None)
        worker.join()
    if failure:
        raise failure[0]


class StreamedWrite:
    """``write_output`` in a second thread, of a document whose head is known now and its tail later.

    ``annotate`` uses it to compress the input data it copies while the
    workers compute the annotations: bzip2 is the longest single step there."""

    def __init__(self, path: Path, head: Iterable[Text]):
        self._tail: queue.Queue[Iterable[Text] | BaseException] = queue.Queue(maxsize=1)
        self._failure: list[BaseException] = []
        self._thread = threading.Thread(target=self._write, args=(path, self._chunks(head)), name="output-writer")
        self._thread.start()

    def _chunks(self, head: Iterable[Text]) -> Iterable[Text]:
        yield from head
        tail = self._tail.get()
        if isinstance(tail, BaseException):
            raise tail
        yield from tail

    def _write(self, path: Path, chunks: Iterable[Text]) -> None:
        try:
            write_output(path, chunks)
        except BaseException as exc:  # re-raised by finish()
            self._failure.append(exc)

    def finish(self, tail: Iterable[Text]) -> None:
        """Write the rest and wait until the file is in place; the writer's error, if any, is raised here."""
        self._tail.put(tail)
        self._thread.join()
        if self._failure:
            raise self._failure[0]

    def abandon(self, why: BaseException) -> None:
        """Give up (the caller failed): the temp file is removed and nothing appears at the path."""
        self._tail.put(why)
        self._thread.join()


def emit(text: str, output: str | None) -> None:
    """``text`` to stdout (no ``output`` or "-") or to the file ``output``, saying so on stderr."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    out = Path(output)
    write_output(out, text)
    print(f"Wrote {out}", file=sys.stderr)
