"""Where a run-sequence plot's side panel ("first N iterations") and legend sit, against the data, in display
coordinates (pixels of the drawn figure): neither may cover a data point, a changepoint line or a segment
mean, nor run off the figure or into the title."""

from __future__ import annotations

import numpy as np
from matplotlib.transforms import Bbox

from analysis.plots import plot_axes


def _inside(box: Bbox, xy: np.ndarray) -> np.ndarray:
    return (xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)


def data_points(ax) -> np.ndarray:
    """Display positions of everything an axes draws from the data: line vertices, markers, the ends of
    changepoint and mean lines; only those within the axes' frame (the rest is clipped, never drawn)."""
    pts = []
    for coll in ax.collections:
        if coll.get_gid() == "pilot-stable-segment":
            continue
        offsets = coll.get_offsets()
        if len(offsets) and coll.get_gid() == "outliers":
            pts.append(coll.get_offset_transform().transform(offsets))
        for seg in getattr(coll, "get_segments", lambda: [])():
            pts.append(coll.get_transform().transform(np.asarray(seg, dtype=float)))
    for line in ax.lines:
        pts.append(line.get_transform().transform(np.column_stack(line.get_data())))
    if not pts:
        return np.empty((0, 2))
    xy = np.concatenate(pts)
    return xy[_inside(ax.get_window_extent(), xy)]


def check_layout(fig) -> dict:
    """Asserts the layout rules (module doc); returns the boxes checked, for the test's message."""
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    data, first, legend_ax = plot_axes(fig)
    legend = legend_ax.get_legend()
    boxes = {"legend": legend.get_window_extent(renderer)}
    if first is not None:
        boxes["first iterations"] = first.get_tightbbox(renderer)
    figure = fig.bbox
    title = fig._suptitle.get_window_extent(renderer)
    for ax in data:   # axis labels and tick labels whole, not clipped at the figure's edge
        box = ax.get_tightbbox(renderer)
        assert figure.x0 - 1 <= box.x0 and box.x1 <= figure.x1 + 1, f"{ax.get_ylabel()!r}'s labels are clipped"
    for name, box in boxes.items():
        assert figure.x0 - 1 <= box.x0 and box.x1 <= figure.x1 + 1 and figure.y0 - 1 <= box.y0 \
            and box.y1 <= figure.y1 + 1, f"the {name} runs off the figure: {box} not in {figure}"
        assert not box.overlaps(title), f"the {name} covers the title"
        for ax in data:
            assert not box.overlaps(ax.get_window_extent()), f"the {name} overlaps a data panel ({ax.get_ylabel()!r})"
            covered = _inside(box, data_points(ax))
            assert not covered.any(), f"the {name} covers {int(covered.sum())} data point(s)"
    return boxes
