"""Issue 28 (8): no inset, legend or annotation covers data, on warmup_stats' examples (the golden corpus)
and on adversarial series: outliers early, changepoints early, flat, very short. The boxes are compared with
the data points' positions in display coordinates (tests/plot_layout_checks.py)."""

import json

import numpy as np
import pytest

from analysis.cli import main
from analysis.plots import build_figure, plot_axes

from plot_layout_checks import check_layout
from shared_paths import golden_annotated_corpus

UNAME = "Linux layoutbox 6.1.0 #1 SMP x86_64 GNU/Linux"


@pytest.fixture(scope="module")
def golden() -> dict:
    return golden_annotated_corpus()


def test_golden_examples(golden):
    for key in sorted(golden["wallclock_times"]):
        for pexec in (0, len(golden["wallclock_times"][key]) - 1):
            check_layout(build_figure(golden, key, pexec, "oraclebox"))


def _series(n: int, seed: int = 1) -> np.ndarray:
    return 0.01 + np.random.default_rng(seed).normal(0, 0.0001, n)


def _adversarial() -> dict[str, list[float]]:
    s = _series(300)
    early_outliers = s.copy()
    early_outliers[[1, 2, 4]] = [0.5, 0.4, 0.45]           # spikes where an inset would go (top left)
    early_cpt = s.copy()
    early_cpt[:3] *= 6.0                                    # a level shift at iteration 3
    late_top = s.copy()
    late_top[250:] *= 4.0                                   # data high on the right
    jump = _series(51)
    jump[26:] *= 4.0                                        # Pilot's segment spans it: a longer legend
    everywhere = np.where(np.arange(300) % 2 == 0, 0.001, 0.02)  # no free corner anywhere
    # a sub-millisecond steady state under warmup spikes: the zoomed panel's ticks read 0.000875 and were
    # wider than the fixed left margin (cut off at the figure's edge in a demo run)
    fine = 0.000895 + 0.00011 * ((np.arange(300) * 7) % 300) / 299
    fine[:30] = 0.005
    return {"early-outliers": list(early_outliers), "early-changepoint": list(early_cpt), "fine-ticks": list(fine),
            "late-shift": list(late_top), "flat": [0.01] * 300, "alternating": list(everywhere),
            "short-5": list(_series(5)), "level-shift": list(jump), "short-40": list(_series(40)), "one": [0.02]}


@pytest.fixture(scope="module")
def adversarial(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("layout")
    doc = {"wallclock_times": {f"{name}:vm:x": [times] for name, times in _adversarial().items()},
           "audit": {"uname": UNAME}}
    (tmp / "in.json").write_text(json.dumps(doc))
    assert main(["annotate", str(tmp / "in.json"), "-o", str(tmp / "out.json"), "--no-progress"]) == 0
    return json.loads((tmp / "out.json").read_text())


@pytest.mark.parametrize("name", sorted(_adversarial()))
def test_adversarial_series(adversarial, name):
    fig = build_figure(adversarial, f"{name}:vm:x", 0, "layoutbox")
    boxes = check_layout(fig)
    _, first, legend_ax = plot_axes(fig)
    assert (first is None) == (len(_adversarial()[name]) <= 50)   # the side panel only where it adds something
    labels = [t.get_text() for t in legend_ax.get_legend().get_texts()]
    if adversarial["all_outliers"][f"{name}:vm:x"][0]:
        assert "outlier" in labels                            # every mark drawn has a legend entry
    assert "legend" in boxes


def test_legend_type_is_legible(golden):
    """At least 9 pt in a figure 8 inches wide (the HTML shows two side by side at 1400 px: ~7 pt or more)."""
    fig = build_figure(golden, "richards:Graal:default-java", 0, "m")
    _, _, legend_ax = plot_axes(fig)
    assert fig.get_figwidth() <= 8.0
    assert min(t.get_fontsize() for t in legend_ax.get_legend().get_texts()) >= 9
