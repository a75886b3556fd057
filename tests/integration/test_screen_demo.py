"""configs/screening.toml runs with --simulate-reboots; every record holds the levels its runner really got,
the native export carries the design; bad [screening] input is one line before anything runs."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
from collections import Counter

import pytest

from coldrun_helpers import REPO, coldrun, one_line_error
from root_runs import runs_as_invoker

PAD = "COLDRUN_DEMO_PAD"


def demo_file(tmp_path, text: str | None = None) -> str:
    """configs/screening.toml (or ``text``) with an absolute benchmarks_dir; as root, run as the invoker."""
    text = text or (REPO / "configs" / "screening.toml").read_text()
    p = tmp_path / "screening.toml"
    p.write_text(runs_as_invoker(text.replace('benchmarks_dir = "demo/benchmarks"',
                                              f'benchmarks_dir = "{REPO / "configs" / "demo" / "benchmarks"}"')))
    return str(p)


def test_check_prints_design_order_boots_and_eta(demo_built, tmp_path):
    r = coldrun("check", demo_file(tmp_path))   # as root: the benchmark user is you
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    out = r.stdout
    assert "screening: full factorial, 6 of 8 treatments run" in out
    assert "warning:   build: treatments per level now plain: 4, fp: 2" in out
    assert "design order (12 executions):" in out and "boots: up to 13 (12 executions, 0 level switches" in out
    assert "ETA: at least" in out


def test_demo_runs_and_every_record_holds_the_levels_in_force(demo_built, tmp_path):
    state = tmp_path / "state"
    r = coldrun("start", demo_file(tmp_path), "--simulate-reboots", "--state-dir", str(state), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    st = coldrun("status", str(state))
    assert st.returncode == 0 and "screening (full factorial): batch 0: 6/6 treatments done (12/12 runs)" in st.stdout
    st = coldrun("status", str(state), "--json")
    assert json.loads(st.stdout)["screening"]["batches"] == [
        {"batch": 0, "boot_check": False, "levels": {}, "treatments": 6, "treatments_done": 6, "runs": 12,
         "runs_done": 12}]
    out = tmp_path / "screen.json.bz2"
    r = coldrun("export", str(state), "--format", "native", "-o", str(out))
    assert r.returncode == 0, r.stderr
    bundle = json.loads(bz2.decompress(out.read_bytes()))
    sc = bundle["screening"]
    assert sc["design"] == "full factorial" and sc["seed"] == bundle["seed"]
    assert sc["factors"] == {"build": ["plain", "fp"], "envsize": ["small", "large"], "runner": ["c", "python"]}
    runs = bundle["executions"]
    assert len(runs) == 12 and all(e["state"] == "completed" and len(e["wallclock_times"]) == 20 for e in runs)
    pad = {"small": "x", "large": "x" * 512}
    variant = {("plain", "c"): "c-plain", ("fp", "c"): "c-fp", ("plain", "python"): "python"}
    for e in runs:
        levels = e["screening"]["levels"]
        assert set(levels) == set(sc["factors"])
        assert e["environment"][PAD] == pad[levels["envsize"]]            # what the runner got
        assert e["vm"] == levels["runner"] and e["variant"] == variant[(levels["build"], levels["runner"])]
        assert e["screening"]["batch"] == 0
    # each of the 2 replicates ran each of the 6 kept treatments once
    per_rep = Counter((e["screening"]["replicate"], e["screening"]["treatment"]) for e in runs)
    assert len(per_rep) == 12 and set(per_rep.values()) == {1}
    assert {t for _, t in per_rep} == {0, 1, 2, 3, 4, 6}       # 5 and 7 (python with fp) excluded

    # The analysis reads the supervisor's export as it is (analysis/screen/native.py).  Every iteration is
    # kept: whether a 20-iteration run reaches a steady state depends on the machine's load, not on the reading.
    a = subprocess.run([sys.executable, "-m", "analysis.cli", "screen", str(out), "--json", "--no-steady-state"],
                       cwd=str(REPO),
                       capture_output=True, text=True, timeout=600)
    assert a.returncode == 0, a.stderr[-2000:]
    fib = json.loads(a.stdout)["responses"]["fib"]
    assert fib["factors"] == sc["factors"] and fib["samples"] == 12
    ran = {tuple(sc["factors"][f].index(e["screening"]["levels"][f]) for f in sc["factors"]) for e in runs}
    assert sorted(tuple(t["levels"][f] for f in sc["factors"]) for t in fib["treatments"]) == sorted(ran)
    assert all(t["n"] == 2 and t["ci"][0] <= t["mean"] <= t["ci"][1] for t in fib["treatments"])


BAD = [
    ("unknown control", ('kind = "vm"', 'kind = "control"\ncontrol = "frequency"'),
     "screening.factors.runner: control 'frequency' is not a [platform] control coldrun sets"),
    ("one level", ('levels = ["c", "python"]', 'levels = ["c"]'),
     "screening.factors.runner: levels: a factor needs at least two levels, got 1"),
    ("exclusion of everything", ('exclude = [{runner = "python", build = "fp"}]',
                                 'exclude = [{runner = "python"}, {runner = "c"}]'),
     "screening.exclude: removes all 8 treatments of the full factorial design"),
    ("too many boots", ('design = "full"', 'design = "full"\nmax_boots = 10'),
     "screening.max_boots: the full factorial design needs up to 13 boots"),
]


@pytest.mark.parametrize("what,change,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_screening_input_is_one_line_before_anything_runs(demo_built, tmp_path, what, change, fragment):
    text = (REPO / "configs" / "screening.toml").read_text()
    assert change[0] in text
    path = demo_file(tmp_path, text.replace(change[0], change[1], 1))
    one_line_error(coldrun("check", path), path, fragment)
    state = tmp_path / "state"
    one_line_error(coldrun("start", path, "--simulate-reboots", "--state-dir", str(state)), path, fragment)
    assert not (state / "schedule").exists()


def test_a_level_this_machine_cannot_take_is_refused_by_check(demo_built, tmp_path):
    """One line per level the machine refuses (here a kernel governor no driver of this machine offers; on
    a machine without cpufreq, every governor level; a name that is no kernel governor at all is refused
    by the file's validation); tests/unit/supervisor/test_screen_levels.py pins the lines on fixture trees."""
    text = (REPO / "configs" / "screening.toml").read_text().replace(
        "[screening.factors.runner]", '[platform]\ngovernor = "ignore"\n[screening.factors.gov]\nkind = "control"\n'
        'control = "governor"\nlevels = ["performance", "conservative"]\n[screening.factors.runner]', 1)
    path = demo_file(tmp_path, text)
    r = coldrun("check", path)     # check, not start: a start here would control this very machine
    assert r.returncode != 0 and "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("coldrun: ")]
    assert 1 <= len(lines) <= 2 and lines == [ln for ln in lines if
                                              f"{path}: screening.factors.gov.levels: governor = " in ln]
    assert any("conservative cannot be set on this machine" in ln for ln in lines)
