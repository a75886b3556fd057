"""Plots of a screening analysis, drawn from its JSON object alone (Agg canvas,
no pyplot): block plots, main effects, 2-factor interactions and the
half-normal plot of effects. Each function returns PNG bytes.
"""

from __future__ import annotations

import io
import textwrap
from itertools import combinations
from typing import cast

import numpy as np

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Annotation
from matplotlib.transforms import Bbox

from . import formats
from .screen_names import effect_name, level_name

PANEL_INCHES = 3.2
# A block's levels drawn side by side, at least this far apart (in boxes; wider for wider names), so
# equal means do not overlap.
LEVEL_SPREAD = 0.3


def _unit(values, times: bool) -> tuple[str, float]:
    """The axis unit: a time unit scaled to the largest value, or none."""
    if not times:
        return "", 1.0
    unit, scale = formats.time_unit(*[v for v in values if v is not None])
    return f" ({unit})", scale


def _png(fig: Figure, dpi: int) -> bytes:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    _separate_labels(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _separate_labels(fig: Figure) -> None:
    """Moves each point label (an annotation) that would overlap an earlier one, or a point, up by a line
    until it is clear: near-equal effects on the half-normal plot printed their names over each other."""
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()     # every figure here has an Agg canvas
    for ax in fig.axes:
        labels = sorted((cast(Annotation, t) for t in ax.texts if hasattr(t, "xyann")), key=lambda t: t.xy)
        # the points themselves are in the way too (a label's own point is left of it)
        points = [tuple(xy) for c in ax.collections for xy in cast(np.ndarray, c.get_offsets())]
        placed = [Bbox.from_bounds(x - 4, y - 4, 8, 8) for x, y in ax.transData.transform(points)] if points else []
        for label in labels:
            for _ in range(len(ax.texts)):
                box = label.get_window_extent(renderer).padded(1)
                if not any(box.overlaps(other) for other in placed):
                    break
                label.xyann = (label.xyann[0], label.xyann[1] + float(label.get_fontsize()) * 1.2)
            placed.append(label.get_window_extent(renderer))


def _level_marks(ax, names: list[str], fontsize: float) -> tuple[list[str], float]:
    """What a block's levels are drawn as, and how far apart (in boxes): their names, neighbours as far
    apart as their half-widths (at least LEVEL_SPREAD), if then the box's outer names stay clear of the
    next box's; else their numbers 1, 2, ... (the title then says which is which), as Filliben drew them."""
    renderer = ax.figure.canvas.get_renderer()
    to_data = ax.transData.inverted()

    def width(label: str) -> float:    # in boxes, with room for tight_layout narrowing the axes
        probe = ax.text(0, 0, label, fontsize=fontsize)
        w = probe.get_window_extent(renderer).transformed(to_data).width * 1.1
        probe.remove()
        return w

    pad = 0.03
    for marks in (names, [str(i + 1) for i in range(len(names))]):
        w = [width(m) for m in marks]
        spread = max([LEVEL_SPREAD] + [(a + b) / 2 + pad for a, b in zip(w, w[1:])])
        if (len(w) - 1) * spread + (w[0] + w[-1]) / 2 + pad <= 1.0:
            return marks, spread
    return marks, spread


def _fit_ticks(ax, names: list[list[str]]) -> None:
    """Each box's tick: the other factors' level names, one per line, each wrapped (at hyphens and spaces)
    as narrow as it must be for neighbouring ticks not to touch."""
    renderer = ax.figure.canvas.get_renderer()
    to_data = ax.transData.inverted()
    longest = max((len(n) for box in names for n in box), default=1)
    for width in range(longest, 3, -1):
        ticks = ax.set_xticklabels(["\n".join(line for n in box for line in textwrap.wrap(n, width))
                                    for box in names], fontsize=8)
        if all(t.get_window_extent(renderer).transformed(to_data).width * 1.25 <= 1.0 for t in ticks):
            return


def _panels(count: int) -> Figure:
    return Figure(figsize=(PANEL_INCHES * count, PANEL_INCHES))


def block_plots_png(analysis: dict, dpi: int = 72, times: bool = False) -> bytes:
    """One panel per primary factor: each box a combination of the other factors (named by their levels),
    the primary factor's levels drawn as their names side by side (Filliben's style)."""
    plots = analysis["block_plots"]
    # a panel widens with its boxes (beyond 2.5), so that a box's level names have room side by side
    widths = [max(1.0, len(plot["boxes"]) / 2.5) for plot in plots.values()]
    fig = Figure(figsize=(PANEL_INCHES * sum(widths), PANEL_INCHES))
    grid = fig.add_gridspec(1, len(plots), width_ratios=widths)
    unit, scale = _unit([m for p in plots.values() for box in p["boxes"] for m in box["means"].values()], times)
    FigureCanvasAgg(fig)
    for i, (factor, plot) in enumerate(plots.items()):
        ax = fig.add_subplot(grid[0, i])
        codes = [str(lv) for lv in plot["levels"]]
        ax.set_xlim(-0.6, len(plot["boxes"]) - 0.4)
        names = [level_name(analysis, factor, lv) for lv in codes]
        marks, spread = _level_marks(ax, names, 8)
        for x, box in enumerate(plot["boxes"]):
            values = [m / scale for m in box["means"].values()]
            if values:
                ax.vlines(x, min(values), max(values), color="0.6", linewidth=6, alpha=0.4)
            for level, mean in box["means"].items():
                code = codes.index(level) if level in codes else None
                dx = 0.0 if code is None else (code - (len(codes) - 1) / 2) * spread
                ax.text(x + dx, mean / scale, marks[code] if code is not None else level_name(analysis, factor, level),
                        ha="center", va="center", fontsize=8)
        means = [m / scale for box in plot["boxes"] for m in box["means"].values()]
        if means:
            pad = (max(means) - min(means)) * 0.12 or abs(means[0]) * 0.01 or 1.0
            ax.set_ylim(min(means) - pad, max(means) + pad)
        ax.set_xticks(range(len(plot["boxes"])))
        _fit_ticks(ax, [[level_name(analysis, f, v) for f, v in box["others"].items()] for box in plot["boxes"]])
        ax.set_xlabel(", ".join(plot["boxes"][0]["others"]) if plot["boxes"] else "", fontsize=8)
        chance = "" if plot["chance"] is None else f", chance {plot['chance']:.3g}"
        verdict = {True: "consistent", False: "not consistent", None: "cannot tell"}[plot["consistent"]]
        key = "" if marks == names else "\n" + ", ".join(f"{m} = {n}" for m, n in zip(marks, names))
        ax.set_title(f"{factor} ({verdict}{chance}){key}", fontsize=9)
        ax.set_ylabel("mean response" + unit, fontsize=9)
    return _png(fig, dpi)


def main_effects_png(analysis: dict, dpi: int = 72, times: bool = False) -> bytes:
    """Per factor: each level's effect against level 0, with its interval (none where untestable)."""
    factors = list(analysis["main_effects"])
    fig = _panels(len(factors))
    unit, scale = _unit([v for e in analysis["main_effects"].values() for x in e.values()
                         for v in [*(x["ci"] or []), x["effect"]]],
                        times)
    for i, factor in enumerate(factors):
        ax = fig.add_subplot(1, len(factors), i + 1)
        entries = analysis["main_effects"][factor]
        xs = [0] + [int(level) for level in entries]
        ys = [0.0] + [entries[level]["effect"] / scale for level in entries]
        # an untestable effect (no CI) is drawn without a bar
        lows = [0.0] + [(entries[lv]["ci"] or [entries[lv]["effect"]] * 2)[0] / scale for lv in entries]
        highs = [0.0] + [(entries[lv]["ci"] or [entries[lv]["effect"]] * 2)[1] / scale for lv in entries]
        ax.errorbar(xs, ys, yerr=[[y - lo for y, lo in zip(ys, lows)], [hi - y for y, hi in zip(ys, highs)]],
                    marker="o", capsize=3)
        ax.axhline(0.0, color="0.7", linewidth=0.8)
        ax.set_xticks(xs)
        ax.set_xticklabels([level_name(analysis, factor, x) for x in xs], fontsize=8)
        ax.set_xlim(-0.3, max(xs) + 0.3)
        ax.set_title(f"main effect of {factor}", fontsize=9)
        ax.set_ylabel(f"effect vs {level_name(analysis, factor, 0)}" + unit, fontsize=9)
    return _png(fig, dpi)


def _cell_means(analysis: dict, a: str, b: str) -> dict[int, dict[int, float]]:
    """{level of a: {level of b: mean over the treatments in that cell}}."""
    sums: dict[tuple[int, int], list[float]] = {}
    for t in analysis["treatments"]:
        sums.setdefault((t["levels"][a], t["levels"][b]), []).append(t["mean"])
    out: dict[int, dict[int, float]] = {}
    for (u, v), means in sorted(sums.items()):
        out.setdefault(u, {})[v] = sum(means) / len(means)
    return out


def interactions_png(analysis: dict, dpi: int = 72, times: bool = False) -> bytes | None:
    """One panel per factor pair: a line per level of the first, over the levels of the second."""
    pairs = list(combinations(analysis["factors"], 2))
    if not pairs:
        return None
    fig = _panels(len(pairs))
    unit, scale = _unit([t["mean"] for t in analysis["treatments"]], times)
    for i, (a, b) in enumerate(pairs):
        ax = fig.add_subplot(1, len(pairs), i + 1)
        cells = _cell_means(analysis, a, b)
        for u, row in cells.items():
            ax.plot(list(row), [v / scale for v in row.values()], marker="o",
                    label=f"{a}: {level_name(analysis, a, u)}")
        ticks = sorted({v for row in cells.values() for v in row})
        ax.set_xticks(ticks)
        ax.set_xticklabels([level_name(analysis, b, v) for v in ticks], fontsize=8)
        ax.set_xlim(min(ticks) - 0.3, max(ticks) + 0.3)
        ax.set_xlabel(b, fontsize=9)
        ax.set_ylabel("mean response" + unit, fontsize=9)
        ax.set_title(f"{a} × {b}", fontsize=9)
        ax.legend(fontsize=8, loc="best")
    return _png(fig, dpi)


def half_normal_png(analysis: dict, dpi: int = 72, times: bool = False) -> bytes | None:
    points = analysis.get("half_normal")
    if not points:
        return None
    unit, scale = _unit([p["abs_effect"] for p in points], times)
    fig = Figure(figsize=(PANEL_INCHES * 1.6, PANEL_INCHES * 1.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.scatter([p["quantile"] for p in points], [p["abs_effect"] / scale for p in points])
    for p in points:
        ax.annotate(effect_name(analysis, p["effect"]), (p["quantile"], p["abs_effect"] / scale), fontsize=8,
                    xytext=(4, 2), textcoords="offset points")
    ax.margins(x=0.25, y=0.12)   # room for the labels of the outermost points
    ax.set_xlabel("half-normal quantile")
    ax.set_ylabel("|effect|" + unit)
    ax.set_title("half-normal plot of effects", fontsize=9)
    return _png(fig, dpi)
