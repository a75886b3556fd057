"""The HTML report says what a paper's reader needs to trust it (issue 15 §2):
where the numbers come from (machine, kernel, coldrun, experiment, dates,
audit, environment differences, analysis settings), a class legend, rows
linking to plots, one execution numbering everywhere, failed executions as
rows saying how they failed, and an inset that never covers data.

Inputs are made here: a small coldrun native export (records with metadata)
and a small Krun file (uname only).
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version

import numpy as np
import pytest

from analysis.cli import main
from analysis.plots import build_figure, inset_length, plot_axes
from analysis.reports.html import execution_caption
from analysis.reports.provenance import NOT_RECORDED
from analysis.summary_json import PAIR_CLASSES

UNAME = "Linux rig1.example.org 6.1.0-trust #1 SMP x86_64"
ITERATIONS = 80
START = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


def _warm(rng):
    return [float((2.0 if i < 10 else 1.0) + rng.normal(0, 0.001)) for i in range(ITERATIONS)]


def _flat(rng):
    return [float(1.0 + rng.normal(0, 0.001)) for _ in range(ITERATIONS)]


def _record(key, pexec, state, times, when, **extra):
    bench, vm, variant = key.split(":")
    rec = {"record_version": 1, "supervisor_version": "9.9.9", "key": key, "bench": bench, "vm": vm,
           "variant": variant, "pexec": pexec, "state": state, "wallclock_times": times,
           "started_at": when, "ended_at": when + 30.0, "containment": "cgroup",
           "platform_before": {"platform": "simulated"}, "exit_code": 0, "stderr_tail": ""}
    rec.update(extra)
    return rec


def native_bundle(rng) -> dict:
    """fib: #1, #3 completed, #2 errored (exit code 1, MemoryError); nbody: two
    completed, the second without a cgroup (an environment difference)."""
    fib, nbody = "fib:PyPy:default-python", "nbody:PyPy:default-python"
    executions = [
        _record(fib, 0, "completed", _warm(rng), START),
        _record(fib, 1, "errored", [], START + 60, exit_code=1, stderr_tail="Traceback\nMemoryError\n"),
        _record(fib, 2, "completed", _warm(rng), START + 120),
        _record(nbody, 0, "completed", _flat(rng), START + 180),
        _record(nbody, 1, "completed", _flat(rng), START + 240, containment="none"),
    ]
    jobs = [{"index": i, "key": e["key"], "pexec": e["pexec"], "state": e["state"], "attempts": 1}
            for i, e in enumerate(executions)]
    return {"format": "coldrun-native", "format_version": 1, "jobs": jobs, "executions": executions,
            "audit": {"uname": UNAME, "platform": "simulated"},
            "experiment": {"name": "trust-exp", "text": "name = \"trust-exp\"\n"}}


def krun_results(rng) -> dict:
    """Only what a bare Krun file has: times, flags and uname; fib #2 errored."""
    return {"wallclock_times": {"fib:PyPy:default-python": [_warm(rng), [], _warm(rng)]},
            "pexec_flags": {"fib:PyPy:default-python": ["C", "E", "C"]},
            "audit": {"uname": UNAME}}


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """The HTML report of each input (plots embedded, no Pilot section)."""
    tmp = tmp_path_factory.mktemp("trust")
    out = {}
    for name, make in (("native", native_bundle), ("krun", krun_results)):
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(make(np.random.default_rng(3))))
        html = tmp / f"{name}.html"
        code = main(["table", str(path), "--format", "html", "--quality", "low", "--seed", "7",
                     "--window", "5", "--no-pilot", "-o", str(html)])
        assert code == 0
        out[name] = html.read_text()
    return out


def about(page: str) -> dict[str, str]:
    """The report's <dt>/<dd> pairs (later inputs overwrite earlier ones; tests use one input)."""
    return dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page))


def test_native_export_metadata_reaches_the_report(pages):
    facts = about(pages["native"])
    assert facts["coldrun (analysis)"] == version("coldrun")
    assert facts["Machine"] == "rig1"
    assert facts["Kernel (uname)"] == UNAME
    assert facts["Experiment"] == "trust-exp"
    assert facts["Executions ran"] == "2023-11-14 22:13:20 UTC to 2023-11-14 22:17:50 UTC"
    assert facts["coldrun (supervisor)"] == "9.9.9"
    assert facts["Audit: platform"] == "simulated"
    assert facts["Execution environments"] == "containment: cgroup (4 executions), none (1 execution)"


def test_analysis_parameters_are_shown(pages):
    facts = about(pages["native"])
    assert facts["window"] == "5"
    assert facts["steady"] == "int(0.25 × iterations) (default)"
    assert facts["delta"] == ("--delta 2%: equivalence within max(variance, 2% of the fastest segment&#x27;s mean) "
                              "of the final segment (coldrun&#x27;s default; the paper&#x27;s: --delta 0.001)")
    assert "10000 resamples" in facts["bootstrap"] and "seed 7" in facts["bootstrap"]


