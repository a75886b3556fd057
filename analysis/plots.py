"""Run-sequence plots of one process execution, as in the warmup paper.

Main panel: in-process iteration wall-clock times, outliers circled,
changepoints as dashed vertical lines, segment means as dashed horizontal
lines, the steady-state segments (the last one and every earlier segment
equivalent to it) in black and the rest grey. A zoomed panel narrows the
y-axis to the steady state. One panel per core follows when the results carry
core cycle counts. The "first N iterations" panel and the legend sit in a
column of their own right of the data, so neither can cover a point, a
changepoint or a mean, whatever the series (tests/analysis/test_plot_layout.py
checks their boxes against the data in display coordinates).

Beside warmup_stats' changepoints, every time panel shades Pilot's stable
segment (EDM changepoints, the dominant segment: ``analysis.pilot.edm``) as a
light band, so a reader sees where the two methods agree; the legend names
it, or says why Pilot has none (fewer than 30 iterations, or no segment
longer than half the execution).

Input is an annotated Krun results dict (the Krun keys plus warmup_stats'
``all_outliers``, ``changepoints``, ``changepoint_means``,
``changepoint_vars``, ``classifications``, ``classifier``). Figures are drawn
with matplotlib's Agg canvas directly (no pyplot state, nothing interactive).
"""

from __future__ import annotations

import hashlib
import io
import multiprocessing
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from contracts.keys import Key
from analysis.classify import PAPER_DELTA
from analysis.errors import AnalysisError
from analysis.execution_states import execution_number

STEADY_COLOUR = "black"
OTHER_COLOUR = "0.6"
MARK_COLOUR = "red"
PILOT_COLOUR = "tab:blue"
PILOT_ALPHA = 0.13
# The side panel shows this many leading iterations (clamped to the run
# length): warmup_stats' plots used 50-150.
INSET_MIN, INSET_MAX = 50, 150
# Figure width (inches) and the side column's share; type sizes (points) legible
# when the HTML report shows two plots side by side at 1400 px.
FIGURE_WIDTH = 8.0
SIDE_RATIO = (2.6, 1.0)
LABEL_SIZE, TICK_SIZE, LEGEND_SIZE = 10, 9, 9
# The least room (pixels) left between a panel's labels and the figure's left edge.
EDGE_PX = 4
LEGEND_WRAP = 18  # characters per legend line
# Results annotated without a classifier record were classified by warmup_stats: its delta.
DEFAULT_DELTA = PAPER_DELTA
# Title word for an execution the analysis could not classify.
UNCLASSIFIED = "unclassified"


class PlotError(AnalysisError):
    """The annotated results lack what a plot of this execution needs."""


@dataclass(frozen=True)
class Segment:
    start: int  # first original iteration index (inclusive)
    end: int    # last original iteration index (inclusive)
    mean: float
    var: float


def _per_exec(annotated: dict, field: str, key: str, pexec: int, default=None):
    table = annotated.get(field)
    if table is None:
        if default is not None:
            return default
        raise PlotError(f"results have no '{field}' (run the analysis first to annotate them)")
    try:
        return table[key][pexec]
    except (KeyError, IndexError, TypeError):
        if default is not None:
            return default
        raise PlotError(f"'{field}' has no entry for {key} execution {pexec}") from None


def segments_of(changepoints: list[int], means: list[float], variances: list[float],
                length: int) -> list[Segment]:
    """Segments in original indices: a changepoint is the last iteration of its segment."""
    if len(means) != len(changepoints) + 1 or len(variances) != len(means):
        raise PlotError(f"{len(changepoints)} changepoints but {len(means)} segment means "
                        f"and {len(variances)} variances")
    bounds = [-1] + list(changepoints) + [length - 1]
    return [Segment(bounds[i] + 1, bounds[i + 1], float(means[i]), float(variances[i]))
            for i in range(len(means))]


