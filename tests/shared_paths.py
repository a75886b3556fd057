"""Where the project's shared reference material (../shared) is.

CI clones the repo with shared/ beside it; developers have it at
/work/shared.  Missing reference data is an error, never a skip: the
exactness tests are meaningless without R's outputs.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_CANDIDATES = [Path(p) for p in filter(None, [os.environ.get("COLDRUN_SHARED_DIR")])] + [
    REPO.parent / "shared", Path("/work/shared")]


def _find_shared() -> Path:
    for c in _CANDIDATES:
        if (c / "golden").is_dir():
            return c
    raise RuntimeError("the shared reference directory (with golden/) was not found at "
                       + ", ".join(map(str, _CANDIDATES)) + "; set COLDRUN_SHARED_DIR")


SHARED = _find_shared()
GOLDEN = SHARED / "golden"


def golden_annotated_corpus() -> dict:
    """warmup_stats' corpus_500: its Krun input with warmup_stats' own annotations (outliers, changepoints)."""
    import bz2
    import json

    corpus = GOLDEN / "warmup_stats" / "corpus_500"
    with bz2.open(corpus / "input.json.bz2") as fh:
        results = json.load(fh)
    results.update(json.loads((corpus / "annotated.json").read_text()))
    return results
