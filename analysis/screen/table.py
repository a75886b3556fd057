"""The per-sample table a screening analysis reads: one row per sample, one
integer-level column per factor (in column order), and the response.

CSV form (``coldrun-analyze screen --table FILE.csv``): a header row naming
the factors and ``response``; every level a whole number >= 0, every
response a finite number; each factor needs level 0 (the reference of its
main effects) and at least one other level. The native form is built by
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

    def level_name(self, factor: str, level: int) -> str:
        names = self.level_names.get(factor)
        return names[level] if names and level < len(names) else str(level)


def build(source: str, factors: Sequence[str], rows: Sequence[Sequence[int]], response: Sequence[float],
          level_names: dict[str, list[str]] | None = None, metric: str = RESPONSE) -> ScreenTable:
    """A checked table: at least one sample, every factor with level 0 and another level."""
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
    return ScreenTable(source, list(factors), levels, np.asarray(response, dtype=np.float64), level_names or {},
                       metric)


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
    factors = [c for c in header if c != RESPONSE]
    if not factors:
        raise AnalysisError(f"{path}: line {header_line}: no factor columns besides {RESPONSE!r}; expected {EXPECTED}")
    at = {name: i for i, name in enumerate(header)}
    rows: list[list[int]] = []
    response: list[float] = []
    for lineno, row in lines[1:]:
        if len(row) != len(header):
            raise AnalysisError(f"{path}: line {lineno}: {len(row)} column(s); the header has {len(header)}")
        rows.append([_level(path, lineno, f, row[at[f]]) for f in factors])
        response.append(reading(path, lineno, row[at[RESPONSE]].strip(), "response", signed=True))
    return build(str(path), factors, rows, response)


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

