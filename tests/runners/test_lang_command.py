"""Unit tests for iteration_runners.languages (contract A's runner command for
the language runners) and the PyPy runner's debug-log parsing.  No
interpreter is started here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from iteration_runners import languages
from supervisor.errors import ColdrunError
from supervisor.experiment.model import load_experiment
from supervisor.launch.runner_command import runner_launch

INTERPRETED = {
    "pypy": "pypy/iterations_runner.py",
    "lua": "lua/iterations_runner.lua",
    "ruby": "ruby/iterations_runner.rb",
    "php": "php/iterations_runner.php",
}


@pytest.fixture
def fake_lib(tmp_path, monkeypatch) -> Path:
    """A file standing in for libkruntime.so: these tests only build command lines."""
    lib = tmp_path / "libkruntime.so"
    lib.write_bytes(b"\x7fELF")
    monkeypatch.setenv(languages.ENV_LIBKRUNTIME, str(lib))
    return lib


@pytest.mark.parametrize("runner", sorted(INTERPRETED))
def test_interpreted_runner_argv_follows_krun_order(runner, fake_lib):
    argv, env = languages.language_runner_command(
        runner, "/opt/vm/bin/x", ["-a", "-b"], "/b/bench", 20, 7, True)
    runner_file = str(languages.RUNNERS_DIR / INTERPRETED[runner])
    # PHP: the compiled binding, when built, is loaded before the VM's own args (else the runner uses FFI).
    ext = languages.PHP_EXT.up_to_date() if runner == "php" else None
    load = ["-d", f"extension={ext}"] if ext else []
    assert argv == ["/opt/vm/bin/x", *load, "-a", "-b", runner_file, "/b/bench", "20", "7", "1"]
    assert Path(runner_file).is_file()
    assert env["COLDRUN_RESULTS_FD"] == "3"
    assert env["COLDRUN_LIBKRUNTIME"] == str(fake_lib.resolve())
    assert "COLDRUN_INSTRUMENT" not in env and "PYPYLOG" not in env


def test_default_executable_is_the_debian_interpreter(fake_lib):
    argv, _ = languages.language_runner_command("lua", "", [], "b.lua", 1, 0, False)
    assert argv[0] == "luajit" and argv[-1] == "0"


def test_unknown_runner_names_the_known_ones(fake_lib):
    with pytest.raises(ValueError) as err:
        languages.language_runner_command("cobol", "x", [], "b", 1, 1, False)
    for name in languages.KNOWN_LANGUAGE_RUNNERS:
        assert name in str(err.value)


@pytest.mark.parametrize("iterations", [0, -3, True, 2.5])
def test_iterations_must_be_a_positive_integer(iterations, fake_lib):
    with pytest.raises(ValueError, match="iterations"):
        languages.language_runner_command("ruby", "ruby", [], "b.rb", iterations, 1, False)


def test_pypy_instrumentation_sets_a_per_process_log(fake_lib):
    argv, env = languages.language_runner_command("pypy", "pypy3", [], "b.py", 3, 1, False, instrument=True,
                                                  log_dir="/home/coldrunbench")
    assert env["COLDRUN_INSTRUMENT"] == "1"
    categories, target = env["PYPYLOG"].split(":", 1)
    assert categories.split(",") == ["gc", "jit-tracing", "jit-backend"]
    assert target.endswith("-%d")  # PyPy substitutes its pid: concurrent runs never share a log
    # Issue 26 item 11: in the runner's own directory, never in the shared /tmp.
    assert target == "/home/coldrunbench/coldrun-pypylog-%d"
    for shared in (None, "relative/dir"):
        with pytest.raises(ValueError, match="own directory"):
            languages.language_runner_command("pypy", "pypy3", [], "b.py", 3, 1, False, instrument=True,
                                              log_dir=shared)


def test_java_benchmark_must_be_compiled(fake_lib):
    with pytest.raises(ValueError, match=r"\.class"):
        languages._java_class_and_dir("/suite/fasta/java/KrunEntry.java")
    assert languages._java_class_and_dir("/suite/fasta/java/KrunEntry.class") == ("KrunEntry", "/suite/fasta/java")


def test_benchmark_filenames_are_krun_defaults():
    assert {r: languages.benchmark_filename(r) for r in languages.KNOWN_LANGUAGE_RUNNERS} == {
        "pypy": "bench.py", "lua": "bench.lua", "javascript": "bench.js",
        "java": "KrunEntry.class", "ruby": "bench.rb", "php": "bench.php",
    }
    with pytest.raises(ValueError):
        languages.benchmark_filename("c")


def test_missing_libkruntime_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(languages.ENV_LIBKRUNTIME, str(tmp_path / "nope.so"))
    with pytest.raises(languages.RunnerNotBuilt) as err:
        languages.language_runner_command("php", "php", [], "b.php", 1, 1, False)
    assert "nope.so" in str(err.value) and "\n" not in str(err.value)
    # iteration_runners has its own error type; the supervisor reports it as a ColdrunError.
    assert not isinstance(err.value, ColdrunError)
    exp_dir = tmp_path / "exp"
    (exp_dir / "benchmarks" / "b").mkdir(parents=True)
    (exp_dir / "benchmarks" / "b" / "bench.php").write_text("<?php\n")
    (exp_dir / "exp.toml").write_text(
        'name = "x"\nexecutions = 1\n[benchmarks]\nb = 1\n[variants.v]\ntarget = "bench.php"\n'
        '[vms.php]\nrunner = "php"\nexecutable = "/bin/sh"\niterations = 1\nvariants = ["v"]\n')
    exp, _ = load_experiment(exp_dir / "exp.toml")
    with pytest.raises(ColdrunError) as err:
        runner_launch(exp, exp_dir, "exp.toml", "b", "php", "v", home="/nonexistent")
    assert str(err.value).startswith("exp.toml: vms.php.runner: ") and "nope.so" in str(err.value)


def test_missing_node_headers_is_one_clear_error(fake_lib, monkeypatch, tmp_path):
    monkeypatch.setenv("COLDRUN_NODE_INCLUDE", str(tmp_path / "no-include"))
    with pytest.raises(languages.RunnerBuildError, match="node_api.h"):
        languages.build_node_addon()


def test_build_cli_reports_failure_on_one_line(fake_lib, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COLDRUN_NODE_INCLUDE", str(tmp_path / "no-include"))
    assert languages.main(["build", "javascript"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("coldrun: ") and err.count("\n") == 1


# ---- the PyPy runner's PYPYLOG parsing (pure Python, no PyPy needed) --------


@pytest.fixture(scope="module")
def pypy_runner():
    path = languages.RUNNERS_DIR / "pypy" / "iterations_runner.py"
    spec = importlib.util.spec_from_file_location("coldrun_pypy_runner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOG = """\
