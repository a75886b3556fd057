"""Run-sequence plots (analysis.plots) of the golden annotated results."""

import json
import struct

import pytest
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_rgba

from analysis.plots import (PlotError, PlotRequest, absolute_delta, build_figure, execution_png, plot_axes,
                            plot_execution, plot_filename, plot_many, segments_of, steady_segment_indices)

from shared_paths import golden_annotated_corpus
RICHARDS = "richards:Graal:default-java"


@pytest.fixture(scope="module")
def annotated() -> dict:
    return golden_annotated_corpus()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_segments_use_changepoint_as_last_iteration():
    segs = segments_of([3, 7], [5.0, 2.0, 1.0], [0.1, 0.1, 0.1], 10)
    assert [(s.start, s.end) for s in segs] == [(0, 3), (4, 7), (8, 9)]
    with pytest.raises(PlotError):
        segments_of([3], [1.0], [0.1], 10)


def test_steady_segments_walk_back_while_equivalent():
    segs = segments_of([9, 19, 29], [5.0, 1.0005, 1.0, 1.0002], [0, 0, 0, 0], 40)
    assert steady_segment_indices(segs, 0.001, "warmup") == {1, 2, 3}
    assert steady_segment_indices(segs, 0.0001, "warmup") == {3}
    assert steady_segment_indices(segs, 0.001, "no steady state") == set()
    assert absolute_delta("10%", segs) == pytest.approx(0.1)
    assert absolute_delta("0.001", segs) == 0.001


def test_figure_elements_match_annotations(annotated):
    fig = build_figure(annotated, RICHARDS, 0, "oraclebox")
    data, first, _ = plot_axes(fig)
    assert len(data) == 2 and first is not None  # no core cycle counts in this corpus: main + zoom
    main = fig.axes[0]
    cpts = annotated["changepoints"][RICHARDS][0]
    by_gid = {c.get_gid(): c for c in main.collections}
    vlines = by_gid["changepoints"].get_segments()
    assert sorted(float(seg[0][0]) for seg in vlines) == cpts
    # Outliers circled: one scatter whose points are the outlier indices.
    outliers = by_gid["outliers"]
    assert isinstance(outliers, PathCollection) and outliers.get_facecolors().size == 0  # open circles
    assert sorted(int(x) for x, _ in outliers.get_offsets()) == annotated["all_outliers"][RICHARDS][0]
    # Segment means: one dashed horizontal line per segment, at the segment's mean.
    levels = [float(seg[0][1]) for seg in by_gid["segment-means"].get_segments()]
    assert levels == pytest.approx(annotated["changepoint_means"][RICHARDS][0])
    assert by_gid["segment-means"].get_linestyle()[0][1]  # dashed
    # Richards warms up: only the last segment is steady (black); the rest grey.
    steady, other = by_gid["steady-segments"], by_gid["other-segments"]
    assert isinstance(steady, LineCollection)
    assert len(steady.get_segments()) == 1 and len(other.get_segments()) == len(cpts)
    assert steady.get_segments()[0][-1][0] == len(annotated["wallclock_times"][RICHARDS][0]) - 1
    assert tuple(steady.get_colors()[0]) == to_rgba("black")
    assert tuple(other.get_colors()[0]) != to_rgba("black")
    title = fig._suptitle.get_text()
    assert title == "richards, Graal, oraclebox, Proc. exec. #1 (warmup)"


def test_zoom_panel_narrows_to_steady_state(annotated):
    fig = build_figure(annotated, RICHARDS, 0, "m")
    main, zoom = fig.axes[:2]
    (m_lo, m_hi), (z_lo, z_hi) = main.get_ylim(), zoom.get_ylim()
    assert m_lo <= z_lo < z_hi <= m_hi
    assert (z_hi - z_lo) < (m_hi - m_lo) / 10
    # Timer-quantised data whose whole range is three clock ticks: zooming
    # to 1% of the value would be wider, so the main panel's range is kept.
    fig = build_figure(annotated, "nsieve:Graal:default-java", 0, "m")
    assert fig.axes[1].get_ylim() == fig.axes[0].get_ylim()


def test_zoom_panel_centres_on_a_constant_steady_state(annotated):
    """Warm-up from 0.05 s to an exactly constant 0.0123 s: the zoomed panel
    narrows around the constant value instead of keeping the full range."""
    data = json.loads(json.dumps(annotated))
    times = [0.05] * 60 + [0.0123] * 440
    data["wallclock_times"][RICHARDS][0] = times
    for name, value in (("changepoints", [59]), ("changepoint_means", [0.05, 0.0123]),
                        ("changepoint_vars", [0.0, 0.0]), ("all_outliers", []),
                        ("classifications", "warmup")):
        data[name][RICHARDS][0] = value
    fig = build_figure(data, RICHARDS, 0, "m")
    (m_lo, m_hi), (z_lo, z_hi) = fig.axes[0].get_ylim(), fig.axes[1].get_ylim()
    assert z_lo < 0.0123 < z_hi
    assert (z_hi - z_lo) < (m_hi - m_lo) / 10


