"""``table``'s Plan section (issue 39 item 4's report line): one ``plan_line`` per key under the text and
HTML tables, from what the table analysed (no second analysis); ``--plan-target none`` leaves it out."""

from __future__ import annotations

import re

import pytest

from analysis import pipeline
from analysis.cli import main

from test_plan import KEYS, native_export  # noqa: F401  (a fixture: two keys x 6 executions)

LINE = re.compile(r"±1% needs about \d+ executions × \d+ iterations, ~\d")


def _table(path, capsys, *extra) -> str:
    assert main(["table", str(path), "--no-progress", "--quality", "low", *extra]) == 0
    return capsys.readouterr().out


def test_text_table_has_a_plan_line_per_key(native_export, capsys):
    out = _table(native_export, capsys)
    head, _, section = out.partition("\nPlan: ")
    assert section, out
    assert "±1% of the steady mean at 99% confidence" in section
    assert "median gap between executions 100 s" in section    # the native export's reboots, measured
    for key in KEYS:
        bench, vm, _ = key.split(":")
        rows = [line for line in section.splitlines() if line.split()[:2] == [bench, vm]]
        assert len(rows) == 1 and LINE.search(rows[0]), section


def test_the_same_numbers_as_the_plan_command(native_export, capsys):
    section = _table(native_export, capsys, "--plan-target", "0.5%").partition("\nPlan: ")[2]
    assert main(["plan", str(native_export), "--target", "0.5%", "--no-progress"]) == 0
    planned = capsys.readouterr().out
    for key in KEYS:
        executions, iterations = next(line for line in planned.splitlines()
                                      if line.strip().startswith(key)).split()[1:3]
        assert f"±0.5% needs about {executions} executions × {iterations} iterations" in section


def test_html_table_has_the_plan_section(native_export, capsys):
    html = _table(native_export, capsys, "--format", "html", "--no-plots", "--no-pilot")
    section = html[html.index('<section class="plan">'):]
    section = section[:section.index("</section>")]
    assert "<h2>Plan</h2>" in section
    for key in KEYS:
        bench, vm, _ = key.split(":")
        assert re.search(rf"<td>{bench}</td><td>{vm}</td><td>±1% needs about \d+ executions × \d+ iterations, ~",
                         section), section


@pytest.mark.parametrize("fmt", ["text", "html"])
def test_plan_target_none_leaves_it_out(native_export, capsys, fmt):
    out = _table(native_export, capsys, "--format", fmt, "--no-plots", "--no-pilot", "--plan-target", "none")
    assert "needs about" not in out and "Plan:" not in out and 'class="plan"' not in out


def test_no_second_analysis(native_export, capsys, monkeypatch):
    """The plan reads the table's analysed results: the pipeline runs once per input."""
    calls = []
    analyse = pipeline.analyse
    monkeypatch.setattr(pipeline, "analyse", lambda *a, **k: calls.append(1) or analyse(*a, **k))
    out = _table(native_export, capsys)
    assert "needs about" in out and len(calls) == 1


def test_bad_plan_target_is_refused(native_export, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["table", str(native_export), "--plan-target", "fast"])
    assert exit_.value.code == 2
    assert "--plan-target: cannot read 'fast'" in capsys.readouterr().err
