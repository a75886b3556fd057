"""Both readings of one state dir give one table (issue 22, item 4).

Every example experiment under configs/ (made small: one execution, few
iterations) and small experiments holding every slot state the schedule knows
(skipped, errored, timed out, crashed, running, outstanding; a failed pair
execution) run with ``coldrun start --simulate-reboots``; the state dir is
exported ``--format krun`` and ``--format native``, and ``coldrun-analyze table``
must print the same table from both: same keys, same classified rows, same
rows for executions without data.
"""

from __future__ import annotations

import json

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from coldrun_helpers import REPO, coldrun, make_experiment, pause_env
from pair_experiments import pair_experiment
from root_runs import runs_as_invoker

EXAMPLES = sorted(p.name for p in (REPO / "configs").glob("*.toml"))
TWO_CPUS = len(os.sched_getaffinity(0)) >= 2


def _small(text: str) -> str:
    """An example experiment made quick: one execution per key ([stop]: two), 12 in-process iterations,
    its benchmarks found from anywhere."""
    text = text.replace('benchmarks_dir = "demo/benchmarks"',
                        f'benchmarks_dir = "{REPO / "configs" / "demo" / "benchmarks"}"')
    text = re.sub(r"^executions = \d+", "executions = 1", text, flags=re.M)
    text = re.sub(r"^iterations = \d+", "iterations = 12", text, flags=re.M)
    text = re.sub(r"^(min|max)_executions = \d+", r"\1_executions = 2", text, flags=re.M)
    return runs_as_invoker(text)


def _tables(state: Path, tmp_path: Path) -> dict[str, tuple[int, str, str]]:
    """Per export format: coldrun-analyze table's exit status, stdout and stderr (the file's dir elided)."""
    out = {}
    for fmt in ("krun", "native"):
        d = tmp_path / f"read-{fmt}"
        d.mkdir(parents=True, exist_ok=True)
        path = d / "results.json.bz2"
        e = coldrun("export", str(state), "--format", fmt, "-o", str(path))
        assert e.returncode == 0, e.stderr
        # The plan differs by design: only the native bundle records what an execution's reboot costs.
        t = subprocess.run([sys.executable, "-m", "analysis.cli", "table", str(path), "--quality", "low",
                            "--plan-target", "none"],
                           capture_output=True, text=True, cwd=str(REPO), timeout=120)
        out[fmt] = (t.returncode, t.stdout, t.stderr.replace(str(d), "DIR"))
    return out


def readings_agree(state: Path, tmp_path: Path) -> str:
    """The table both readings print (asserted equal), for further checks."""
    tables = _tables(state, tmp_path)
    assert tables["krun"] == tables["native"], f"krun:\n{tables['krun'][1]}\nnative:\n{tables['native'][1]}"
    rc, stdout, stderr = tables["krun"]
    assert rc == 0, stderr
    return stdout


def _rows(table: str) -> set[tuple[str, ...]]:
    """The rows of the table of executions without data: (benchmark, vm, execution, state)."""
    rows = set()
    for line in table.splitlines():
        m = re.match(r"(\S+)\s+(\S+)\s+(#\d+)\s+(.+?)\s*$", line)
        if m:
            rows.add(m.groups())
    return rows


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_reads_the_same_from_both_exports(example, demo_built, tmp_path):
    text = (REPO / "configs" / example).read_text()
    if "[duet]" in text and not TWO_CPUS:
        pytest.skip("a [duet] experiment needs 2 CPUs; this machine gives the tests fewer")
    exp = tmp_path / example
    exp.write_text(_small(text))
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=600)
    assert "experiment finished" in r.stderr, r.stderr[-3000:]
    assert "Benchmark" in readings_agree(state, tmp_path)


def test_skipped_failed_timed_out_crashed_and_unrun_slots_read_the_same(tmp_path):
    exp = make_experiment(tmp_path, {"fib": "ok", "fib2": "ok", "bad": "fail", "hang": "hang"}, executions=2,
                          extra='skip = ["fib2:*:*"]\nexecution_timeout = "2s"\n'
                                '[rerun]\nmax_attempts = 1\ncrashed = "mark"\n')
    state = tmp_path / "state"
    # Killed with the second boot's runner in flight: an export now holds a running and outstanding slots.
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), env=pause_env("during-run@2"))
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    rows = _rows(readings_agree(state, tmp_path / "cut"))
    assert ("fib2", "fake", "#1", "skipped (no data)") in rows
    assert any(row[3] == "still running (no data)" for row in rows), rows
    assert any(row[3] == "not run yet (no data)" for row in rows), rows
    # The next boot marks the cut execution crashed and runs the rest.
    r = coldrun("resume", str(state), timeout=300)
    assert "experiment finished" in r.stderr, r.stderr[-3000:]
    rows = _rows(readings_agree(state, tmp_path / "done"))
    states = {row[3] for row in rows}
    assert states == {"skipped (no data)", "errored (no data)", "timed out (no data)", "crashed (no data)"}, rows
    assert {row[:3] for row in rows if row[3] == "skipped (no data)"} == {("fib2", "fake", "#1"),
                                                                         ("fib2", "fake", "#2")}
    # status lists every failed execution, the crashed one (no record) too, as the export reads them
    failures = json.loads(coldrun("status", str(state), "--json").stdout)["failures"]
    failed_rows = {(r[0], r[2], r[3].removesuffix(" (no data)")) for r in rows if r[3] != "skipped (no data)"}
    assert {(f["key"].split(":")[0], f"#{f['pexec'] + 1}", f["state"].replace("_", " ")) for f in failures} \
        == failed_rows and len(failures) == len(failed_rows)
    assert all(f["reason"] for f in failures)


@pytest.mark.skipif(not TWO_CPUS, reason="pair executions need 2 CPUs; this machine gives the tests fewer")
def test_failed_and_crashed_pair_executions_read_the_same(tmp_path):
    exp = pair_experiment(tmp_path, [("ok", "ok"), ("ok", "crash")], executions=2, iterations=6,
                          extra='[rerun]\nmax_attempts = 1\ncrashed = "mark"\n')
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), env=pause_env("during-run@1"))
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    r = coldrun("resume", str(state), timeout=300)
    assert "experiment finished" in r.stderr, r.stderr[-3000:]
    states = {row[3] for row in _rows(readings_agree(state, tmp_path))}
    assert {"crashed (no data)", "errored (no data)"} <= states, states
