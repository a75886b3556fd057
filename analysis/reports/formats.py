"""Number formats of the paper's tables (warmup_stats' LaTeX table)."""

from __future__ import annotations

from .rows import Interval

# Shown where a number does not exist (flat pairs have no steady iteration,
# pairs with a no-steady-state execution have no steady numbers at all).
BLANK = "-"


def steady_iter(iv: Interval | None) -> str:
    """Steady iter (#): median (p5, p95)."""
    if iv is None:
        return BLANK
    return "%.1f (%.1f, %.1f)" % (iv.median, iv.low, iv.high)


def steady_time_to_reach(iv: Interval | None, decimals: int = 2, range_decimals: int = 3) -> str:
    """Steady iter (s): median (p5, p95); the paper prints the range with one
    more decimal than the median."""
    if iv is None:
        return BLANK
    return "%.*f (%.*f, %.*f)" % (decimals, iv.median, range_decimals, iv.low, range_decimals, iv.high)


def steady_perf(median: float | None, ci: float | None, plus_minus: str = "±") -> str:
    """Steady perf (s): bootstrap median ± half-width of the 99% interval."""
    if median is None or ci is None:
        return BLANK
    return "%.5f %s %.6f" % (median, plus_minus, ci)
