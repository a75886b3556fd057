"""Per-VM modes (instrumentation, startup time) and the --debug flag kept across boots."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

from cycle_helpers import ScriptedPlatform, boot_quiet, experiment
from doubles import FakeMachine
from supervisor.cli import build_parser
from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.boot.lifecycle import start
from supervisor.state.records import list_records, read_record
from supervisor.launch.runner_command import runner_launch
from supervisor.launch.results import BadResults, parse_results
from supervisor.state.statedir import StateDir


def vm_toml(runner: str, *, iterations: int = 3, extra: str = "", executable: str = "python3") -> bytes:
    return textwrap.dedent(f"""\
        name = "m"
        executions = 1
        [benchmarks]
        a = 1
        [variants.v]
        target = "bench.py"
        [vms.x]
        runner = "{runner}"
        executable = "{executable}"
        iterations = {iterations}
        variants = ["v"]
        """).encode() + extra.encode()


@pytest.mark.parametrize("runner,iterations,extra,expected", [
    ("lua", 3, "instrument = true\n",
     "exp.toml: vms.x.instrument: instrument = true works with the pypy and java runners only, not 'lua'"),
    ("python", 3, "instrument = true\n", "not 'python'; remove instrument"),
    ("python", 3, 'mode = "startup"\n', "vms.x.mode: mode = \"startup\" measures one process start, so "
                                        "iterations must be 1, not 3; set iterations = 1"),
    ("c", 1, 'mode = "startup"\n', "works with the python, pypy, lua, javascript, java, ruby, php runners, "
                                   "not 'c'"),
    ("external", 1, 'mode = "startup"\n', "not 'external'"),
    ("pypy", 1, 'mode = "startup"\ninstrument = true\n', "cannot be combined with mode = \"startup\""),
    ("python", 1, 'mode = "warm"\n', "vms.x.mode: Input should be 'iterations' or 'startup'"),
])
def test_mode_validation_errors_are_one_line(runner, iterations, extra, expected):
    with pytest.raises(ColdrunError) as e:
        parse_experiment(vm_toml(runner, iterations=iterations, extra=extra), "exp.toml")
    assert "\n" not in str(e.value) and expected in str(e.value)


def test_valid_modes_parse():
    exp = parse_experiment(vm_toml("java", extra="instrument = true\n"), "exp.toml")
    assert exp.vms["x"].instrument and exp.vms["x"].mode == "iterations"
    exp = parse_experiment(vm_toml("ruby", iterations=1, extra='mode = "startup"\n'), "exp.toml")
    assert exp.vms["x"].mode == "startup" and not exp.vms["x"].instrument


DOC = {"protocol_version": 1, "wallclock_times": [0.0125], "core_cycle_counts": [], "aperf_counts": [],
       "mperf_counts": [], "counters": {"available": False, "reason": "startup mode"}}
STARTUP = {"clock": "CLOCK_MONOTONIC_RAW", "wrapper_time": "10.000000000", "runner_time": "10.012500000",
           "seconds": 0.0125}


def raw(doc) -> bytes:
    return json.dumps(doc).encode()


def test_startup_document_is_checked():
    doc = parse_results(raw(dict(DOC, startup=STARTUP)), 1, startup=True)
    assert doc["startup"]["seconds"] == 0.0125
    with pytest.raises(BadResults, match="no startup object"):
        parse_results(raw(DOC), 1, startup=True)
    with pytest.raises(BadResults, match="not in startup-time mode"):
        parse_results(raw(dict(DOC, startup=STARTUP)), 1)
    with pytest.raises(BadResults, match="exactly"):
        parse_results(raw(dict(DOC, startup=dict(STARTUP, extra=1))), 1, startup=True)
    with pytest.raises(BadResults, match="startup.seconds"):
        parse_results(raw(dict(DOC, startup=dict(STARTUP, seconds=-1))), 1, startup=True)
    with pytest.raises(BadResults, match=r"must be \[startup.seconds\]"):
        parse_results(raw(dict(DOC, startup=dict(STARTUP, seconds=0.5))), 1, startup=True)


def test_instrumentation_must_be_there_when_asked_for():
    with pytest.raises(BadResults, match="instrumentation was asked for"):
        parse_results(raw(DOC), 1, instrument=True)
    doc = parse_results(raw(dict(DOC, instrumentation={"vm": "pypy"})), 1, instrument=True)
    assert doc["instrumentation"] == {"vm": "pypy"}


def test_runner_launch_passes_modes_to_the_runner_command(tmp_path):
    (tmp_path / "benchmarks" / "a").mkdir(parents=True)
    (tmp_path / "benchmarks" / "a" / "bench.py").write_text("def run_iter(n):\n    pass\n")
    exp = parse_experiment(vm_toml("python", iterations=1, extra='mode = "startup"\n',
                                   executable=sys.executable), "exp.toml")
    launch = runner_launch(exp, tmp_path, "exp.toml", "a", "x", "v", home="/nonexistent")
    assert launch.argv[0].endswith("startup_wrapper") and launch.argv[1] == sys.executable
    assert launch.argv[2].endswith("startup_runner.py")
    # The pypy runner with instrumentation (any executable will do for building the command).
    exp = parse_experiment(vm_toml("pypy", extra="instrument = true\n", executable=sys.executable), "exp.toml")
    launch = runner_launch(exp, tmp_path, "exp.toml", "a", "x", "v", home="/nonexistent", debug=True)
    assert launch.env["COLDRUN_INSTRUMENT"] == "1" and "PYPYLOG" in launch.env
    assert launch.argv[-1] == "1"
    exp = parse_experiment(vm_toml("pypy", executable=sys.executable), "exp.toml")
    launch = runner_launch(exp, tmp_path, "exp.toml", "a", "x", "v", home="/nonexistent")
    assert "COLDRUN_INSTRUMENT" not in launch.env and launch.argv[-1] == "0"


def records(state: Path) -> list[dict]:
    return [read_record(p) for _, p in sorted(list_records(state).items())]


def test_debug_is_recorded_and_kept_across_boots(tmp_path):
    from supervisor.boot.one_boot import boot
    exp = experiment(tmp_path, {"a": "ok"}, executions=3)
    state = tmp_path / "s"
    assert start(str(exp), str(state), simulate=True, stderr=io.StringIO(), debug=True,
                 machine=FakeMachine(ScriptedPlatform())) == 0
    assert StateDir(state).meta()["debug"] is True
    assert boot_quiet(state) == 0                                              # re-exec'd: no flag, kept
    assert boot(state, stderr=io.StringIO(), debug=False,                       # resume --no-debug
                machine=FakeMachine(ScriptedPlatform())) == 0
    assert boot_quiet(state) == 0 and boot_quiet(state) == 0                   # kept off; then finishes
    recs = records(state)
    assert [r["argv"][-1] for r in recs] == ["1", "0", "0"]                    # the runner's debug argument
    assert [r["debug"] for r in recs] == [True, False, False]
    assert StateDir(state).meta()["debug"] is False


def test_cli_debug_flags():
    p = build_parser()
    assert p.parse_args(["start", "e.toml", "--debug"]).debug is True
    assert p.parse_args(["start", "e.toml"]).debug is False
    assert p.parse_args(["resume", "d"]).debug is None
    assert p.parse_args(["resume", "d", "--debug"]).debug is True
    assert p.parse_args(["resume", "d", "--no-debug"]).debug is False