def absolute_delta(delta: str | float, segments: list[Segment]) -> float:
    """warmup_stats' delta: absolute seconds, or 'N%' of the fastest segment mean."""
    text = str(delta).strip()
    if text.endswith("%"):
        return min(s.mean for s in segments) * float(text[:-1]) / 100.0
    return float(text)


def steady_segment_indices(segments: list[Segment], delta: float, classification: str) -> set[int]:
    """The last segment and the earlier ones equivalent to it, walking back
    until the first that is not (warmup_stats' steady-state rule).
    A no-steady-state execution has none."""
    if classification == "no steady state" or not segments:
        return set()
    last = segments[-1]
    lower = min(last.mean - last.var, last.mean - delta)
    upper = max(last.mean + last.var, last.mean + delta)
    steady = {len(segments) - 1}
    for i in range(len(segments) - 2, -1, -1):
        seg = segments[i]
        if seg.mean + seg.var >= lower and seg.mean - seg.var <= upper:
            steady.add(i)
        else:
            break
    return steady


def parse_key(key: str) -> tuple[str, str, str]:
    try:
        bench, vm, variant = Key.parse(key)
    except ValueError:
        raise PlotError(f"key {key!r} is not of the form bench:vm:variant") from None
    return bench, vm, variant


def _draw_run_sequence(ax, times, segments, steady, outliers, *, marks: bool = True,
                       limit: int | None = None) -> None:
    """Times as two line collections (steady black, others grey); means,
    changepoints and outliers as one artist each (tests find them by gid)."""
    n = len(times) if limit is None else min(limit, len(times))
    steady_lines: list[np.ndarray] = []
    other_lines: list[np.ndarray] = []
    means = []
    for i, seg in enumerate(segments):
        lo, hi = seg.start, min(seg.end, n - 1)
        if lo > hi:
            continue
        # Join each segment to the previous point so the line is unbroken.
        xs = np.arange(max(lo - 1, 0), hi + 1)
        (steady_lines if i in steady else other_lines).append(np.column_stack([xs, times[xs]]))
        means.append((seg.mean, lo, hi))
    for lines, colour, gid in ((other_lines, OTHER_COLOUR, "other-segments"),
                               (steady_lines, STEADY_COLOUR, "steady-segments")):
        if lines:
            ax.add_collection(LineCollection(lines, colors=colour, linewidths=0.6, gid=gid))
    ax.autoscale_view()
    if marks and means:
        ys, los, his = zip(*means)
        ax.hlines(ys, los, his, colors=MARK_COLOUR, linestyles="dashed", linewidth=0.9, gid="segment-means")
        cpts = [seg.end for seg in segments[:-1] if seg.end < n]
        if cpts:
            ax.vlines(cpts, 0, 1, transform=ax.get_xaxis_transform(), colors=MARK_COLOUR,
                      linestyles="dashed", linewidth=0.9, gid="changepoints")
    shown = [o for o in outliers if o < n]
    if shown:
        ax.scatter(shown, times[shown], s=28, facecolors="none", edgecolors=MARK_COLOUR,
                   linewidths=0.9, zorder=3, gid="outliers")
    ax.set_xlim(-0.5, n - 0.5)


def pilot_segment(times: np.ndarray) -> tuple[tuple[int, int] | None, str]:
    """Pilot's stable segment [begin, end) of one execution, and its legend label."""
    from analysis.pilot import edm

    if times.size < edm.MIN_SIZE:
        return None, f"Pilot: fewer than {edm.MIN_SIZE} iterations, too few for EDM (all kept)"
    segment = edm.dominant_segment(times)
    if segment is None:
        return None, "Pilot: no stable segment (none longer than half the run)"
    from analysis.pilot.level_shift import level_shift

    shift = level_shift(times, segment)
    warning = "" if shift is None else f"\nWARNING: spans a level shift at iteration {shift.iteration}"
    return segment, f"Pilot stable\nsegment [{segment[0]}, {segment[1]}){warning}"


