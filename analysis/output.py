"""Where a command's report goes: stdout, or a file written atomically."""

from __future__ import annotations

import bz2
import os
import sys
from pathlib import Path

from analysis.errors import AnalysisError


def write_output(path: Path, text: str) -> None:
    """Write atomically (temp file + rename) so a failure never leaves half a file; bzip2 for ``.bz2``."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        if path.name.endswith(".bz2"):
            with bz2.open(tmp, "wt", encoding="utf-8") as fh:
                fh.write(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise AnalysisError(f"{path}: cannot write ({exc.strerror or exc})")


def emit(text: str, output: str | None) -> None:
    """``text`` to stdout (no ``output`` or "-") or to the file ``output``, saying so on stderr."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    out = Path(output)
    write_output(out, text)
    print(f"Wrote {out}", file=sys.stderr)
