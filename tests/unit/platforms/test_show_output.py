"""`coldrun platform show`: long values are wrapped, never cut; --json gives the same facts and reports."""

from __future__ import annotations

import io
import json

import pytest

from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platform_cli import NOW_WIDTH, WANTS_WIDTH, show, table_rows

from platform_helpers import LINUX_SHAPES, ROOTS


def test_a_long_cell_wraps_under_its_column_and_the_last_column_stays_whole():
    rows = table_rows(["tickless", "CONFIG_NO_HZ_FULL=y, nohz_full=1-3", "CONFIG_NO_HZ_FULL=y, nohz_full covers "
                       "1-3", "cannot: " + "x" * 120], [8, 20, 20])
    assert rows[0] == f"{'tickless':8}  {'CONFIG_NO_HZ_FULL=y,':20}  {'CONFIG_NO_HZ_FULL=y,':20}  cannot: {'x' * 120}"
    assert rows[1:] == [f"{'':8}  {'nohz_full=1-3':20}  nohz_full covers 1-3"]


@pytest.mark.parametrize("shape", LINUX_SHAPES)
def test_every_found_and_wanted_value_is_shown_whole(shape):
    out = io.StringIO()
    reports = show(PlatformPolicy(), str(ROOTS / shape), "linux", out=out)
    lines = out.getvalue().splitlines()
    w = max(len(r.control) for r in reports)
    now, wants = slice(w + 2, w + 2 + NOW_WIDTH), slice(w + 4 + NOW_WIDTH, w + 4 + NOW_WIDTH + WANTS_WIDTH)
    squeeze = lambda text: "".join(text.split())     # noqa: E731  (wrapping only moves whitespace)
    for r in reports:
        i = next(i for i, ln in enumerate(lines) if ln.startswith(r.control + " "))
        rows, j = [lines[i]], i + 1
        while j < len(lines) and lines[j].startswith(" "):
            rows.append(lines[j])
            j += 1
        assert squeeze("".join(row[now] for row in rows)) == squeeze(r.found), r.control
        assert squeeze("".join(row[wants] for row in rows)) == squeeze(r.wanted), r.control


def test_the_tickless_line_that_was_cut_is_whole_now():
    out = io.StringIO()
    show(PlatformPolicy(), str(ROOTS / "intel-desktop"), "linux", out=out)
    lines = out.getvalue().splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("tickless "))
    assert "CONFIG_NO_HZ_FULL=y, nohz_full=1-3" in lines[i]     # 34 characters: fits, no longer cut at 34
    assert "nohz_full covers 1-3" in lines[i] + lines[i + 1]


@pytest.mark.parametrize("shape", LINUX_SHAPES)
def test_json_has_the_machine_and_every_report(shape):
    text, js = io.StringIO(), io.StringIO()
    reports = show(PlatformPolicy(), str(ROOTS / shape), "linux", out=text)
    show(PlatformPolicy(), str(ROOTS / shape), "linux", out=js, as_json=True)
    doc = json.loads(js.getvalue())
    assert doc["controls"] == [r.as_dict() for r in reports]
    assert doc["unavailable"] == [r.control for r in reports if r.action == "unavailable"]
    assert text.getvalue().startswith(f"machine: {'VIRTUAL' if doc['machine']['virtual'] else 'bare metal'} "
                                      f"({doc['machine']['virtual_reason']})")
    assert f"kernel: {doc['machine']['kernel']}; cpus online: {doc['machine']['cpus_online']}" in text.getvalue()
    assert f"temperature sensors: {len(doc['machine']['temperatures'])}" in text.getvalue()