def _shade_pilot(ax, segment: tuple[int, int] | None) -> None:
    if segment is not None:
        ax.axvspan(segment[0] - 0.5, segment[1] - 0.5, facecolor=PILOT_COLOUR, alpha=PILOT_ALPHA, linewidth=0,
                   zorder=0, gid="pilot-stable-segment")


def _legend(ax, pilot_label: str, changepoints: bool, outliers: bool, marks: bool, steady: bool) -> None:
    """In the side column's lower cell (an axes with no frame): every kind of mark
    the panels draw, each with a proxy artist."""
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Artist] = []
    if steady:
        handles.append(Line2D([], [], color=STEADY_COLOUR, linewidth=0.8, label="steady state"))
    handles.append(Line2D([], [], color=OTHER_COLOUR, linewidth=0.8,
                          label="not steady" if marks else "not classified"))
    if marks:
        handles.append(Line2D([], [], color=MARK_COLOUR, linestyle="dashed", linewidth=0.9, label="segment mean"))
    if changepoints:
        handles.append(Line2D([], [], color=MARK_COLOUR, linestyle="dashed", linewidth=0.9,
                              label="warmup_stats\nchangepoint", marker="|", markersize=10))
    if outliers:
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, markerfacecolor="none",
                              markeredgecolor=MARK_COLOUR, label="outlier"))
    handles.append(Patch(facecolor=PILOT_COLOUR, alpha=PILOT_ALPHA if "[" in pilot_label else 0.0,
                         edgecolor="none", label=pilot_label))
    for h in handles:  # the side column is narrow: wrap long labels
        h.set_label("\n".join(textwrap.fill(part, LEGEND_WRAP) for part in str(h.get_label()).split("\n")))
    ax.set_axis_off()
    ax.legend(handles=handles, loc="upper left", fontsize=LEGEND_SIZE, frameon=False, borderaxespad=0.0,
              handlelength=1.6, handletextpad=0.5, labelspacing=0.6)


