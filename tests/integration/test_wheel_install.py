"""The installed product runs every language: sdist and wheel carry every runner file; a wheel installed
into a fresh venv outside the checkout builds its runners with `coldrun build-runners` and runs a
simulated experiment with one execution per language, also from a working directory holding the checkout.

The sdist is built from a copy of the checkout (tracked and untracked-but-not-ignored files: what a
clean clone plus the change at hand holds), the wheel from the sdist, so both are proven complete.
Dependencies come from a wheelhouse kept in ~/.cache (filled once through pip's cache), so reruns
are offline.
"""

from __future__ import annotations

import bz2
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from coldrun_helpers import NO_WAITS, REPO
from iteration_runners import languages
from real_parts import missing_real_part

WHEELHOUSE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "coldrun-test-wheelhouse"
# vm name -> (runner, executable, benchmark file made from iteration_runners/probe/).
VMS = {
    "c": ("c", None, "bench.so"),
    "python": ("python", "python3", "bench.py"),
    "pypy": ("pypy", "pypy3", "bench.py"),
    "lua": ("lua", "luajit", "bench.lua"),
    "javascript": ("javascript", "node", "bench.js"),
    "java": ("java", "java", "KrunEntry.class"),
    "ruby": ("ruby", "ruby", "bench.rb"),
    "php": ("php", "php", "bench.php"),
}
PACKAGES = {"pypy3": "pypy3", "luajit": "luajit", "node": "nodejs", "java": "openjdk-17-jdk-headless",
            "javac": "openjdk-17-jdk-headless", "ruby": "ruby", "php": "php-cli", "cc": "gcc"}
ITERATIONS = 3


def run(argv: list, *, cwd: Path, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def runner_files_needed() -> set[str]:
    """Every file (relative to site-packages) languages.py may need at run time or build time."""
    rel = lambda p: str(Path(p).relative_to(REPO))  # noqa: E731
    needed = {rel(languages.RUNNERS_DIR / r.runner_file) for r in languages.LANGUAGE_RUNNERS.values()
              if r.name != "java"}
    needed |= {rel(languages.RUNNERS_DIR / r.startup_runner) for r in languages.LANGUAGE_RUNNERS.values()
               if r.name != "java"}
    needed |= {rel(languages.RUNNERS_DIR / f) for _, f in languages.STARTUP_ONLY_RUNNERS.values()}
    needed |= {rel(s) for parts in languages._ARTEFACTS.values() for a in parts for s in a.sources}
    needed |= {rel(languages.probe_benchmark(r)) for r in languages.KNOWN_LANGUAGE_RUNNERS
               if r != "java"} | {rel(languages.probe_benchmark("python")), "iteration_runners/probe/bench.c"}
    needed |= {"iteration_runners/python/iterations_runner.py", "iteration_runners/protocol.py",
               "libkruntime/libkruntime.h"}
    return needed


def copy_checkout(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = REPO / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def install_dependencies(venv_pip: Path, wheel: Path, cwd: Path) -> None:
    offline = [venv_pip, "install", "-q", "--no-index", "--find-links", WHEELHOUSE, wheel]
    if WHEELHOUSE.is_dir() and subprocess.run(offline, cwd=cwd, capture_output=True).returncode == 0:
        return
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    run([venv_pip, "download", "-q", "--only-binary=:all:", "-d", WHEELHOUSE, wheel], cwd=cwd)
    run(offline, cwd=cwd)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(tmp dir, checkout copy, sdist, wheel, venv bin dir, seconds it took)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout to know its files")
    t0 = time.monotonic()
    # Not under pytest's tmp (0700): run as root, the experiments drop every benchmark to a fresh
    # unprivileged user, as on a benchmark machine, and that user must reach the venv and benchmarks.
    tmp = Path(tempfile.mkdtemp(prefix="coldrun-wheel-"))
    tmp.chmod(0o755)
    src, dist = tmp / "checkout", tmp / "dist"
    copy_checkout(src)
    run([sys.executable, "-c", f"from setuptools import build_meta as b; b.build_sdist({str(dist)!r})"], cwd=src)
    [sdist] = dist.glob("*.tar.gz")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dist, sdist],
        cwd=tmp)
    [wheel] = dist.glob("*.whl")
    venv = tmp / "venv"
    # The system's Python, as a user installs it (the suite's own may live where only root can read).
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    run([python, "-m", "venv", venv], cwd=tmp)
    install_dependencies(venv / "bin" / "pip", wheel, tmp)
    yield tmp, src, sdist, wheel, venv / "bin", time.monotonic() - t0
    shutil.rmtree(tmp, ignore_errors=True)


