"""Numbers and units of every report: the one place numbers become text.

The text, HTML and LaTeX tables, the diff, Pilot, duet and screening reports
all format through these functions, so one analysis shows the same digits in
every format. Times are printed in a unit scaled to the value (s, ms, µs, ns)
with a fixed number of significant digits, so a sub-microsecond benchmark is
as legible as a one-second one; a value and its interval share one unit.
Each ``*_parts`` function returns the numbers alone (and the unit); the
renderers only decide what goes between and around them.
"""

from __future__ import annotations

import math

from analysis.key_results import Interval, LastIterations
from analysis.summary_json import BootstrapSettings

# Shown where a number does not exist (flat pairs have no steady iteration,
# pairs with a no-steady-state execution have no steady numbers at all).
BLANK = "-"

# Significant digits: a time, and the half-width or width of its interval.
TIME_DIGITS = 4
SPREAD_DIGITS = 2
# Steady iter (#) is a count: one decimal, as the paper.
ITER_DECIMALS = 1

# Largest first: a value takes the largest unit in which it is at least 1.
UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def number(value: float, decimals: int) -> str:
    return "%.*f" % (decimals, value)


def significant(value: float, digits: int) -> str:
    """`value` with `digits` significant digits; 0 is '0'; exponent form only
    below 1e-3 (a time under a picosecond: nothing a clock measures)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    if abs(value) < 1e-3:
        return "%.*e" % (digits - 1, value)
    exponent = math.floor(math.log10(abs(float("%.*e" % (digits - 1, value)))))
    return number(value, max(0, digits - 1 - exponent))


def signed(value: float, decimals: int) -> str:
    """'+0.5' / '-0.5'; a change that rounds to zero is '+0...' (never '-0')."""
    text = number(abs(value), decimals)
    return ("-" if value < 0 and float(text) != 0 else "+") + text


def time_unit(*values: float | None) -> tuple[str, float]:
    """(name, seconds per unit) for the largest magnitude among `values`, as
    rounded (999.99 µs is '1.000 ms', not '1000 µs')."""
    biggest = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    biggest = float("%.*e" % (TIME_DIGITS - 1, biggest))
    for name, scale in UNITS:
        if biggest >= scale:
            return name, scale
    return UNITS[0] if biggest == 0 else UNITS[-1]


def duration(seconds: float | None, digits: int = TIME_DIGITS) -> str:
    """'429.8 ms', '312.0 ns', '0 s'."""
    if seconds is None:
        return BLANK
    unit, scale = time_unit(seconds)
    return f"{significant(seconds / scale, digits)} {unit}"


def signed_duration(seconds: float | None, digits: int = TIME_DIGITS) -> str:
    """'+280.0 µs' / '-1.200 ms': a change; one that is exactly 0 is '+0 s'."""
    if seconds is None:
        return BLANK
    return ("-" if seconds < 0 else "+") + duration(abs(seconds), digits)


def durations(values: list[float], digits: int = TIME_DIGITS) -> tuple[list[str], str]:
    """Several times in one shared unit (of the largest): (numbers, unit)."""
    unit, scale = time_unit(*values)
    return [significant(v / scale, digits) for v in values], unit


def interval(low: float, high: float, digits: int = TIME_DIGITS) -> str:
    """'[1.139, 2.826] ms': an interval of times in one unit."""
    (lo, hi), unit = durations([low, high], digits)
    return f"[{lo}, {hi}] {unit}"


def ratio(value: float | None) -> str:
    """A dimensionless ratio (x/y, reductions), TIME_DIGITS significant digits."""
    return BLANK if value is None else significant(value, TIME_DIGITS)


def percent(fraction: float | None, digits: int = 3) -> str:
    """0.0123 -> '1.23%' (`digits` significant)."""
    return BLANK if fraction is None else significant(fraction * 100, digits) + "%"


def interval_parts(iv: Interval, decimals: int, range_decimals: int) -> tuple[str, str, str]:
    return number(iv.median, decimals), number(iv.low, range_decimals), number(iv.high, range_decimals)


def steady_iter_parts(iv: Interval) -> tuple[str, str, str]:
    """Steady iter (#): median, p5, p95."""
    return interval_parts(iv, ITER_DECIMALS, ITER_DECIMALS)


def steady_time_to_reach_parts(iv: Interval) -> tuple[str, str, str, str]:
    """Steady iter (time): median, p5, p95 in the unit of the largest, and that unit."""
    numbers, unit = durations([iv.median, iv.low, iv.high])
    return numbers[0], numbers[1], numbers[2], unit


def steady_perf_parts(median: float, ci: float) -> tuple[str, str, str]:
    """Steady perf: bootstrap median, half-width of its interval, their unit
    (chosen by the larger, so a half-width wider than the median stays legible)."""
    unit, scale = time_unit(median, ci)
    return significant(median / scale, TIME_DIGITS), significant(ci / scale, SPREAD_DIGITS), unit


def steady_iter(iv: Interval | None) -> str:
    """Steady iter (#): median (p5, p95)."""
    return BLANK if iv is None else "%s (%s, %s)" % steady_iter_parts(iv)


def steady_time_to_reach(iv: Interval | None) -> str:
    """Steady iter (time): 'median (p5, p95) unit'."""
    return BLANK if iv is None else "%s (%s, %s) %s" % steady_time_to_reach_parts(iv)


def steady_perf(median: float | None, ci: float | None, plus_minus: str = "±") -> str:
    """Steady perf: 'median ± half-width unit'."""
    if median is None or ci is None:
        return BLANK
    perf, half, unit = steady_perf_parts(median, ci)
    return f"{perf} {plus_minus} {half} {unit}"


# Marks a figure that is not a steady state (analysis.last_iterations): "≈653.0 ± 12 µs (last 500)".
LAST_MARK = "≈"


def last_iterations_parts(li: LastIterations) -> tuple[str, str | None, str, str]:
    """A key without a steady state's figure: the mean, the half-width of its interval (None: one
    execution), their unit, and the iterations per execution it is the mean of."""
    unit, scale = time_unit(li.mean, li.half_width)
    half = None if li.half_width is None else significant(li.half_width / scale, SPREAD_DIGITS)
    return significant(li.mean / scale, TIME_DIGITS), half, unit, str(li.iterations)


def last_iterations(li: LastIterations | None, plus_minus: str = "±") -> str:
    """'≈653.0 ± 12 µs (last 500)', marked as not a steady state."""
    if li is None:
        return BLANK
    mean, half, unit, n = last_iterations_parts(li)
    spread = "" if half is None else f" {plus_minus} {half}"
    return f"{LAST_MARK}{mean}{spread} {unit} (last {n})"


def last_iterations_note(figures: list[LastIterations]) -> str | None:
    """The legend of the marked figures in a table (None: it has none)."""
    if not figures:
        return None
    levels = ", ".join(sorted({"%g%%" % (float(li.confidence) * 100) for li in figures}))
    return (f"{LAST_MARK}mean ± half-width (last N): NOT a steady state (some execution has none): the mean over "
            "the classified executions of each one's mean of its last N iterations (the classifier's --steady "
            f"window, outliers left out), ± the half-width of a t interval over those means at {levels}; "
            "not comparable with a steady perf.")


def _settings_phrase(s: BootstrapSettings) -> str:
    if not s.recorded:
        return "settings not recorded (e.g. a warmup_stats summary)"
    level = "" if s.confidence is None else "%g%% interval, " % (float(s.confidence) * 100)
    seed = "unseeded" if s.seed is None else f"seed {s.seed}"
    count = "" if s.resamples is None else f"{s.resamples} resamples, "
    return f"{level}{count}{seed}"


def bootstrap_note(settings: list[BootstrapSettings]) -> str:
    """The table footer: how the steady perf numbers were made, seed first of all."""
    return ("Steady perf: bootstrap median ± half-width of its interval, in the unit shown "
            f"({TIME_DIGITS} and {SPREAD_DIGITS} significant digits); "
            + "; ".join(_settings_phrase(s) for s in settings) + ".")