def _steady_ylim(times, segments, steady, outliers) -> tuple[float, float]:
    """y-range of the steady-state data (outliers excluded), padded by a
    tenth of its spread; constant data (a coarse timer) gets 1% of its value
    either side, so the zoomed panel still centres on it."""
    skip = set(outliers)
    pool = [float(times[x]) for i in steady for x in range(segments[i].start, segments[i].end + 1)
            if x not in skip]
    if not pool:  # no steady state: use the middle 90% of the data
        ordered = sorted(t for x, t in enumerate(times) if x not in skip) or sorted(times)
        pool = ordered[len(ordered) // 20: max(len(ordered) - len(ordered) // 20, 1)]
    lo, hi = min(pool), max(pool)
    pad = (hi - lo) * 0.1 if hi > lo else (abs(lo) * 0.01 or 1e-9)
    return lo - pad, hi + pad


def inset_length(n_iterations: int) -> int:
    """How many leading iterations the inset shows: 10% of the run within
    [INSET_MIN, INSET_MAX], never more than the run."""
    return min(n_iterations, max(INSET_MIN, min(INSET_MAX, n_iterations // 10)))


def build_figure(annotated: dict, key: str, pexec: int, machine: str) -> Figure:
    """The figure for execution `pexec` (0-based) of `key` (bench:vm:variant)."""
    bench, vm, _variant = parse_key(key)
    wallclock = annotated.get("wallclock_times", {})
    if key not in wallclock:
        known = ", ".join(sorted(wallclock)) or "none"
        raise PlotError(f"no benchmark {key!r} in the results (known: {known})")
    if not 0 <= pexec < len(wallclock[key]):
        raise PlotError(f"{key} has {len(wallclock[key])} process executions; "
                        f"execution {pexec} does not exist (they are numbered from 0)")
    times = np.asarray(wallclock[key][pexec], dtype=np.float64)
    if times.size == 0:
        raise PlotError(f"{key} execution {pexec} has no iterations (it crashed or was not run)")
    changepoints = _per_exec(annotated, "changepoints", key, pexec)
    means = _per_exec(annotated, "changepoint_means", key, pexec)
    variances = _per_exec(annotated, "changepoint_vars", key, pexec)
    classification = _per_exec(annotated, "classifications", key, pexec, default=UNCLASSIFIED)
    outliers = sorted(_per_exec(annotated, "all_outliers", key, pexec, default=[]))
    if classification is None or classification == UNCLASSIFIED or not means:
        # Too short for changepoint analysis: plot the times, mark nothing.
        classification = UNCLASSIFIED
        segments = [Segment(0, len(times) - 1, float(np.mean(times)), 0.0)]
        steady: set[int] = set()
        marks = False
    else:
        segments = segments_of(changepoints, means, variances, len(times))
        delta = absolute_delta((annotated.get("classifier") or {}).get("delta", DEFAULT_DELTA), segments)
        steady = steady_segment_indices(segments, delta, classification)
        marks = True
    cores = _per_exec(annotated, "core_cycle_counts", key, pexec, default=[]) or []
    cores = [c for c in cores if c]

    heights = [3.0, 2.0] + [1.1] * len(cores)
    fig = Figure(figsize=(FIGURE_WIDTH, sum(heights) + 1.2), dpi=100)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(len(heights), 2, height_ratios=heights, width_ratios=SIDE_RATIO, hspace=0.35,
                            wspace=0.3, left=0.13, right=0.99, top=0.87, bottom=0.09)
    main = fig.add_subplot(grid[0, 0])
    _draw_run_sequence(main, times, segments, steady, outliers, marks=marks)
    pilot, pilot_label = pilot_segment(times)
    _shade_pilot(main, pilot)
    main.set_ylabel("Time (secs)", fontsize=LABEL_SIZE)
    fig.suptitle(f"{bench}, {vm}, {machine}, Proc. exec. {execution_number(pexec)} ({classification})", fontsize=12,
                 y=0.985)

    zoom = fig.add_subplot(grid[1, 0], sharex=main)
    _draw_run_sequence(zoom, times, segments, steady, outliers, marks=marks)
    _shade_pilot(zoom, pilot)
    zoomed = _steady_ylim(times, segments, steady, outliers)
    top_lo, top_hi = main.get_ylim()  # never wider than the main panel
    zoom.set_ylim(max(zoomed[0], top_lo), min(zoomed[1], top_hi))
    zoom.set_ylabel("Time (secs)\n(zoomed)", fontsize=LABEL_SIZE)

    last = zoom
    for core, counts in enumerate(cores):
        ax = fig.add_subplot(grid[2 + core, 0], sharex=main)
        ax.plot(range(len(counts)), counts, color=STEADY_COLOUR, linewidth=0.5)
        ax.set_ylabel(f"CC #{core}", fontsize=LABEL_SIZE)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
        last = ax
    last.set_xlabel("In-process iteration", fontsize=LABEL_SIZE)

    # The first iterations, beside the main panel (left out when it would repeat it).
    inset_len = inset_length(len(times))
    if inset_len < len(times):
        inset = fig.add_subplot(grid[0, 1], label="first-iterations")
        _draw_run_sequence(inset, times, segments, steady, outliers, marks=marks, limit=inset_len)
        _shade_pilot(inset, pilot)
        inset.set_title(f"first {inset_len} iterations", fontsize=LABEL_SIZE)
        inset.tick_params(labelsize=TICK_SIZE - 1)
    _legend(fig.add_subplot(grid[1:, 1], label="legend"), pilot_label,
            changepoints=marks and len(segments) > 1, outliers=bool(outliers), marks=marks, steady=bool(steady))
    for ax in (main, zoom, *fig.axes[2:]):
        ax.tick_params(labelsize=TICK_SIZE)
    _fit_left_margin(fig, grid, [main, zoom, *fig.axes[2:2 + len(cores)]])
    return fig


def _fit_left_margin(fig: Figure, grid, panels: list) -> None:
    """Widen the left margin until the panels' y labels and tick labels are inside the figure: ticks
    such as 0.000875 are wider than the fixed margin, and were cut off at the figure's edge."""
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()     # the figure was given an Agg canvas
    left = min(ax.get_tightbbox(renderer).x0 for ax in panels)
    if left < EDGE_PX:
        grid.update(left=grid.left + (EDGE_PX - left) / fig.bbox.width)
        for ax in fig.axes:   # update() moves only pyplot's figures' axes
            spec = ax.get_subplotspec()
            assert spec is not None     # every axes here was added on the grid
            ax.set_position(spec.get_position(fig))


def plot_axes(fig: Figure) -> tuple[list, object | None, object]:
    """(data panels, the first-iterations panel or None, the legend's axes) of a build_figure figure."""
    by_label = {ax.get_label(): ax for ax in fig.axes}
    data = [ax for ax in fig.axes if ax.get_label() not in ("first-iterations", "legend")]
    return data, by_label.get("first-iterations"), by_label["legend"]


def execution_png(annotated: dict, key: str, pexec: int, machine: str, dpi: int = 100) -> bytes:
    """The plot as PNG bytes (for embedding into the HTML report)."""
    fig = build_figure(annotated, key, pexec, machine)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def plot_execution(annotated: dict, key: str, pexec: int, machine: str, out_path) -> Path:
    """Write the plot of one process execution; the format follows the suffix
    (.png, .pdf, .svg)."""
    out = Path(out_path)
    fig = build_figure(annotated, key, pexec, machine)
    fig.savefig(out)
    return out


# What a key part may keep in a file name; anything else (a "/" of "../../x", a NUL) becomes "_".
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")
_STEM_MAX = 200     # leaves room for "-<digest>__<pexec>.<format>" within NAME_MAX (255 bytes)


def plot_filename(key: str, pexec: int, suffix: str = ".png") -> str:
    """A file name for one execution's plot, always one name inside the output directory:
    bench__vm__variant__N.png.  A results file may hold any key: one that does not read back from that
    name alone (a character replaced, a "__" inside a part, another part count, too long) gets a digest
    of the key added, so two keys never share a file."""
    parts = key.split(":")
    stem = "__".join(_UNSAFE.sub("_", p) for p in parts)
    # Parts without "__" inside and "_" at their ends split back exactly at each "__".
    plain = (len(parts) == 3 and stem == "__".join(parts) and len(stem) <= _STEM_MAX and not stem.startswith(".")
             and all(p and "__" not in p and not p.startswith("_") and not p.endswith("_") for p in parts))
    if not plain:
        stem = ("_" if stem.startswith(".") else "") + stem      # no hidden file
        stem = f"{stem[:_STEM_MAX]}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    return f"{stem}__{pexec}{suffix}"


@dataclass(frozen=True)
class PlotRequest:
    key: str
    pexec: int
    machine: str
    target: Path | None = None  # None: return PNG bytes instead of writing
    dpi: int = 100


# The annotated results forked plotting workers read (inherited, not pickled).
_BATCH_RESULTS: dict | None = None


def _plot_one(annotated: dict, req: PlotRequest) -> bytes | Path:
    if req.target is None:
        return execution_png(annotated, req.key, req.pexec, req.machine, dpi=req.dpi)
    return plot_execution(annotated, req.key, req.pexec, req.machine, req.target)


def _plot_in_worker(req: PlotRequest) -> bytes | Path:
    assert _BATCH_RESULTS is not None
    return _plot_one(_BATCH_RESULTS, req)


def plot_many(annotated: dict, requests: list[PlotRequest], jobs: int = 1) -> list[bytes | Path]:
    """Several plots, in order; with jobs > 1 in forked worker processes
    (plots are CPU-bound and independent)."""
    global _BATCH_RESULTS
    if jobs <= 1 or len(requests) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_plot_one(annotated, r) for r in requests]
    _BATCH_RESULTS = annotated
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(requests))) as pool:
            return pool.map(_plot_in_worker, requests, chunksize=1)
    finally:
        _BATCH_RESULTS = None
