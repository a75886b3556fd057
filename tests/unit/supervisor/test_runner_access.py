"""The benchmark user must reach every file its runner needs: check fails (exit 1), a real start refuses."""

from __future__ import annotations

import io
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.experiment.model import load_experiment
from supervisor.boot.lifecycle import start
from supervisor.launch.runner_command import Launch
from supervisor.launch.runner_access import EXECUTE, READ, first_blocker, needed_files, unreachable_files
from doubles import FakeMachine, RecordingCommands

from cycle_helpers import RebootRecorder, fake_root, start_quiet


def open_tree(base: Path) -> Path:
    """base/pub/bin/tool (0755 all the way), base/pub/bench/b.txt (0644)."""
    for d in (base, base / "pub", base / "pub" / "bin", base / "pub" / "bench"):
        d.mkdir(exist_ok=True)
        d.chmod(0o755)
    tool = base / "pub" / "bin" / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    bench = base / "pub" / "bench" / "b.txt"
    bench.write_text("ok\n")
    bench.chmod(0o644)
    return base / "pub"


@pytest.fixture
def tree(tmp_path):
    # tmp_path's ancestors may be private (e.g. /tmp/pytest-of-root is 0700): start below an open dir.
    base = Path("/tmp") / f"coldrun-access-{os.getpid()}-{tmp_path.name}"
    pub = open_tree(base)
    if first_blocker(pub, READ):
        reason = first_blocker(pub, READ).text
        shutil.rmtree(base)
        pytest.skip(f"/tmp is not reachable by others here: {reason}")
    yield pub
    shutil.rmtree(base)


def test_open_paths_pass(tree):
    assert first_blocker(tree / "bin" / "tool", EXECUTE) is None
    assert first_blocker(tree / "bench" / "b.txt", READ, dir_listable=True) is None


def test_first_private_directory_is_named(tree):
    (tree / "bin").chmod(0o700)
    b = first_blocker(tree / "bin" / "tool", EXECUTE)
    assert b is not None and b.where == tree / "bin" and b.is_dir
    assert b.text == f"{tree / 'bin'} is mode 0700 (others need x)"
    assert f"outside {tree / 'bin'}" in b.fix() and "python3 -m venv /opt/coldrun" in b.fix()
    # The outermost blocker wins.
    tree.chmod(0o711)
    (tree / "bin").chmod(0o755)
    tree.parent.chmod(0o700)
    try:
        assert first_blocker(tree / "bin" / "tool", EXECUTE).where == tree.parent
    finally:
        tree.parent.chmod(0o755)


def test_file_bits_and_listable_benchmark_dir(tree):
    tool, bench = tree / "bin" / "tool", tree / "bench" / "b.txt"
    tool.chmod(0o744)
    b = first_blocker(tool, EXECUTE)
    assert b.where == tool and not b.is_dir and "others need rx" in b.text and b.fix().startswith("chmod o+rx")
    assert first_blocker(tool, READ) is None
    (tree / "bench").chmod(0o711)         # searchable, not listable: Python cannot import from it
    assert first_blocker(bench, READ) is None
    assert "others need rx" in first_blocker(bench, READ, dir_listable=True).text


def test_symlink_target_is_walked_too(tree, tmp_path):
    private = Path("/tmp") / f"coldrun-private-{os.getpid()}"
    private.mkdir(mode=0o700)
    try:
        (private / "python").write_text("")
        (private / "python").chmod(0o755)
        link = tree / "bin" / "python"
        link.symlink_to(private / "python")
        b = first_blocker(link, EXECUTE)
        assert b is not None and b.where == private
    finally:
        shutil.rmtree(private)


def test_needed_files_come_from_argv_and_runner_environment(tree):
    tool, bench = tree / "bin" / "tool", tree / "bench" / "b.txt"
    launch = Launch([str(tool), "-X", str(bench), "5", "1", "0"],
                    {"COLDRUN_LIBKRUNTIME": "/lib/libkruntime.so", "CLASSPATH": f"{tree}:relative",
                     "PATH": "/usr/bin"})
    got = needed_files(launch, bench)
    assert got == [(str(tool), EXECUTE, False), (str(bench), READ, True),
                   ("/lib/libkruntime.so", READ, False), (str(tree), READ, False)]


