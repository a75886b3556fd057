"""A start-up experiment of the paper's shape (warmup_experiment's startup.krun: one dummy benchmark, every
VM in start-up mode, one iteration), in every language this machine has, through `coldrun start
--simulate-reboots` for real, as the benchmark user when the tests run as root; its Krun export read by a
reimplementation of the paper's ``bin/table_startup_results`` (written here), and by `coldrun-analyze`.

CPython 2.7 runs in an experiment of its own, as the invoker: Debian 12 ships no python2.7, and the one
the tests find (pyenv, under /root) is out of a benchmark user's reach.
"""

from __future__ import annotations

import bz2
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import pytest

from coldrun_helpers import NO_WAITS, coldrun, run_and_export
from real_parts import missing_real_part, python27_interpreter
from root_runs import runs_as_invoker
from test_languages import LANGS       # every language runner, its interpreter and Debian package
from iteration_runners import languages

EXECUTIONS = 3
# VM name (the runner's) -> (runner, executable or "" for C, the Debian package that brings it)
VMS = {lang.runner: (lang.runner, "" if lang.runner == "c" else lang.tool, lang.package) for lang in LANGS.values()}
TARGETS = {lang.runner: lang.target for lang in LANGS.values()}


def paper_startup_table(results: dict) -> dict[str, dict[str, list[float]]]:
    """warmup_experiment's bin/table_startup_results, its reading part, reimplemented: machine -> VM ->
    start-up times (result[1] - result[0] of each process execution), keys without executions or whose
    first execution is empty skipped, as the script does."""
    machine = results["audit"]["uname"].split(" ")[1].split(".")[0]
    summary: dict[str, list[float]] = {}
    for key in sorted(results["wallclock_times"]):
        wallclock_times = results["wallclock_times"][key]
        if len(wallclock_times) == 0 or len(wallclock_times[0]) == 0:
            continue
        summary[key.split(":")[1]] = [result[1] - result[0] for result in wallclock_times]
    return {machine: summary}


@pytest.fixture
def open_dir():
    """An experiment directory a fresh benchmark user can reach (pytest's tmp dirs are 0700)."""
    d = Path(tempfile.mkdtemp(prefix="coldrun-startup-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def experiment(d: Path, vms: dict[str, tuple[str, str, str]]) -> Path:
    bench = d / "benchmarks" / "binarytrees"
    bench.mkdir(parents=True)
    for name in set(TARGETS.values()):
        (bench / name).write_text("not loaded in start-up mode\n")
    for p in [d / "benchmarks", bench, *bench.iterdir()]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    text = f'name = "startup"\nexecutions = {EXECUTIONS}\nexecution_timeout = "2min"\n{NO_WAITS}' \
           f'[benchmarks]\nbinarytrees = 18\n'
    for runner in sorted({r for r, _, _ in vms.values()}):
        text += f'[variants.default-{runner}]\ntarget = "{TARGETS[runner]}"\n'
    for name, (runner, exe, _) in vms.items():
        text += f'[vms.{name}]\nrunner = "{runner}"\nmode = "startup"\niterations = 1\n'
        text += f'variants = ["default-{runner}"]\n' + (f'executable = "{exe}"\n' if exe else "")
    path = d / "startup.toml"
    path.write_text(text)
    return path


def available(vms: dict[str, tuple[str, str, str]]) -> dict[str, tuple[str, str, str]]:
    here = {n: v for n, v in vms.items() if shutil.which(v[1] or "cc") and (n != "java" or shutil.which("javac"))}
    missing = sorted(f"{v[1] or 'cc'} (apt-get install {v[2]})" for n, v in vms.items() if n not in here)
    if missing and os.environ.get("CI") == "true":
        missing_real_part(f"start-up runs need {', '.join(missing)}")
    if len(here) < 2:
        missing_real_part(f"start-up runs need {', '.join(missing)}")
    return here


def krun_export(state: Path, out: Path) -> dict:
    r = coldrun("export", str(state), "--format", "krun", "-o", str(out))
    assert r.returncode == 0, r.stderr
    return json.loads(bz2.decompress(out.read_bytes()))


def test_a_startup_experiment_of_the_papers_shape_in_every_language(open_dir):
    # Before: the c runner was refused in start-up mode, Java failed as the benchmark user
    # (/dev/fd/3: Permission denied), and the export stored [seconds], which the paper's script misreads.
    vms = available(VMS)
    built = languages.report_build(["startup", "java"] if "java" in vms else ["startup"])
    assert built == 0
    exp = experiment(open_dir, vms)
    check = coldrun("check", str(exp))
    assert check.returncode == 0, check.stdout + check.stderr
    bundle, _ = run_and_export(open_dir, exp)
    recs = bundle["executions"]
    assert len(recs) == EXECUTIONS * len(vms)
    for rec in recs:
        assert rec["state"] == "completed", (rec["key"], rec.get("reason"))
        assert rec["mode"] == "startup" and 0 < rec["startup"]["seconds"] < 30
    results = krun_export(open_dir / "state", open_dir / "startup_results.json.bz2")
    assert results["startup_keys"] == sorted(f"binarytrees:{n}:default-{v[0]}" for n, v in vms.items())
    for rec in recs:
        pair = results["wallclock_times"][rec["key"]][rec["pexec"]]
        assert pair == [float(rec["startup"]["wrapper_time"]), float(rec["startup"]["runner_time"])]
    table = paper_startup_table(results)
    (machine, by_vm), = table.items()
    assert machine == os.uname().nodename.split(".")[0]
    assert set(by_vm) == set(vms)
    for vm, times in by_vm.items():
        assert len(times) == EXECUTIONS and all(0 < t < 30 for t in times), (vm, times)
    # coldrun-analyze reports them: `startup`, and `table` (before: "No benchmarks in this summary").
    analysed = coldrun_analyze("startup", str(open_dir / "startup_results.json.bz2"), "--format", "json")
    rows = {r["vm"]: r for r in json.loads(analysed)}
    assert set(rows) == set(vms)
    for vm, times in by_vm.items():
        assert rows[vm]["executions"] == EXECUTIONS
        assert min(times) <= rows[vm]["mean"] <= max(times)
        assert rows[vm]["mean"] == pytest.approx(statistics.fmean(times), rel=0.5)
    text = coldrun_analyze("table", str(open_dir / "startup_results.json.bz2"))
    assert "No benchmarks in this summary" not in text and text.startswith("Start-up times")
    assert all(f" {vm} " in text for vm in vms)


def test_cpython_2_7_startup(open_dir):
    # Before: AttributeError: 'module' object has no attribute 'clock_gettime_ns'.
    python27 = python27_interpreter()
    if python27 is None:
        missing_real_part("no Python 2.7 (Debian 12 has none: build it from source or `pyenv install 2.7.18`)")
    exp = experiment(open_dir, {"CPython27": ("python", python27, "")})
    exp.write_text(runs_as_invoker(exp.read_text()))
    bundle, _ = run_and_export(open_dir, exp)
    assert [r["state"] for r in bundle["executions"]] == ["completed"] * EXECUTIONS
    assert all(0 < r["startup"]["seconds"] < 30 for r in bundle["executions"])


def coldrun_analyze(*args: str) -> str:
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "analysis.cli", *args], capture_output=True, text=True, timeout=300,
                       cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 0, r.stderr
    return r.stdout
