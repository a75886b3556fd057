"""Number formats of the paper's tables (warmup_stats' LaTeX table).

The one place numbers become text: the text, HTML and LaTeX tables and the
diff tables all format through these functions, so one analysis shows the
same digits in every format. Each ``*_parts`` function returns the numbers
alone; the renderers only decide what goes between and around them.
"""

from __future__ import annotations

from analysis.key_results import Interval
from analysis.summary_json import BootstrapSettings

# Shown where a number does not exist (flat pairs have no steady iteration,
# pairs with a no-steady-state execution have no steady numbers at all).
BLANK = "-"


# Decimals of each number (the paper's): steady iter (#) median and range;
# steady iter (s) median, and its range one decimal more; steady perf and its CI.
ITER_DECIMALS = 1
TIME_TO_REACH_DECIMALS = 2
TIME_TO_REACH_RANGE_DECIMALS = 3
PERF_DECIMALS = 5
PERF_CI_DECIMALS = 6


def number(value: float, decimals: int) -> str:
    return "%.*f" % (decimals, value)


def signed(value: float, decimals: int) -> str:
    """'+0.5' / '-0.5'; a change that rounds to zero is '+0...' (never '-0')."""
    text = number(abs(value), decimals)
    return ("-" if value < 0 and float(text) != 0 else "+") + text


def interval_parts(iv: Interval, decimals: int, range_decimals: int) -> tuple[str, str, str]:
    return number(iv.median, decimals), number(iv.low, range_decimals), number(iv.high, range_decimals)


def steady_iter_parts(iv: Interval) -> tuple[str, str, str]:
    """Steady iter (#): median, p5, p95."""
    return interval_parts(iv, ITER_DECIMALS, ITER_DECIMALS)


def steady_time_to_reach_parts(iv: Interval) -> tuple[str, str, str]:
    """Steady iter (s): median, p5, p95; the paper prints the range with one
    more decimal than the median."""
    return interval_parts(iv, TIME_TO_REACH_DECIMALS, TIME_TO_REACH_RANGE_DECIMALS)


def steady_perf_parts(median: float, ci: float) -> tuple[str, str]:
    """Steady perf (s): bootstrap median, half-width of its interval."""
    return number(median, PERF_DECIMALS), number(ci, PERF_CI_DECIMALS)


def steady_iter(iv: Interval | None) -> str:
    """Steady iter (#): median (p5, p95)."""
    return BLANK if iv is None else "%s (%s, %s)" % steady_iter_parts(iv)


def steady_time_to_reach(iv: Interval | None) -> str:
    """Steady iter (s): median (p5, p95)."""
    return BLANK if iv is None else "%s (%s, %s)" % steady_time_to_reach_parts(iv)


def steady_perf(median: float | None, ci: float | None, plus_minus: str = "±") -> str:
    """Steady perf (s): bootstrap median ± half-width of the interval."""
    if median is None or ci is None:
        return BLANK
    perf, half = steady_perf_parts(median, ci)
    return f"{perf} {plus_minus} {half}"


def _settings_phrase(s: BootstrapSettings) -> str:
    if not s.recorded:
        return "settings not recorded (e.g. a warmup_stats summary)"
    level = "" if s.confidence is None else "%g%% interval, " % (float(s.confidence) * 100)
    seed = "unseeded" if s.seed is None else f"seed {s.seed}"
    count = "" if s.resamples is None else f"{s.resamples} resamples, "
    return f"{level}{count}{seed}"


def bootstrap_note(settings: list[BootstrapSettings]) -> str:
    """The table footer: how the steady perf numbers were made, seed first of all."""
    return "Steady perf (s): bootstrap median ± half-width; " + "; ".join(_settings_phrase(s) for s in settings) + "."