def external_experiment(exp_dir: Path, executable: Path) -> Path:
    (exp_dir / "benchmarks" / "a").mkdir(parents=True)
    (exp_dir / "benchmarks" / "a" / "b.txt").write_text("ok\n")
    p = exp_dir / "exp.toml"
    p.write_text(textwrap.dedent(f"""\
        name = "access"
        executions = 1
        [benchmarks]
        a = 1
        [variants.v]
        target = "b.txt"
        [vms.ext]
        runner = "external"
        executable = "{executable}"
        iterations = 2
        variants = ["v"]
        """))
    return p


def test_unreachable_files_names_vm_key_and_fix(tree):
    exp_dir = tree / "exp"
    exp_dir.mkdir(mode=0o755)
    exp_path = external_experiment(exp_dir, tree / "bin" / "tool")
    exp, _ = load_experiment(exp_path)
    assert unreachable_files(exp, exp_dir, str(exp_path), ["a:ext:v"]) == []
    (exp_dir / "benchmarks" / "a" / "b.txt").chmod(0o600)
    lines = unreachable_files(exp, exp_dir, str(exp_path), ["a:ext:v"])
    assert len(lines) == 1 and "cannot read" in lines[0] and "others need r)" in lines[0]
    (tree / "bin").chmod(0o700)
    lines = unreachable_files(exp, exp_dir, str(exp_path), ["a:ext:v"])
    assert lines[0].startswith(f"{exp_path}: vms.ext (a:ext:v): the benchmark user cannot execute "
                               f"{tree / 'bin' / 'tool'}: {tree / 'bin'} is mode 0700")
    assert "benchmark_user = false" in lines[0]


def test_check_fails_and_real_start_refuses_before_anything_changes(tree, tmp_path, capsys):
    (tree / "bin").chmod(0o700)
    exp_path = external_experiment(tmp_path, tree / "bin" / "tool")
    assert main(["check", str(exp_path)]) == 1       # no problem start refuses may pass check
    out = capsys.readouterr().out
    assert f"problem: {exp_path}: vms.ext (a:ext:v): the benchmark user cannot execute" in out
    if os.geteuid() != 0:
        pytest.skip("a real start refuses non-root users before this check")
    cmds, root, platform = RecordingCommands(), fake_root(tmp_path), RebootRecorder()
    with pytest.raises(ColdrunError, match=f"cannot execute {tree / 'bin' / 'tool'}: {tree / 'bin'} is mode"):
        start(str(exp_path), str(tmp_path / "s"), simulate=False, stderr=io.StringIO(),
              machine=FakeMachine(platform, root=root, commands=cmds))
    assert cmds.calls == [] and not (tmp_path / "s").exists()
    assert platform.reboots == 0 and not (root.root / "var/lib/coldrun/active").exists()


def test_benchmark_user_false_or_simulated_start_is_not_checked(tree, tmp_path, capsys):
    (tree / "bin").chmod(0o700)
    exp_path = external_experiment(tmp_path, tree / "bin" / "tool")
    # Simulated runs execute as the invoking user: not refused.  As root they run as the fresh
    # benchmark user, as real runs do, and are refused like them.
    if os.geteuid() == 0:
        with pytest.raises(ColdrunError, match=f"cannot execute {tree / 'bin' / 'tool'}"):
            start_quiet(exp_path, tmp_path / "sim")
    else:
        assert start_quiet(exp_path, tmp_path / "sim") == 0
    text = exp_path.read_text().replace('[benchmarks]', '[platform]\nbenchmark_user = false\n[benchmarks]')
    exp_path.write_text(text)
    assert main(["check", str(exp_path)]) == 0
    assert "problem" not in capsys.readouterr().out


def test_startup_wrapper_execs_the_vm(tree):
    tool, bench = tree / "bin" / "tool", tree / "bench" / "b.txt"
    launch = Launch(["/opt/x/startup/build/startup_wrapper", str(tool), str(bench), "1", "0", "0"], {})
    assert needed_files(launch, bench)[:2] == [("/opt/x/startup/build/startup_wrapper", EXECUTE, False),
                                               (str(tool), EXECUTE, False)]
