"""The runner probe launches each distinct runner once on a trivial benchmark and names every one that
cannot run, with the fix: tested with real runners and with deliberately broken ones."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import subprocess
import time
from pathlib import Path

import pytest

from iteration_runners import languages
from real_parts import missing_real_part
from supervisor.experiment.model import load_experiment
from supervisor.launch.runner_access import NOBODY, unprivileged_prefix
from supervisor.launch.runner_probe import probe_runners

# vm name -> (runner, executable line): every language, as an experiment names it.
REAL_VMS = {
    "c": ("c", ""),
    "cpython": ("python", 'executable = "@python"'),
    "pypy": ("pypy", 'executable = "pypy3"'),
    "lua": ("lua", 'executable = "luajit"'),
    "node": ("javascript", 'executable = "node"'),
    "jvm": ("java", 'executable = "java"'),
    "ruby": ("ruby", 'executable = "ruby"'),
    "php": ("php", 'executable = "php"'),
}


def experiment(tmp: Path, vms: dict[str, tuple[str, str]], extra_vm: str = "") -> tuple[Path, list[str]]:
    """An experiment with one key per vm (the benchmark files need not exist: the probe brings its own)."""
    text = 'name = "probe"\nexecutions = 1\n[benchmarks]\nb = 1\n[variants.v]\ntarget = "x"\n'
    for name, (runner, exe_line) in vms.items():
        text += f'[vms.{name}]\nrunner = "{runner}"\n{exe_line}\niterations = 5\nvariants = ["v"]\n{extra_vm}\n'
    path = tmp / "exp.toml"
    path.write_text(text)
    return path, [f"b:{name}:v" for name in vms]


def probe(path: Path, keys: list[str], **kw) -> list[str]:
    exp, _ = load_experiment(path)
    kw.setdefault("as_benchmark_user", False)
    return probe_runners(exp, path.parent, str(path), keys, **kw)


@pytest.fixture
def open_dir():
    """A directory everyone can enter (fake interpreters live here; the probe may run them as nobody)."""
    d = Path("/tmp") / f"coldrun-probe-test-{os.getpid()}-{time.monotonic_ns()}"
    d.mkdir(mode=0o755)
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)


def fake_interpreter(d: Path, name: str, body: str) -> Path:
    p = d / name
    p.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return p


def test_every_language_runner_passes(tmp_path):
    for runner, exe_line in REAL_VMS.values():
        tool = exe_line.split('"')[1] if exe_line else "cc"
        if tool != "@python" and shutil.which(tool) is None:
            missing_real_part(f"{tool} is not installed (apt-get install {languages.DEBIAN_PACKAGES.get(runner, 'gcc')})")
    path, keys = experiment(tmp_path, REAL_VMS)
    t0 = time.monotonic()
    assert probe(path, keys) == []
    assert time.monotonic() - t0 < 60


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="switching to nobody needs root "
                    "and setpriv; as another user the probe runs as the invoking user")
def test_as_benchmark_user_runs_as_nobody(tmp_path, open_dir):
    fake = fake_interpreter(open_dir, "whoami-python", 'echo "uid $(id -u)" >&2\nexit 1\n')
    path, keys = experiment(tmp_path, {"p": ("python", f'executable = "{fake}"')})
    [line] = probe(path, keys, as_benchmark_user=True)
    assert f"(uid {NOBODY})" in line
    [line] = probe(path, keys, as_benchmark_user=False)
    assert f"(uid {os.geteuid()})" in line


def test_real_runners_pass_as_the_benchmark_user(tmp_path):
    """c and CPython as nobody: the probe benchmarks and the runners are readable by others."""
    path, keys = experiment(tmp_path, {"c": ("c", ""), "py": ("python", 'executable = "/usr/bin/python3"')})
    if not Path("/usr/bin/python3").exists():
        missing_real_part("/usr/bin/python3 is not installed (apt-get install python3)")
    assert probe(path, keys, as_benchmark_user=True) == []


def test_missing_interpreter_names_the_vm_and_the_install(tmp_path, open_dir):
    gone = fake_interpreter(open_dir, "lua-wrapper", "")
    gone.write_text("#!/nonexistent/luajit\n")             # exists, but its interpreter does not
    path, keys = experiment(tmp_path, {"lua": ("lua", f'executable = "{gone}"'),
                                       "ruby": ("ruby", 'executable = "no-such-ruby-here"')})
    lines = probe(path, keys)
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}: vms.lua (runner lua) cannot run: {gone} cannot be started")
    assert lines[0].endswith("install the interpreter (Debian: apt-get install luajit)")
    assert lines[1].startswith(f"{path}: vms.ruby (runner ruby) cannot run: executable: 'no-such-ruby-here' "
                               f"not found on PATH")


def test_runner_exiting_2_is_named_with_its_last_stderr_line(tmp_path, open_dir):
    fake = fake_interpreter(open_dir, "python-broken", 'echo "warming up" >&2\necho "boom: no module" >&2\nexit 2\n')
    path, keys = experiment(tmp_path, {"p": ("python", f'executable = "{fake}"')})
    [line] = probe(path, keys)
    assert line.startswith(f"{path}: vms.p (runner python) cannot run: exited with status 2 on a trivial "
                           f"benchmark (boom: no module); reproduce with: ")
    # Before: argv alone, so a runner that needs its environment (Java's CLASSPATH) failed differently.
    again = line.split("reproduce with: ", 1)[1]
    assert again.endswith(" 3>&1") and " env -i " in f" {again}" and f"HOME=/tmp" in again
    assert "PATH=" in again and f" {fake} " in again
    shell = subprocess.run(["sh", "-c", again], capture_output=True, text=True, timeout=30)
    assert shell.returncode == 2 and shell.stderr.splitlines()[-1] == "boom: no module"


def test_runner_hanging_past_the_timeout_is_killed_and_named(tmp_path, open_dir):
    fake = fake_interpreter(open_dir, "python-hangs", "exec sleep 60\n")
    path, keys = experiment(tmp_path, {"p": ("python", f'executable = "{fake}"')})
    t0 = time.monotonic()
    [line] = probe(path, keys, timeout=1.0)
    assert time.monotonic() - t0 < 15
    assert "vms.p (runner python) cannot run: a trivial benchmark did not finish within 1s" in line


def test_bad_results_document_is_named(tmp_path, open_dir):
    fake = fake_interpreter(open_dir, "python-liar", "echo '{\"protocol_version\": 1}' >&3\n")
    path, keys = experiment(tmp_path, {"p": ("python", f'executable = "{fake}"')})
    [line] = probe(path, keys)
    assert "cannot run: wrote a bad results document: results document lacks" in line


@pytest.mark.parametrize("runner", ["java", "javascript"])
def test_unbuilt_jni_or_addon_names_build_runners(runner, tmp_path, monkeypatch):
    monkeypatch.setenv(languages.ENV_BUILD_DIR, str(tmp_path / "empty-build-dir"))
    path, keys = experiment(tmp_path, {"vm": (runner, 'executable = "/bin/sh"')})
    [line] = probe(path, keys)
    assert line.startswith(f"{path}: vms.vm (runner {runner}) cannot run: ")
    assert line.endswith(f"run `coldrun build-runners {runner}`")


def test_unbuilt_startup_wrapper_names_build_runners(tmp_path, monkeypatch):
    monkeypatch.setenv(languages.ENV_BUILD_DIR, str(tmp_path / "empty-build-dir"))
    path, keys = experiment(tmp_path, {"py": ("python", 'executable = "@python"')}, extra_vm='mode = "startup"')
    path.write_text(path.read_text().replace("iterations = 5", "iterations = 1"))
    [line] = probe(path, keys)
    assert line.startswith(f"{path}: vms.py (runner python) cannot run: the startup-time wrapper is not built")
    assert line.endswith("run `coldrun build-runners startup`")


def test_unbuilt_c_probe_names_the_reinstall(tmp_path, monkeypatch):
    monkeypatch.setattr(languages, "PROBE_DIR", tmp_path / "no-probe-dir")
    path, keys = experiment(tmp_path, {"c": ("c", "")})
    [line] = probe(path, keys)
    assert line.startswith(f"{path}: vms.c (runner c) cannot run: {tmp_path / 'no-probe-dir' / 'bench.so'} does not "
                           "exist; reinstall coldrun")


def test_each_distinct_vm_is_probed_once_and_external_is_not_launched(tmp_path, open_dir):
    log = open_dir / "calls"
    fake = fake_interpreter(open_dir, "python-counts", f'echo x >> {log}\nexit 3\n')
    ext = fake_interpreter(open_dir, "external-tool", f'echo ext >> {log}\nexit 3\n')
    path, _ = experiment(tmp_path, {"p": ("python", f'executable = "{fake}"'),
                                    "e": ("external", f'executable = "{ext}"')})
    lines = probe(path, ["b:p:v", "b:p:v", "b:e:v"])
    assert len(lines) == 1 and "vms.p " in lines[0]
    assert log.read_text() == "x\n"


def test_vm_args_and_env_are_those_of_the_experiment(tmp_path, open_dir):
    """The probe runs the VM as an execution would: with the experiment's args and environment."""
    path, keys = experiment(tmp_path, {"py": ("python", f'executable = "{sys.executable}"')},
                            extra_vm='args = ["-c", "import sys; sys.exit(7)"]')
    [line] = probe(path, keys)
    assert "vms.py (runner python) cannot run: exited with status 7" in line
    fake = fake_interpreter(open_dir, "python-env", 'echo "got $PROBE_SEEN" >&2\nexit 1\n')
    path, keys = experiment(tmp_path, {"py": ("python", f'executable = "{fake}"')},
                            extra_vm='env = { PROBE_SEEN = "from-the-experiment" }')
    [line] = probe(path, keys)
    assert "(got from-the-experiment)" in line


def test_unprivileged_prefix_is_empty_without_root():
    if os.geteuid() == 0:
        assert unprivileged_prefix()[1:] == [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"] \
            or not shutil.which("setpriv")
    else:
        assert unprivileged_prefix() == []
