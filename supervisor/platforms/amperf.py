"""APERF/MPERF post-check on the runner's measurements (paper, section 4).

Per core and in-process iteration: the core is busy when its APERF rate
(APERF / wall-clock seconds) is at least ``busy_fraction`` of the nominal
rate; a busy core whose APERF/MPERF ratio is below the low bound was
throttled, above the high bound was in turbo.  Idle cores are not judged:
their ratios are noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_LISTED = 20  # violations stored verbatim in the record; the count is always exact


@dataclass
class AmperfResult:
    throttle: list[tuple[int, int, float]] = field(default_factory=list)  # (core, iteration, ratio)
    turbo: list[tuple[int, int, float]] = field(default_factory=list)
    busy_iterations: int = 0
    nominal_hz: float | None = None
    nominal_source: str = ""
    checked: bool = False
    reason: str | None = None

    def flags(self) -> list[str]:
        out = []
        if self.throttle:
            out.append("amperf_throttle")
        if self.turbo:
            out.append("amperf_turbo")
        return out

    def details(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "reason": self.reason,
            "nominal_hz": self.nominal_hz,
            "nominal_source": self.nominal_source,
            "busy_core_iterations": self.busy_iterations,
            "throttle_count": len(self.throttle),
            "turbo_count": len(self.turbo),
            "throttle": [list(v) for v in self.throttle[:MAX_LISTED]],
            "turbo": [list(v) for v in self.turbo[:MAX_LISTED]],
        }


def check_amperf(measurements: dict[str, Any], *, bounds: tuple[float, float], busy_fraction: float,
                 nominal_hz: float | None) -> AmperfResult:
    wall = measurements.get("wallclock_times") or []
    aperf = measurements.get("aperf_counts") or []
    mperf = measurements.get("mperf_counts") or []
    res = AmperfResult()
    if not aperf or not mperf:
        res.reason = "no APERF/MPERF counts in the measurements (counters unavailable)"
        return res
    if len(aperf) != len(mperf):
        res.reason = f"aperf has {len(aperf)} cores but mperf has {len(mperf)}"
        return res
    if nominal_hz:
        res.nominal_hz, res.nominal_source = nominal_hz, "machine"
    else:
        # MPERF ticks at the nominal rate while a core is in C0: the fastest
        # MPERF rate seen is the best estimate when nothing else says.
        rates = [m / w for core in mperf for m, w in zip(core, wall) if w > 0]
        if not rates or max(rates) <= 0:
            res.reason = "cannot estimate the nominal rate (no positive MPERF rates)"
            return res
        res.nominal_hz, res.nominal_source = max(rates), "max MPERF rate"
    threshold = busy_fraction * res.nominal_hz
    lo, hi = bounds
    for core, (a_list, m_list) in enumerate(zip(aperf, mperf)):
        for i, (a, m, w) in enumerate(zip(a_list, m_list, wall)):
            if w <= 0 or m <= 0:
                continue
            if a / w < threshold:
                continue
            res.busy_iterations += 1
            ratio = a / m
            if ratio < lo:
                res.throttle.append((core, i, round(ratio, 6)))
            elif ratio > hi:
                res.turbo.append((core, i, round(ratio, 6)))
    res.checked = True
    return res
