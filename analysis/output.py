"""Where a command's report goes: stdout, or a file written atomically."""

from __future__ import annotations

import bz2
import os
import queue
import sys
import threading
from pathlib import Path
from typing import BinaryIO, Iterable

from analysis.errors import AnalysisError

# bzip2 level of written .bz2 files. The level only sets the block size
# (100-900 kB). On annotated results (indented JSON, highly repetitive) level 1
# is both the fastest and the smallest: 2.10 MB in 0.54 s for 17 MB of text,
# against 2.29 MB in 0.66 s at level 9 (measured with bench/bench_paper_scale_cli.py's
# file). Kept at one stream, so Python 2's bz2 module (warmup_stats') still reads our files.
BZ2_LEVEL = 1


def write_output(path: Path, text: str | Iterable[str]) -> None:
    """Write atomically (temp file + rename) so a failure never leaves half a file; bzip2 for ``.bz2``.

    ``text`` may come in chunks (e.g. ``analysis.json_text.indented_chunks``):
    bzip2 then compresses one chunk in a second thread while the next is made."""
    tmp = path.with_name(path.name + ".tmp")
    chunks = [text] if isinstance(text, str) else text
    try:
        with open(tmp, "wb") as fh:
            if path.name.endswith(".bz2"):
                _write_bz2(fh, chunks)
            else:
                for chunk in chunks:
                    fh.write(chunk.encode("utf-8"))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise AnalysisError(f"{path}: cannot write ({exc.strerror or exc})")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_bz2(fh: BinaryIO, chunks: Iterable[str]) -> None:
    """One bzip2 stream of ``chunks``; the compressor releases the GIL, so it
    runs beside the code producing the next chunk."""
    compressor = bz2.BZ2Compressor(BZ2_LEVEL)
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
            while not ended and pending.get() is not None:  # unblock the producer
                pass

    worker = threading.Thread(target=compress, name="bz2-writer")
    worker.start()
    try:
        for chunk in chunks:
            if failure:
                break
            pending.put(chunk.encode("utf-8"))
    finally:
        pending.put(None)
        worker.join()
    if failure:
        raise failure[0]


def emit(text: str, output: str | None) -> None:
    """``text`` to stdout (no ``output`` or "-") or to the file ``output``, saying so on stderr."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    out = Path(output)
    write_output(out, text)
    print(f"Wrote {out}", file=sys.stderr)
