"""Start-up results: what the paper's startup experiment reported, from a Krun-shaped results file.

A start-up execution's ``wallclock_times`` are two clock readings, the outer (wrapper) runner's and the
inner runner's (warmup_experiment's startup runners, and coldrun's Krun export of ``mode = "startup"``);
the start-up time is their difference.  As the paper's ``bin/table_startup_results`` did, each key's
start-up times are bootstrapped as one execution of one segment (the mean's median and CI half-width,
with warmup_stats' rules: ``bootstrap.bootstrap_steady_perf``).  Which keys are start-up keys: coldrun's
export lists them (``startup_keys``); a file of Krun's own startup experiment does not, so ``all_keys``
takes every key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.keys import Key, is_key
from analysis import bootstrap
from analysis.errors import AnalysisError
from contracts.state_view import STARTUP_KEYS


@dataclass(frozen=True)
class StartupRow:
    machine: str
    key: str
    executions: int          # with two readings
    skipped: int             # executions without (failed, not run)
    mean: float | None       # the bootstrap's median of means
    ci: float | None         # its half-width
    minimum: float | None
    maximum: float | None

    @property
    def vm(self) -> str:
        return Key.parse(self.key).vm if is_key(self.key) else self.key

    @property
    def bench(self) -> str:
        return Key.parse(self.key).benchmark if is_key(self.key) else self.key


def startup_keys(document: dict, all_keys: bool = False) -> list[str]:
    """The start-up keys of a Krun-shaped document, in its order."""
    times = document.get("wallclock_times")
    if not isinstance(times, dict):
        return []
    if all_keys:
        return list(times)
    listed = document.get(STARTUP_KEYS)
    return [k for k in times if isinstance(listed, list) and k in listed]


def startup_times(document: dict, key: str) -> tuple[list[float], int]:
    """(start-up times in seconds, executions without two readings) of ``key``."""
    out, skipped = [], 0
    for readings in document["wallclock_times"].get(key) or []:
        if isinstance(readings, list) and len(readings) == 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in readings):
            out.append(float(readings[1]) - float(readings[0]))
        elif readings:
            raise AnalysisError(f"{key}: an execution has {len(readings)} wallclock values, not a start-up "
                                f"execution's two (outer and inner runner's clock readings)")
        else:
            skipped += 1
    return out, skipped


def summarise(document: dict, machine: str, *, all_keys: bool = False, resamples: int = bootstrap.RESAMPLES_HIGH,
              seed: int | None = bootstrap.DEFAULT_SEED,
              confidence: str = bootstrap.CONFIDENCE_LEVEL) -> list[StartupRow]:
    rows = []
    for key in startup_keys(document, all_keys):
        times, skipped = startup_times(document, key)
        if not times:
            rows.append(StartupRow(machine, key, 0, skipped, None, None, None, None))
            continue
        result = bootstrap.bootstrap_steady_perf([[times]], resamples=resamples, seed=seed, key=key,
                                                 confidence=confidence)
        rows.append(StartupRow(machine, key, len(times), skipped, result.median, result.ci, min(times),
                               max(times)))
    return rows


def without_startup_keys(document: dict) -> dict:
    """A shallow copy with the start-up keys left out of every per-key table, for the warmup analysis."""
    keys = set(startup_keys(document))
    out: dict[str, Any] = dict(document)
    for name, table in document.items():
        if isinstance(table, dict) and keys & set(table):
            out[name] = {k: v for k, v in table.items() if k not in keys}
    out.pop(STARTUP_KEYS, None)
    return out
