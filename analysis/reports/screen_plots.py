"""Plots of a screening analysis, drawn from its JSON object alone (Agg canvas,
no pyplot): block plots, main effects, 2-factor interactions and the
half-normal plot of effects. Each function returns PNG bytes.
"""

from __future__ import annotations

import io
from itertools import combinations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

PANEL_INCHES = 3.2


def _png(fig: Figure, dpi: int) -> bytes:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _panels(count: int) -> Figure:
    return Figure(figsize=(PANEL_INCHES * count, PANEL_INCHES))


def block_plots_png(analysis: dict, dpi: int = 72) -> bytes:
    """One panel per primary factor: each box a combination of the other factors,
    the primary factor's levels drawn as their level numbers (Filliben's style)."""
    plots = analysis["block_plots"]
    fig = _panels(len(plots))
    for i, (factor, plot) in enumerate(plots.items()):
        ax = fig.add_subplot(1, len(plots), i + 1)
        for x, box in enumerate(plot["boxes"]):
            values = list(box["means"].values())
            if values:
                ax.vlines(x, min(values), max(values), color="0.6", linewidth=6, alpha=0.4)
            for level, mean in box["means"].items():
                ax.text(x, mean, level, ha="center", va="center", fontsize=9)
        ax.set_xlim(-0.5, len(plot["boxes"]) - 0.5)
        means = [m for box in plot["boxes"] for m in box["means"].values()]
        if means:
            pad = (max(means) - min(means)) * 0.1 or abs(means[0]) * 0.01 or 1.0
            ax.set_ylim(min(means) - pad, max(means) + pad)
        ax.set_xticks(range(len(plot["boxes"])))
        ax.set_xticklabels([",".join(str(v) for v in box["others"].values()) for box in plot["boxes"]],
                           rotation=90, fontsize=7)
        chance = "" if plot["chance"] is None else f", chance {plot['chance']:.3g}"
        verdict = {True: "consistent", False: "not consistent", None: "cannot tell"}[plot["consistent"]]
        ax.set_title(f"{factor} ({verdict}{chance})", fontsize=8)
        ax.set_ylabel("mean response")
    return _png(fig, dpi)


def main_effects_png(analysis: dict, dpi: int = 72) -> bytes:
    """Per factor: each level's effect against level 0, with its interval (none where untestable)."""
    factors = list(analysis["main_effects"])
    fig = _panels(len(factors))
    for i, factor in enumerate(factors):
        ax = fig.add_subplot(1, len(factors), i + 1)
        entries = analysis["main_effects"][factor]
        xs = [0] + [int(level) for level in entries]
        ys = [0.0] + [entries[level]["effect"] for level in entries]
        # an untestable effect (no CI) is drawn without a bar
        lows = [0.0] + [(entries[lv]["ci"] or [entries[lv]["effect"]] * 2)[0] for lv in entries]
        highs = [0.0] + [(entries[lv]["ci"] or [entries[lv]["effect"]] * 2)[1] for lv in entries]
        ax.errorbar(xs, ys, yerr=[[y - lo for y, lo in zip(ys, lows)], [hi - y for y, hi in zip(ys, highs)]],
                    marker="o", capsize=3)
        ax.axhline(0.0, color="0.7", linewidth=0.8)
        ax.set_xticks(xs)
        ax.set_xticklabels([analysis["factors"][factor][x] if x < len(analysis["factors"][factor]) else str(x)
                            for x in xs], fontsize=8)
        ax.set_title(f"main effect of {factor}", fontsize=9)
        ax.set_ylabel("effect vs level 0")
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


def interactions_png(analysis: dict, dpi: int = 72) -> bytes | None:
    """One panel per factor pair: a line per level of the first, over the levels of the second."""
    pairs = list(combinations(analysis["factors"], 2))
    if not pairs:
        return None
    fig = _panels(len(pairs))
    for i, (a, b) in enumerate(pairs):
        ax = fig.add_subplot(1, len(pairs), i + 1)
        cells = _cell_means(analysis, a, b)
        for u, row in cells.items():
            ax.plot(list(row), list(row.values()), marker="o", label=f"{a}={u}")
        ax.set_xticks(sorted({v for row in cells.values() for v in row}))
        ax.set_xlabel(b)
        ax.set_title(f"{a} x {b}", fontsize=9)
        ax.legend(fontsize=7)
    return _png(fig, dpi)


def half_normal_png(analysis: dict, dpi: int = 72) -> bytes | None:
    points = analysis.get("half_normal")
    if not points:
        return None
    fig = Figure(figsize=(PANEL_INCHES * 1.5, PANEL_INCHES * 1.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.scatter([p["quantile"] for p in points], [p["abs_effect"] for p in points])
    for p in points:
        ax.annotate(p["effect"], (p["quantile"], p["abs_effect"]), fontsize=7, xytext=(3, 3),
                    textcoords="offset points")
    ax.set_xlabel("half-normal quantile")
    ax.set_ylabel("|effect|")
    ax.set_title("half-normal plot of effects", fontsize=9)
    return _png(fig, dpi)
