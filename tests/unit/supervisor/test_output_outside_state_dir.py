"""No command but the supervisor writes into a state dir (issue 34 point 3).

An output that leads into one (by its name, '..', a symlinked directory or a symlink at the
output) is refused with one line naming it, the state dir and the fix, exit 2, and the
state dir's every entry keeps its bytes: no replaced file, no new file, no temp file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cycle_helpers import experiment, start_quiet
from execution_records import make_record
from iteration_runners import java_benchmarks
from supervisor.cli import main
from contracts.state_dir import enclosing_state_dir
from supervisor.state.records import write_record
from supervisor.state.schedule import COMPLETED, Schedule
from test_krun_import import MINIMAL     # a Krun config that translates

EXPORT_FIX = "write it outside the state dir, e.g. -o results.json.bz2"


@pytest.fixture
def state(tmp_path) -> Path:
    """A started experiment whose one job completed, with its record: every export can be written from it."""
    state = tmp_path / "s"
    start_quiet(experiment(tmp_path, {"a": "ok"}), state)
    sched = Schedule.load(state / "schedule")
    job = sched.jobs[0]
    write_record(state, make_record(key=job.key, pexec=job.pexec, job_index=job.index))
    sched.set_job(job, COMPLETED, 1)
    return state


def contents(state: Path) -> dict[str, object]:
    """Every entry under ``state`` (hidden temp files too): a file's bytes, a symlink's target, a dir's mark."""
    found: dict[str, object] = {}
    for root, dirs, files in os.walk(state):
        for name in dirs + files:
            p = Path(root, name)
            key = str(p.relative_to(state))
            found[key] = (("link", os.readlink(p)) if p.is_symlink() else "dir" if p.is_dir()
                          else p.read_bytes())
    return found


def refused(state: Path, argv: list[str], output: str, fix: str, capsys) -> None:
    before = contents(state)
    assert main(argv) == 2
    assert capsys.readouterr().err == (f"coldrun: {output}: leads into the state dir {state.resolve()}, where only "
                                       f"the supervisor writes; {fix}\n")
    assert contents(state) == before


def record_name(state: Path) -> str:
    return next((state / "executions").iterdir()).name


@pytest.mark.parametrize("fmt", ["native", "krun"])
@pytest.mark.parametrize("inside", ["schedule", "log", "meta.json", "experiment.toml", "executions/RECORD",
                                    "newname.json.bz2", "executions/../schedule", "executions"])
def test_export_into_the_state_dir_is_refused_and_changes_nothing(state, capsys, fmt, inside):
    output = str(state / inside.replace("RECORD", record_name(state)))
    refused(state, ["export", str(state), "--format", fmt, "-o", output], output, EXPORT_FIX, capsys)


def test_a_symlink_at_the_output_pointing_into_the_state_dir_is_refused(state, tmp_path, capsys):
    link = tmp_path / "results.json.bz2"
    link.symlink_to(state / "meta.json")
    refused(state, ["export", str(state), "--format", "native", "-o", str(link)], str(link), EXPORT_FIX, capsys)
    assert os.readlink(link) == str(state / "meta.json")     # the link itself is not replaced either
    dangling = tmp_path / "new.json.bz2"
    dangling.symlink_to(state / "new.json.bz2")
    refused(state, ["export", str(state), "-o", str(dangling)], str(dangling), EXPORT_FIX, capsys)


def test_a_symlinked_directory_on_the_way_is_followed_as_the_kernel_would(state, tmp_path, capsys):
    (tmp_path / "alias").symlink_to(state)
    output = str(tmp_path / "alias" / "results.json.bz2")
    refused(state, ["export", str(state), "-o", output], output, EXPORT_FIX, capsys)
    # "records/.." is the parent of the link's target, the state dir, not tmp_path as the bare text says.
    (tmp_path / "records").symlink_to(state / "executions")
    output = str(tmp_path / "records" / ".." / "results.json.bz2")
    refused(state, ["export", str(state), "-o", output], output, EXPORT_FIX, capsys)


def test_another_experiment_s_state_dir_is_refused_too(state, tmp_path, capsys):
    other = tmp_path / "other"
    (tmp_path / "o").mkdir()
    start_quiet(experiment(tmp_path / "o", {"a": "ok"}), other)
    output = str(other / "results.json.bz2")
    before = contents(other)
    assert main(["export", str(state), "-o", output]) == 2
    assert f"leads into the state dir {other.resolve()}" in capsys.readouterr().err
    assert contents(other) == before