def test_what_a_krun_file_lacks_is_not_recorded(pages):
    facts = about(pages["krun"])
    assert facts["Machine"] == "rig1" and facts["Kernel (uname)"] == UNAME
    for name in ("Experiment", "Executions ran", "coldrun (supervisor)", "Platform audit",
                 "Execution environments"):
        assert facts[name] == NOT_RECORDED, name


def test_legend_names_every_class_with_its_glyph(pages):
    legend = re.search(r'<ul class="legend">(.*?)</ul>', pages["krun"]).group(1)
    for cls in PAIR_CLASSES:
        assert f'aria-label="{cls}"><path' in legend and f"</svg>{cls}</li>" in legend


def _failed_rows(page: str) -> list[list[str]]:
    rows = re.findall(r'<tr class="no-data"[^>]*>(.*?)</tr>', page)
    return [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]


def test_failed_execution_is_a_row_saying_how_it_failed(pages):
    assert _failed_rows(pages["native"]) == [
        ["fib", "PyPy", "#2", "errored (no data)", "exit code 1; stderr: MemoryError"]]
    assert _failed_rows(pages["krun"]) == [["fib", "PyPy", "#2", "errored (no data)", NOT_RECORDED]]


@pytest.mark.parametrize("name", ["native", "krun"])
def test_every_row_link_resolves_to_an_anchor(pages, name):
    page = pages[name]
    links = re.findall(r'href="#([^"]+)"', page)
    ids = set(re.findall(r'id="([^"]+)"', page))
    assert len(links) == (5 if name == "native" else 3)  # one per execution, failed ones too
    assert [link for link in links if link not in ids] == []
    # The errored execution's link leads to its failed row, the others to figures.
    figures = set(re.findall(r'<figure id="([^"]+)"', page))
    failed = set(re.findall(r'<tr class="no-data" id="([^"]+)"', page))
    assert set(links) == figures | failed and len(failed) == 1


def test_execution_numbers_agree_in_table_captions_and_titles(pages, tmp_path):
    page = pages["native"]
    # Table: the link text is the number; the caption of its target says the same number.
    captions = dict(re.findall(r'<figure id="([^"]+)">.*?<figcaption>(.*?)</figcaption>', page))
    for target, number in re.findall(r'<a href="#([^"]+)">(#\d+)</a>', page):
        if target in captions:
            assert captions[target].endswith(f"Proc. exec. {number}")
    # Plot titles: the figure of each execution is titled with its caption.
    path = tmp_path / "native.json"
    path.write_text(json.dumps(native_bundle(np.random.default_rng(3))))
    annotated_path = tmp_path / "annotated.json"
    assert main(["annotate", str(path), "-o", str(annotated_path), "--window", "5", "--no-progress"]) == 0
    annotated = json.loads(annotated_path.read_text())
    for pexec in (0, 2):
        title = build_figure(annotated, "fib:PyPy:default-python", pexec, "rig1")._suptitle.get_text()
        caption = execution_caption("fib", "PyPy", "rig1", pexec)
        assert title.startswith(caption + " (") and caption in captions.values()


def _annotated(tmp_path, times: list[float]) -> dict:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"wallclock_times": {"b:v:x": [times]}, "audit": {"uname": UNAME}}))
    out = tmp_path / "one.annotated.json"
    assert main(["annotate", str(path), "-o", str(out), "--no-progress"]) == 0
    return json.loads(out.read_text())


def test_inset_left_out_when_it_would_repeat_the_whole_plot(tmp_path):
    rng = np.random.default_rng(1)
    short = [float((2.0 if i < 5 else 1.0) + rng.normal(0, 0.001)) for i in range(40)]
    assert inset_length(len(short)) >= len(short)
    fig = build_figure(_annotated(tmp_path, short), "b:v:x", 0, "rig1")
    assert plot_axes(fig)[1] is None


def test_pilot_section_numbers_executions_as_the_rest(tmp_path):
    path = tmp_path / "native.json"
    path.write_text(json.dumps(native_bundle(np.random.default_rng(3))))
    html = tmp_path / "p.html"
    assert main(["table", str(path), "--format", "html", "--quality", "low", "--no-plots", "-o", str(html)]) == 0
    page = html.read_text()
    rows = re.findall(r"<tr><td>(fib:PyPy:default-python|nbody:PyPy:default-python)</td><td[^>]*>([^<]*)</td>", page)
    numbers = [n for key, n in rows if key.startswith("nbody")]
    assert numbers[-2:] == ["#1", "#2"], rows
