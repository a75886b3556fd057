"""`coldrun build-runners`: builds what runners need (idempotent), says which tools are missing, puts the
parts beside the package when it is writable and in a cache dir otherwise, and runners find them there."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from iteration_runners import languages
from supervisor.cli import main


@pytest.fixture
def empty_build_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "runner-build"
    monkeypatch.setenv(languages.ENV_BUILD_DIR, str(d))
    return d


def test_build_all_then_up_to_date_and_runners_find_the_parts(empty_build_dir, capsys):
    with pytest.raises(languages.RunnerNotBuilt, match="run `coldrun build-runners startup`"):
        languages.STARTUP_WRAPPER.find()
    assert main(["build-runners"]) == 0
    first = capsys.readouterr().out
    assert f"startup: built: {empty_build_dir / 'startup' / 'startup_wrapper'}" in first
    for name in ("c", "python", "pypy", "lua"):
        assert f"{name}: nothing to compile" in first
    assert f"ruby: built: {empty_build_dir / 'ruby' / 'kruntime_ext.so'}" in first
    # PHP's compiled binding needs php-dev; without it the runner uses FFI, and a default build says so.
    assert (f"php: built: {empty_build_dir / 'php' / 'kruntime_php.so'}" if shutil.which("php-config")
            else "php: missing tool: building the PHP extension needs php-config") in first
    assert main(["build-runners"]) == 0
    again = capsys.readouterr().out
    assert "startup: up to date: " in again and "built" not in again.replace("up to date", "")
    assert languages.STARTUP_WRAPPER.find() == empty_build_dir / "startup" / "startup_wrapper"
    _, env = languages.language_runner_command("ruby", "", [], "b.rb", 1, 1, False)
    assert env[languages.ENV_RUBY_EXT] == str(empty_build_dir / "ruby" / "kruntime_ext.so")
    argv, _ = languages.startup_command("lua", "luajit", [], "b.lua", 1, 1, False)
    assert argv[0] == str(empty_build_dir / "startup" / "startup_wrapper")
    assert oct(os.stat(empty_build_dir / "startup").st_mode & 0o055) == oct(0o055)  # others may enter


def test_source_newer_than_build_means_not_built(empty_build_dir, monkeypatch, tmp_path):
    assert languages.report_build(["startup"]) == 0
    out = languages.STARTUP_WRAPPER.find()
    os.utime(out, (1, 1))          # older than startup_wrapper.c
    with pytest.raises(languages.RunnerNotBuilt, match="older than its sources"):
        languages.STARTUP_WRAPPER.find()


def test_missing_tool_is_an_error_only_when_asked_for(empty_build_dir, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COLDRUN_NODE_INCLUDE", str(tmp_path / "no-include"))
    assert main(["build-runners", "javascript"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("coldrun: javascript: missing tool: node_api.h not found") and err.count("\n") == 1
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))      # no javac either
    assert main(["build-runners", "javascript", "php"]) == 2
    assert main(["build-runners", "php"]) == 2          # asked for, and php-config is not on PATH
    assert "php: missing tool: building the PHP extension needs php-config" in capsys.readouterr().err
    assert main(["build-runners", "python", "lua"]) == 0
    assert "lua: nothing to compile: luajit is not on PATH (Debian: apt-get install luajit)" in capsys.readouterr().out


def test_failed_build_is_an_error_even_by_default(empty_build_dir, monkeypatch, capsys):
    monkeypatch.setenv("CC", "false")
    assert main(["build-runners", "c", "startup"]) == 2
    err = capsys.readouterr().err
    assert "coldrun: startup: failed: building the startup-time wrapper failed" in err
    assert languages.report_build([]) == 2


def test_unknown_name_is_one_line(capsys):
    assert main(["build-runners", "cobol"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("coldrun: unknown runner 'cobol'; build-runners knows c, python") and err.count("\n") == 1


@pytest.fixture
def fresh_package(tmp_path, monkeypatch) -> Path:
    """A package dir with nothing built in it, and a cache dir of our own."""
    pkg = tmp_path / "site-packages" / "iteration_runners"
    (pkg / "startup").mkdir(parents=True)
    monkeypatch.setattr(languages, "RUNNERS_DIR", pkg)
    monkeypatch.delenv(languages.ENV_BUILD_DIR, raising=False)
    monkeypatch.setattr(languages, "_cache_root", lambda: tmp_path / "cache")
    return pkg


def test_parts_go_beside_a_writable_package(fresh_package):
    assert languages.report_build(["startup"]) == 0
    assert languages.STARTUP_WRAPPER.find() == fresh_package / "startup" / "build" / "startup_wrapper"


def test_parts_go_to_the_cache_when_the_package_is_read_only(fresh_package, tmp_path, monkeypatch):
    real_access = os.access
    # Root may write anywhere, so a read-only site-packages is played by os.access.
    monkeypatch.setattr(languages.os, "access",
                        lambda p, mode: False if str(p).startswith(str(fresh_package)) else real_access(p, mode))
    assert languages.report_build(["startup"]) == 0
    assert languages.STARTUP_WRAPPER.find() == tmp_path / "cache" / "startup" / "startup_wrapper"
    assert not (fresh_package / "startup" / "build").exists()


def test_cache_root_is_per_install_and_per_user(monkeypatch, tmp_path):
    key = hashlib.sha256(str(languages.RUNNERS_DIR).encode()).hexdigest()[:12]
    monkeypatch.delenv(languages.ENV_BUILD_DIR, raising=False)
    monkeypatch.setattr(languages.os, "geteuid", lambda: 0)
    assert languages._cache_root() == Path("/var/cache/coldrun") / f"runners-{key}"
    monkeypatch.setattr(languages.os, "geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert languages._cache_root() == tmp_path / "coldrun" / f"runners-{key}"
    monkeypatch.setenv(languages.ENV_BUILD_DIR, str(tmp_path / "x"))
    assert languages.build_dirs("java") == [tmp_path / "x" / "java"]


def test_check_names_build_runners_when_a_part_is_not_built(empty_build_dir, tmp_path, capsys):
    bench = tmp_path / "benchmarks" / "b"
    bench.mkdir(parents=True)
    (bench / "bench.js").write_text("function run_iter(n) {}\n")
    exp = tmp_path / "exp.toml"
    exp.write_text('name = "x"\nexecutions = 1\n[benchmarks]\nb = 1\n[variants.v]\ntarget = "bench.js"\n'
                   '[vms.node]\nrunner = "javascript"\nexecutable = "/bin/sh"\niterations = 1\nvariants = ["v"]\n')
    assert main(["check", str(exp)]) == 1
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("problem: ")]
    assert line.startswith(f"problem: {exp}: vms.node.runner: the Node.js libkruntime addon is not built")
    assert line.endswith("run `coldrun build-runners javascript` (coldrun start refuses this)")