def test_sdist_and_wheel_carry_every_runner_file(installed):
    _, _, sdist, wheel, _, _ = installed
    with tarfile.open(sdist) as t:
        in_sdist = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    needed = runner_files_needed()
    assert len(needed) >= 25
    assert needed - in_sdist == set()
    assert needed - in_wheel == set()
    # Built on the build machine: the C runner and libkruntime.so; never build output of this checkout.
    assert {"iteration_runners/c/iterations_runner", "iteration_runners/probe/bench.so",
            "libkruntime/libkruntime.so"} <= in_wheel
    assert not [n for n in in_sdist | in_wheel if "/build/" in n or n.endswith((".class", ".node", ".pyc"))]


def write_benchmarks(exp_dir: Path, bin_dir: Path) -> None:
    """The shipped probe benchmarks, laid out Krun-style; C and Java compiled here like a user would."""
    probe = languages.PROBE_DIR
    for name, (runner, _, target) in VMS.items():
        d = exp_dir / "benchmarks" / "sum" / name
        d.mkdir(parents=True)
        if runner == "c":
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", d / target, probe / "bench.c"], check=True)
        elif runner == "java":
            classes = subprocess.run([bin_dir / "python", "-c", "from iteration_runners import languages; "
                                      "print(languages.JAVA_CLASSES.find())"], capture_output=True, text=True,
                                     check=True, cwd=exp_dir).stdout.strip()
            subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", classes, "-d", d,
                            probe / "KrunEntry.java"], check=True)
        else:
            shutil.copy(probe / target, d / target)


def experiment_text() -> str:
    text = f'name = "every-language"\nexecutions = 1\nexecution_timeout = "2min"\n{NO_WAITS}[benchmarks]\nsum = 100\n'
    for name, (runner, exe, target) in VMS.items():
        text += f'[variants.{name}]\ntarget = "{target}"\nsubdir = "{name}"\n'
    for name, (runner, exe, target) in VMS.items():
        exe_line = f'executable = "{exe}"\n' if exe else ""
        text += f'[vms.{name}]\nrunner = "{runner}"\n{exe_line}iterations = {ITERATIONS}\nvariants = ["{name}"]\n'
    return text


@pytest.fixture(scope="module")
def built_runners(installed):
    tmp, _, _, _, bin_dir, _ = installed
    for tool, package in PACKAGES.items():
        if shutil.which(tool) is None:
            missing_real_part(f"{tool} is not installed (apt-get install {package})")
    first = run([bin_dir / "coldrun", "build-runners"], cwd=tmp).stdout
    again = run([bin_dir / "coldrun", "build-runners"], cwd=tmp).stdout
    return first, again


def test_build_runners_builds_once_then_is_idempotent(built_runners, installed):
    first, again = built_runners
    bin_dir = installed[4]
    site = next((bin_dir.parent / "lib").glob("python*/site-packages"))
    for part in ("java", "javascript", "ruby", "php", "startup"):   # php: the compiled binding (issue 29)
        assert f"{part}: built: {site / 'iteration_runners' / part / 'build'}" in first
        assert f"{part}: up to date: " in again
    for name in ("c", "python", "pypy", "lua"):
        assert f"{name}: nothing to compile" in first


# "checkout": run from a working directory that contains the source checkout, whose unbuilt
# packages must not shadow the installed ones after a simulated reboot.
@pytest.mark.parametrize("where", ["outside", "checkout"])
def test_every_language_runs_from_the_installed_wheel(where, installed, built_runners):
    tmp, src, _, _, bin_dir, setup_seconds = installed
    exp_dir = tmp / f"exp-{where}"
    write_benchmarks(exp_dir, bin_dir)
    (exp_dir / "exp.toml").write_text(experiment_text())
    cwd = src if where == "checkout" else exp_dir
    t0 = time.monotonic()
    state = exp_dir / "state"
    check = run([bin_dir / "coldrun", "check", exp_dir / "exp.toml"], cwd=cwd)
    assert "OK" in check.stdout
    run([bin_dir / "coldrun", "start", exp_dir / "exp.toml", "--simulate-reboots", "--state-dir", state], cwd=cwd)
    out = exp_dir / "native.json.bz2"
    run([bin_dir / "coldrun", "export", state, "--format", "native", "-o", out], cwd=cwd)
    bundle = json.loads(bz2.decompress(out.read_bytes()))
    recs = {r["key"]: r for r in bundle["executions"]}
    assert sorted(recs) == sorted(f"sum:{name}:{name}" for name in VMS)
    for key, rec in recs.items():
        assert rec["state"] == "completed", f"{key}: {rec.get('reason')}: {rec.get('stderr', '')[-500:]}"
        assert len(rec["wallclock_times"]) == ITERATIONS
    print(f"wheel build + install {setup_seconds:.0f}s, experiment from {where} {time.monotonic() - t0:.0f}s")
