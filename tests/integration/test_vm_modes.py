"""Per-VM modes (instrumentation, startup time) and the --debug flag kept across boots."""

from __future__ import annotations

import io
import sys
import textwrap
from pathlib import Path

import pytest

from cycle_helpers import ScriptedPlatform, boot_quiet, experiment
from doubles import FakeMachine
from iteration_runners.protocol import ProtocolError, parse_document
from runner_documents import STARTUP, document, encoded, startup_document
from supervisor.cli import build_parser
from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.boot.lifecycle import start
from supervisor.state.records import list_records, read_record
from supervisor.launch.runner_command import runner_launch
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
    ("external", 1, 'mode = "startup"\n', "works with the c, python, pypy, lua, javascript, java, ruby, php "
                                          "runners, not 'external'"),
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


def test_startup_document_is_checked():
    doc = parse_document(encoded(startup_document()), iterations=1, startup=True)
    assert doc["startup"]["seconds"] == 0.0125
    plain = document([0.0125], cores=0)
    with pytest.raises(ProtocolError, match="no startup object"):
        parse_document(encoded(plain), iterations=1, startup=True)
    with pytest.raises(ProtocolError, match="not in startup-time mode"):
        parse_document(encoded(startup_document()), iterations=1, startup=False)
    with pytest.raises(ProtocolError, match="exactly"):
        parse_document(encoded(startup_document(startup=dict(STARTUP, extra=1))), iterations=1, startup=True)
    with pytest.raises(ProtocolError, match="startup.seconds"):
        parse_document(encoded(startup_document(startup=dict(STARTUP, seconds=-1))), iterations=1, startup=True)
    with pytest.raises(ProtocolError, match=r"must be \[startup.seconds\]"):
        parse_document(encoded(startup_document(startup=dict(STARTUP, seconds=0.5))), iterations=1, startup=True)


def test_instrumentation_must_be_there_when_asked_for():
    plain = document([0.0125], cores=0)
    with pytest.raises(ProtocolError, match="instrumentation was asked for"):
        parse_document(encoded(plain), iterations=1, instrument=True)
    doc = parse_document(encoded(dict(plain, instrumentation={"vm": "pypy"})), iterations=1, instrument=True)
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


def test_c_has_a_startup_mode_of_its_own_runner(tmp_path):
    # Before: mode = "startup" refused the c runner (the paper measured C start-up).
    (tmp_path / "benchmarks" / "a").mkdir(parents=True)
    (tmp_path / "benchmarks" / "a" / "bench.py").touch()
    exp = parse_experiment(vm_toml("c", iterations=1, extra='mode = "startup"\n').replace(
        b'executable = "python3"\n', b""), "exp.toml")
    launch = runner_launch(exp, tmp_path, "exp.toml", "a", "x", "v", home="/nonexistent")
    assert Path(launch.argv[0]).name == "startup_wrapper" and Path(launch.argv[1]).name == "startup_runner_c"
    assert launch.argv[2:] == [str(tmp_path / "benchmarks" / "a" / "bench.py"), "1", "1", "0"]


def test_paths_relative_to_the_experiment_file(tmp_path):
    # Before: a relative executable was refused, so an import wrote the import machine's absolute paths.
    (tmp_path / "benchmarks" / "a").mkdir(parents=True)
    (tmp_path / "benchmarks" / "a" / "bench.py").write_text("def run_iter(n):\n    pass\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "py").symlink_to(sys.executable)
    exp = parse_experiment(vm_toml("python", executable="work/py", extra=textwrap.dedent("""\
        args = ["-X", "pycache_prefix=${EXPERIMENT_DIR}/cache"]
        env = {LD_LIBRARY_PATH = "${EXPERIMENT_DIR}/work/lib:/opt/lib"}
        """)), "exp.toml")
    launch = runner_launch(exp, tmp_path, "exp.toml", "a", "x", "v", home="/nonexistent")
    assert launch.argv[0] == str(tmp_path / "work" / "py")
    assert launch.argv[1:3] == ["-X", f"pycache_prefix={tmp_path}/cache"]
    assert launch.env["LD_LIBRARY_PATH"] == f"{tmp_path}/work/lib:/opt/lib"
    exp = parse_experiment(vm_toml("python", executable="work/none"), "exp.toml")
    with pytest.raises(ColdrunError, match=r"vms.x.executable: work/none \(.*/work/none\) does not exist"):
        runner_launch(exp, tmp_path, "exp.toml", "a", "x", "v", home="/nonexistent")


def records(state: Path) -> list[dict]:
    """The records as stored (JSON), in (job, attempt) order."""
    return [read_record(p).as_json() for _, p in sorted(list_records(state).items())]


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
