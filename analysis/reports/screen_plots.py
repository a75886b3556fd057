"""Plots of a screening analysis, drawn from its JSON object alone (Agg canvas,
no pyplot): block plots, main effects, 2-factor interactions and the
half-normal plot of effects. Each function returns PNG bytes.
"""

from __future__ import annotations

import io
from itertools import combinations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import formats
from .screen_names import effect_name, level_name

PANEL_INCHES = 3.2
# A block's levels drawn side by side, this far apart (in boxes), so equal means do not overlap.
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
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _panels(count: int) -> Figure:
    return Figure(figsize=(PANEL_INCHES * count, PANEL_INCHES))


def block_plots_png(analysis: dict, dpi: int = 72, times: bool = False) -> bytes:
    """One panel per primary factor: each box a combination of the other factors (named by their levels),
    the primary factor's levels drawn as their names side by side (Filliben's style)."""
    plots = analysis["block_plots"]
    fig = _panels(len(plots))
    unit, scale = _unit([m for p in plots.values() for box in p["boxes"] for m in box["means"].values()], times)
    for i, (factor, plot) in enumerate(plots.items()):
        ax = fig.add_subplot(1, len(plots), i + 1)
        codes = [str(lv) for lv in plot["levels"]]
        for x, box in enumerate(plot["boxes"]):
            values = [m / scale for m in box["means"].values()]
            if values:
                ax.vlines(x, min(values), max(values), color="0.6", linewidth=6, alpha=0.4)
            for level, mean in box["means"].items():
                dx = (codes.index(level) - (len(codes) - 1) / 2) * LEVEL_SPREAD if level in codes else 0.0
                ax.text(x + dx, mean / scale, level_name(analysis, factor, level), ha="center", va="center",
                        fontsize=8)
        ax.set_xlim(-0.6, len(plot["boxes"]) - 0.4)
        means = [m / scale for box in plot["boxes"] for m in box["means"].values()]
        if means:
            pad = (max(means) - min(means)) * 0.12 or abs(means[0]) * 0.01 or 1.0
            ax.set_ylim(min(means) - pad, max(means) + pad)
        ax.set_xticks(range(len(plot["boxes"])))
        ax.set_xticklabels(["\n".join(level_name(analysis, f, v) for f, v in box["others"].items())
                            for box in plot["boxes"]], fontsize=8)
        ax.set_xlabel(", ".join(plot["boxes"][0]["others"]) if plot["boxes"] else "", fontsize=8)
        chance = "" if plot["chance"] is None else f", chance {plot['chance']:.3g}"
        verdict = {True: "consistent", False: "not consistent", None: "cannot tell"}[plot["consistent"]]
        ax.set_title(f"{factor} ({verdict}{chance})", fontsize=9)
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
            ax.plot(list(row), [v / scale for v in row.values()], marker="o", label=f"{a}: {level_name(analysis, a, u)}")
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