def test_core_cycle_panels_added(annotated):
    data = json.loads(json.dumps(annotated))
    times = data["wallclock_times"][RICHARDS][2]
    data["core_cycle_counts"][RICHARDS][2] = [[int(t * 3e9) for t in times] for _ in range(3)]
    fig = build_figure(data, RICHARDS, 2, "m")
    data, _, _ = plot_axes(fig)
    assert len(data) == 5
    assert [ax.get_ylabel() for ax in data[2:]] == ["CC #0", "CC #1", "CC #2"]


def test_png_bytes_and_file(annotated, tmp_path):
    png = execution_png(annotated, "fasta:Graal:default-java", 6, "oraclebox", dpi=50)
    w, h = png_size(png)
    assert (w, h) == (400, 310)
    out = plot_execution(annotated, "nsieve:Graal:default-java", 0, "oraclebox",
                         tmp_path / plot_filename("nsieve:Graal:default-java", 0))
    assert out.name == "nsieve__Graal__default-java__0.png"
    assert png_size(out.read_bytes())[0] > 0


@pytest.mark.parametrize("key,pexec,needle", [
    ("nope:Graal:x", 0, "no benchmark"),
    (RICHARDS, 8, "execution 8 does not exist"),
    ("badkey", 0, "bench:vm:variant"),
])
def test_bad_requests_raise_plot_error(annotated, key, pexec, needle):
    with pytest.raises(PlotError, match=needle):
        build_figure(annotated, key, pexec, "m")


def test_unclassified_execution_is_plotted_without_marks(annotated):
    data = json.loads(json.dumps(annotated))
    for field in ("changepoints", "changepoint_means", "changepoint_vars"):
        data[field][RICHARDS][0] = []
    data["classifications"][RICHARDS][0] = None  # too short for changepoints
    fig = build_figure(data, RICHARDS, 0, "m")
    gids = {c.get_gid() for c in fig.axes[0].collections}
    assert "other-segments" in gids and "changepoints" not in gids and "segment-means" not in gids
    assert fig._suptitle.get_text().endswith("(unclassified)")


def test_crashed_and_unannotated_executions(annotated):
    data = json.loads(json.dumps(annotated))
    data["wallclock_times"][RICHARDS][1] = []
    with pytest.raises(PlotError, match="no iterations"):
        build_figure(data, RICHARDS, 1, "m")
    del data["changepoints"]
    with pytest.raises(PlotError, match="annotate"):
        build_figure(data, RICHARDS, 0, "m")


def test_plot_many_in_workers_matches_serial(annotated, tmp_path):
    requests = [PlotRequest(RICHARDS, 0, "m", dpi=30), PlotRequest(RICHARDS, 1, "m", dpi=30),
                PlotRequest(RICHARDS, 2, "m", target=tmp_path / "r2.svg")]
    parallel = plot_many(annotated, requests, jobs=2)
    serial = plot_many(annotated, requests[:2], jobs=1)
    assert parallel[:2] == serial and parallel[0] != parallel[1]
    assert parallel[2] == tmp_path / "r2.svg" and (tmp_path / "r2.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(PlotError, match="does not exist"):
        plot_many(annotated, [PlotRequest(RICHARDS, 0, "m", dpi=20), PlotRequest(RICHARDS, 99, "m")], jobs=2)


def test_plot_file_names_stay_inside_and_apart():
    """Issue 26 item 16: any key gives one plain file name (no "/", no "..", within NAME_MAX), and keys that
    would read alike after replacing characters keep apart."""
    keys = ["../../x:vm:v", "..__..__x:vm:v", "a/b:vm:v", "a_b:vm:v", "a_:b:c", "a:_b:c", "a__b:c:d",
            "a:b__c:d", "x" * 300 + ":vm:v", "x" * 301 + ":vm:v", "bad", ".:..:.", "a\0b:vm:v"]
    names = [plot_filename(k, 0) for k in keys]
    assert len(set(names)) == len(names), names
    for name in names:
        assert "/" not in name and "\0" not in name and not name.startswith(".") and len(name.encode()) <= 255
    assert plot_filename("nsieve:Graal:default-java", 3) == "nsieve__Graal__default-java__3.png"
