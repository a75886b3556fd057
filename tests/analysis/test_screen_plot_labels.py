"""Issue 28: the screening plots' labels never print over each other (near-equal effects on the half-normal
plot, a block's level names side by side)."""

from __future__ import annotations

from itertools import combinations

from scipy.special import ndtri

from analysis.reports import screen_plots


def drawn(monkeypatch, plot, analysis):
    """The figure a plot function makes, after _png laid it out."""
    figures = []
    original = screen_plots._png

    def keep(fig, dpi):
        png = original(fig, dpi)
        figures.append(fig)
        return png

    monkeypatch.setattr(screen_plots, "_png", keep)
    assert plot(analysis).startswith(b"\x89PNG")
    (fig,) = figures
    return fig


def overlapping(fig) -> list[tuple[str, str]]:
    renderer = fig.canvas.get_renderer()
    pairs = []
    for ax in fig.axes:
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in [*ax.texts, *ax.get_xticklabels()]]
        pairs += [(a, b) for (a, p), (b, q) in combinations(boxes, 2) if p.overlaps(q)]
    return pairs


def test_near_equal_effects_get_labels_apart_on_the_half_normal_plot(monkeypatch):
    factors = {"build": ["plain", "lto"], "allocator": ["glibc", "jemalloc"], "governor": ["ondemand", "performance"]}
    effects = ["build=1", "allocator=1", "governor=1", "build:allocator", "build:governor", "allocator:governor"]
    values = [0.01, 0.02, 0.4, 0.7831, 0.7831, 0.79]       # two aliases' equal effects, a third close by
    m = len(values)
    points = [{"effect": e, "abs_effect": v, "quantile": float(ndtri(0.5 + 0.5 * (i + 0.5) / m))}
              for i, (e, v) in enumerate(zip(effects, values))]
    fig = drawn(monkeypatch, screen_plots.half_normal_png, {"factors": factors, "half_normal": points})
    assert len(fig.axes[0].texts) == len(effects)
    assert overlapping(fig) == []


def block_plot(monkeypatch, names: list[str]):
    factors = {"compiler": names, "heap": ["small", "large"]}
    boxes = [{"others": {"heap": h}, "means": {"0": 1.0, "1": 1.0001}} for h in (0, 1)]
    by_compiler = [{"others": {"compiler": c}, "means": {"0": 1.0, "1": 1.1}} for c in (0, 1)]
    plots = {"compiler": {"levels": [0, 1], "boxes": boxes, "chance": None, "consistent": None},
             "heap": {"levels": [0, 1], "boxes": by_compiler, "chance": None, "consistent": None}}
    return drawn(monkeypatch, screen_plots.block_plots_png, {"factors": factors, "block_plots": plots})


def test_a_blocks_level_names_stand_apart(monkeypatch):
    fig = block_plot(monkeypatch, ["gcc", "clang"])
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["clang", "clang", "gcc", "gcc"]
    assert overlapping(fig) == []


def test_names_too_long_to_stand_apart_become_numbers_the_title_names(monkeypatch):
    fig = block_plot(monkeypatch, ["gcc-12-with-lto-and-pgo", "clang-16-with-lto-and-pgo"])
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["1", "1", "2", "2"]
    assert overlapping(fig) == []       # the other panel's ticks, named by these levels, too
    assert fig.axes[0].get_title().endswith("1 = gcc-12-with-lto-and-pgo, 2 = clang-16-with-lto-and-pgo")