def test_import_krun_into_the_state_dir_is_refused_even_with_force(state, tmp_path, capsys):
    config = tmp_path / "exp.krun"
    config.write_text(MINIMAL)
    output = str(state / "experiment.toml")
    refused(state, ["import-krun", str(config), "-o", output, "--force"], output,
            "write it outside the state dir, e.g. -o EXP.toml", capsys)
    # The default output, beside a config that sits in the state dir, is refused the same way.
    (state / "home" / "exp.krun").write_text(MINIMAL)
    refused(state, ["import-krun", str(state / "home" / "exp.krun")], str(state / "home" / "exp.toml"),
            "write it outside the state dir, e.g. -o EXP.toml", capsys)


def test_build_java_in_the_state_dir_is_refused(state, capsys, monkeypatch):
    sources = state / "home" / "nbody"
    sources.mkdir()
    (sources / "nbody.java").write_text("class nbody {}")

    def javac(directories):      # what javac -d DIR would do, without a JDK
        for d in directories:
            (d / "nbody.class").write_bytes(b"\xca\xfe")
        return []
    monkeypatch.setattr(java_benchmarks, "build_java_benchmarks", javac)
    refused(state, ["build-java", str(sources)], str(sources),
            "build the benchmarks in a directory outside it", capsys)


def test_outputs_outside_every_state_dir_are_written(state, tmp_path, capsys):
    # A user's own file named "schedule" above the output does not make a state dir.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "schedule").write_text("monday: benchmarks\n")
    assert enclosing_state_dir(mine / "out.json.bz2") is None
    fifo = tmp_path / "fifo"          # nor does a FIFO of that name, which is never waited on
    fifo.mkdir()
    os.mkfifo(fifo / "schedule")
    assert enclosing_state_dir(fifo / "out.json.bz2") is None
    assert main(["export", str(state), "-o", str(mine / "out.json.bz2")]) == 0
    assert (mine / "out.json.bz2").is_file()
    # A name beside the state dir is outside it.
    assert main(["export", str(state), "--format", "native", "-o", str(tmp_path / "s.json")]) == 0
    assert enclosing_state_dir(tmp_path / "s.json") is None
    (tmp_path / "exp.krun").write_text(MINIMAL)
    assert main(["import-krun", str(tmp_path / "exp.krun"), "-o", str(mine / "exp.toml")]) == 0


@pytest.mark.parametrize("argv", [
    ["table", "RESULTS", "-o", "STATE/report.html"],
    ["summary", "RESULTS", "-o", "STATE/meta.json"],
    ["annotate", "RESULTS", "-o", "STATE/executions/annotated.json.bz2"],
    ["plot", "RESULTS", "-o", "STATE/plots"],
    ["diff", "RESULTS", "RESULTS", "--json", "STATE/schedule"],
])
def test_coldrun_analyze_writes_nothing_into_a_state_dir(state, tmp_path, capsys, argv):
    from analysis.cli import main as analyze

    results = tmp_path / "results.json.bz2"
    assert main(["export", str(state), "--format", "krun", "-o", str(results)]) == 0
    capsys.readouterr()
    argv = [a.replace("RESULTS", str(results)).replace("STATE", str(state)) for a in argv]
    output = argv[argv.index("-o" if "-o" in argv else "--json") + 1]
    before = contents(state)
    assert analyze(argv) == 2
    assert capsys.readouterr().err == (f"coldrun-analyze: error: {output}: leads into the state dir {state.resolve()}, "
                                       f"where only the supervisor writes; write it outside the state dir\n")
    assert contents(state) == before


def test_a_state_dir_inside_another_experiments_is_refused(state, tmp_path, capsys):
    before = contents(state)
    inner = state / "executions" / "inner"
    assert main(["start", str(experiment(tmp_path, {"b": "ok"})), "--simulate-reboots", "--state-dir",
                 str(inner)]) == 2
    assert capsys.readouterr().err == (f"coldrun: {inner}: lies inside the state dir {state.resolve()}, where only "
                                       f"its own supervisor writes; choose another --state-dir\n")
    assert contents(state) == before
