"""The per-sample table a screening analysis reads: one row per sample, one
integer-level column per factor (in column order), and the response.

CSV form (``coldrun-analyze screen --table FILE.csv``): a header row naming
the factors and ``response``; every level a whole number >= 0, every
response a finite number; each factor needs level 0 (the reference of its
main effects) and at least one other level.  An optional ``batch`` column
names each sample's batch (whole plot, any text): a factor that keeps one
level within every batch is then a whole-plot factor, tested against
batch-to-batch variation (``analysis.screen.split_plot``). The native form is built by
``analysis.screen.native`` and checked by the same :func:`build`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from analysis.errors import AnalysisError
from analysis.inputs import reading, text_lines

if TYPE_CHECKING:
    import numpy as np

RESPONSE = "response"
BATCH = "batch"
EXPECTED = "a CSV with a header row (one column per factor, and 'response'), then one row per sample"


@dataclass(frozen=True)
class ScreenTable:
    source: str
    factors: list[str]
    levels: np.ndarray  # samples x factors, int64
    response: np.ndarray  # samples, float64
    # Level names as the experiment wrote them (native exports); {} for CSV.
    level_names: dict[str, list[str]] = field(default_factory=dict)
    # Names the bootstrap's random streams (with the seed and the levels), so
    # results depend on the data and the seed, not on the file's path.
    metric: str = RESPONSE
    # Each sample's batch (whole plot), and the factors constant within batches; None / () when unknown.
    batches: np.ndarray | None = None
    whole_plot: tuple[str, ...] = ()

    def level_name(self, factor: str, level: int) -> str:
        names = self.level_names.get(factor)
        return names[level] if names and level < len(names) else str(level)


def build(source: str, factors: Sequence[str], rows: Sequence[Sequence[int]] | np.ndarray,
          response: Sequence[float] | np.ndarray,
          level_names: dict[str, list[str]] | None = None, metric: str = RESPONSE,
          batches: Sequence[str] | None = None, whole_plot: Sequence[str] | None = None) -> ScreenTable:
    """A checked table: at least one sample, every factor with level 0 and another level.

    ``whole_plot``: the factors needing a reboot (native exports); None with ``batches``: the factors that
    keep one level within every batch."""
    import numpy as np

    if len(rows) == 0:
        raise AnalysisError(f"{source}: no samples; expected {EXPECTED}")
    levels = np.array(rows, dtype=np.int64).reshape(len(rows), len(factors))
    for j, factor in enumerate(factors):
        present = sorted(set(levels[:, j].tolist()))
        if len(present) < 2:
            raise AnalysisError(f"{source}: factor {factor!r} has one level ({present[0]}); "
                                "a factor needs at least two levels to screen")
        if present[0] != 0:
            raise AnalysisError(f"{source}: factor {factor!r} has no level 0 (levels {present}); "
                                "level 0 is the reference of its main effects")
    batch_ids = None if batches is None else np.array([str(b) for b in batches], dtype=object)
    if batch_ids is not None and whole_plot is None:
        whole_plot = [f for j, f in enumerate(factors)
                      if all(len(set(levels[batch_ids == b, j].tolist())) == 1 for b in set(batch_ids.tolist()))]
        if len(set(batch_ids.tolist())) == len(batch_ids):
            whole_plot = []      # one sample per batch: nothing is nested in a batch
    if batch_ids is not None:
        for f in whole_plot or ():
            j = list(factors).index(f)
            for b in sorted(set(batch_ids.tolist())):
                if len(set(levels[batch_ids == b, j].tolist())) > 1:
                    raise AnalysisError(f"{source}: factor {f!r} needs a reboot but changes within batch {b}; "
                                        "a batch runs one level of each such factor")
    return ScreenTable(source, list(factors), levels, np.asarray(response, dtype=np.float64), level_names or {},
                       metric, batch_ids, tuple(whole_plot or ()))


def read_csv_table(path_text: str) -> ScreenTable:
    """The table in a CSV file; any problem is one AnalysisError naming the file and line."""
    path = Path(path_text)
    try:   # numbered as in the file: blank rows are passed over, not dropped before numbering
        lines = [(n, row) for n, row in enumerate(csv.reader(text_lines(path, EXPECTED)), start=1)
                 if any(c.strip() for c in row)]
    except csv.Error as exc:
        raise AnalysisError(f"{path}: cannot read as CSV ({exc})") from None
    if not lines:
        raise AnalysisError(f"{path}: empty file; expected {EXPECTED}")
    header_line, header_row = lines[0]
    header = [c.strip() for c in header_row]
    if RESPONSE not in header:
        raise AnalysisError(f"{path}: line {header_line}: no column {RESPONSE!r}; expected {EXPECTED}")
    if len(set(header)) != len(header) or "" in header:
        raise AnalysisError(f"{path}: line {header_line}: column names must be distinct and not empty")
    factors = [c for c in header if c not in (RESPONSE, BATCH)]
    if not factors:
        raise AnalysisError(f"{path}: line {header_line}: no factor columns besides {RESPONSE!r}; expected {EXPECTED}")
    at = {name: i for i, name in enumerate(header)}
    rows: list[list[int]] = []
    response: list[float] = []
    batches: list[str] = []
    for lineno, row in lines[1:]:
        if len(row) != len(header):
            raise AnalysisError(f"{path}: line {lineno}: {len(row)} column(s); the header has {len(header)}")
        rows.append([_level(path, lineno, f, row[at[f]]) for f in factors])
        response.append(reading(path, lineno, row[at[RESPONSE]].strip(), "response", signed=True))
        if BATCH in at:
            batches.append(row[at[BATCH]].strip())
            if not batches[-1]:
                raise AnalysisError(f"{path}: line {lineno}: empty {BATCH!r}; name each sample's batch")
    return build(str(path), factors, rows, response, batches=batches if BATCH in at else None)


def _level(path: Path, lineno: int, factor: str, text: str) -> int:
    try:
        level = int(text.strip())
    except ValueError:
        raise AnalysisError(f"{path}: line {lineno}: level {text.strip()!r} of factor {factor!r} is not a "
                            "whole number (levels are 0, 1, ...)") from None
    if level < 0:
        raise AnalysisError(f"{path}: line {lineno}: level {level} of factor {factor!r} is negative "
                            "(levels are 0, 1, ...)")
    return level

