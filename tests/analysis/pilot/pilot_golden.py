"""Pilot's golden outputs (../shared/golden/pilot) and the README's comparison rules."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

from shared_paths import GOLDEN

PILOT = GOLDEN / "pilot"
INPUTS = PILOT / "inputs"
REL_TOL = 1e-9
ABS_FLOOR = 1e-12


def rows(name: str) -> list[dict]:
    """The lines of a golden jsonl file (a missing file fails the test, never skips it)."""
    return [json.loads(line) for line in (PILOT / name).read_text().splitlines() if line.strip()]


def series(name: str) -> list[float]:
    return [float(line) for line in (INPUTS / f"{name}.txt").read_text().split()]


def wps_rounds(name: str) -> tuple[list[int], list[int]]:
    with open(INPUTS / f"{name}.csv", newline="") as f:
        table = list(csv.DictReader(f))
    return [int(r["work_amount"]) for r in table], [int(r["duration_ns"]) for r in table]


def number(value) -> float:
    """Golden doubles; non-finite ones are the strings "nan", "inf", "-inf"."""
    return float(value)


def close(got: float, expected, rel: float = REL_TOL, floor: float = ABS_FLOOR) -> bool:
    """1e-9 relative with a 1e-12 absolute floor (README "Tolerance")."""
    want = number(expected)
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    return abs(got - want) <= max(floor, rel * abs(want))


def session_mock() -> ModuleType:
    """The golden's own mock workload (session_mock.py), imported by path."""
    spec = importlib.util.spec_from_file_location("pilot_session_mock", PILOT / "session_mock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Checks:
    """Counts comparisons and collects the failures of one golden file."""

    def __init__(self) -> None:
        self.count = 0
        self.failures: list[str] = []

    def equal(self, where: str, got, expected) -> None:
        self.count += 1
        if got != expected:
            self.failures.append(f"{where}: got {got!r}, Pilot {expected!r}")

    def near(self, where: str, got: float, expected, **tol) -> None:
        self.count += 1
        if not close(got, expected, **tol):
            self.failures.append(f"{where}: got {got!r}, Pilot {expected!r}")

    def true(self, where: str, ok: bool, detail: str) -> None:
        self.count += 1
        if not ok:
            self.failures.append(f"{where}: {detail}")