[10] {gc-hardware
L2cache = 1
[12] gc-hardware}
[20] {gc-minor
[21] {gc-minor-walkroots
[22] gc-minor-walkroots}
[25] gc-minor}
[40] {jit-tracing
[41] {jit-backend-dump
[42] jit-backend-dump}
[50] jit-tracing}
[70] {gc-collect-step
[7a] gc-collect-step}
[90] {gc-minor
""".splitlines(keepends=True)


def test_pypylog_becomes_event_trees(pypy_runner):
    roots = pypy_runner.parse_pypylog(LOG)
    assert [r[0] for r in roots] == ["gc-hardware", "gc-minor", "jit-tracing", "gc-collect-step", "gc-minor"]
    assert roots[1] == ["gc-minor", 0x20, 0x25, [["gc-minor-walkroots", 0x21, 0x22, []]]]
    assert roots[-1][2] is None  # still open when the log was read


def test_events_split_per_iteration_by_timestamp(pypy_runner):
    roots = pypy_runner.parse_pypylog(LOG)
    # loop starts at 0x15 (gc-hardware is start-up); iterations end at 0x30 and 0x80.
    per_iter = pypy_runner.split_per_iteration(roots, 0x15, [0x30, 0x80])
    assert [[e[0] for e in it] for it in per_iter] == [["gc-minor"], ["jit-tracing", "gc-collect-step"]]
    gc, jit = pypy_runner.summarise(per_iter)
    assert gc == [5, 0xA]
    assert jit == [0, 0x10]
