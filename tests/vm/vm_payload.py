"""The prepared guest disk (coldrun installed) and the per-run payload disk (the experiment and the
guest's boot script).

coldrun is installed the way a user installs it: a wheel built from the
working tree (``pip wheel``) plus its dependencies' wheels, installed offline
with the guest's own pip and Python into a venv.  That runs natively, in a
chroot of a copy of the image's tree, not in a boot of the guest: the same
files, without the four to six minutes of emulated CPU the install took under
TCG.  The dependencies' wheels are downloaded once and cached (keyed by the
dependency list).  They include numpy and scipy (the analysis extra, without
matplotlib, which only plots): a [stop] experiment analyses its records
between executions.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from filelock import FileLock

from vm_image import CACHE_DIR, GuestImage, make_root_disk
from vm_qemu import make_ext4

REPO = Path(__file__).resolve().parents[2]
GUEST_FILES = Path(__file__).parent / "guest"
STATE_DIR = "/var/lib/coldrun/vmtest"
# What pip must not copy from the working tree into the wheel build.
_IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                 "cache", "*-state", "demo-results", ".pytest_cache", ".mypy_cache", ".ruff_cache",
                                 "*.so", "iterations_runner")


def dependency_wheels(analysis: bool = True) -> Path:
    """Wheels of coldrun's dependencies for an offline install in a guest; ``analysis``: with the
    analysis extra's (numpy, scipy, statsmodels: a [stop] or [screening] experiment needs them)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + ([d for d in project["optional-dependencies"]["analysis"]
                                       if not d.startswith("matplotlib")] if analysis else [])
    key = hashlib.sha256("\n".join(sorted(deps)).encode()).hexdigest()[:12]
    out = CACHE_DIR / f"deps-{key}"
    if (out / "complete").exists():
        return out
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with FileLock(CACHE_DIR / f"deps-{key}.lock"):   # one download for every xdist worker
        if not (out / "complete").exists():
            _download(deps, out)
    return out


def _download(deps: list[str], out: Path) -> None:
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
                    "--python-version", "3.11", "--platform", "manylinux2014_x86_64",
                    "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_28_x86_64",
                    "-d", str(tmp), *deps], check=True)
    (tmp / "complete").write_text("\n".join(deps) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def coldrun_wheel(dest: Path, work: Path) -> Path:
    """Build the coldrun wheel from a clean copy of the working tree."""
    src = work / "src"
    shutil.copytree(REPO, src, ignore=_IGNORE, symlinks=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(dest), str(src)], check=True, capture_output=True)
    wheels = list(dest.glob("coldrun-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


# Appended to the Python benchmark of a poked run.  Waiting (asleep) costs no emulated CPU, where a benchmark
# long enough to outlast a daemon-reload under TCG on a loaded host (73 s seen) burnt a minute of it.
POKE_WAIT = """

import os as _os
import time as _time
_fib_iteration = run_iter


def run_iter(n):
    deadline = _time.monotonic() + 900
    while not _os.path.exists("/var/lib/coldrun-vmtest/poked") and _time.monotonic() < deadline:
        _time.sleep(0.2)
    _fib_iteration(n)
"""


def experiment_dir(dest: Path, executions: int, stop: str | None = None, experiment: str = "exp.toml",
                   pinning: bool = False, only_vm: str | None = None) -> None:
    """guest/exp.toml with ``executions``, or with the [stop] table ``stop`` in place of the count, and
    with ``only_vm``, that VM's key alone (the other VM's table and variant left out);
    ``experiment``: another file of guest/, as it is, with guest/benchmarks beside it; ``pinning``: with
    the benchmark CPUs' cpuset partition (the guest's CPU 1)."""
    (dest).mkdir(parents=True)
    if experiment != "exp.toml":
        text = (GUEST_FILES / experiment).read_text()
        shutil.copytree(GUEST_FILES / "benchmarks", dest / "benchmarks")
    else:
        text = (GUEST_FILES / "exp.toml").read_text()
        assert "\nexecutions = 2\n" in text
        if stop is None:
            text = text.replace("\nexecutions = 2\n", f"\nexecutions = {executions}\n")
        else:
            text = text.replace("\nexecutions = 2\n", "\n") + "\n" + stop
    if only_vm:
        others = [vm for vm in re.findall(r"^\[vms\.(\w+)\]$", text, re.MULTILINE) if vm != only_vm]
        assert others and len(others) + 1 == len(re.findall(r"^\[vms\.", text, re.MULTILINE)), only_vm
        for vm in others:   # a table runs to the next blank line
            text = re.sub(rf"^\[(vms\.{vm}|variants\.default-{vm})\]\n(.+\n)*\n?", "", text, flags=re.MULTILINE)
    if pinning:
        assert "\n[platform]\n" in text
        text = text.replace("\n[platform]\n", "\n[platform]\npinning = true\n")
    (dest / "exp.toml").write_text(text)
    # The demo's fib benchmark in both languages; the C one is compiled in the guest.
    demo = REPO / "configs/demo/benchmarks/fib"
    for lang, name in (("python", "bench.py"), ("c", "bench.c")):
        d = dest / "benchmarks/fib" / lang
        d.mkdir(parents=True)
        shutil.copy(demo / lang / name, d / name)
    if pinning:   # the poke must land while the Python benchmark runs: its first iteration waits for it
        bench = dest / "benchmarks/fib/python/bench.py"
        bench.write_text(bench.read_text() + POKE_WAIT)


# In the chroot: the README's install (a venv, then pip install of the coldrun wheel, with pip itself from
# Debian's wheel, as `python3 -m venv` would put it there: the lab's Ansible role upgrades coldrun with it),
# then the imports of the boot service's coldrun, status, export, the Python runner, a [stop] decision and a
# screening plan, which writes their __pycache__ as a first run would (numpy's and scipy's in full would
# cost more than they save).
INSTALL = """set -e
python3 -m venv --without-pip /opt/coldrun
pip_wheel=$(ls /usr/share/python-wheels/pip-*.whl | head -n 1)
/opt/coldrun/bin/python "$pip_wheel/pip" install -q --no-compile --no-index --find-links /var/tmp/wheels \\
    "$pip_wheel" coldrun numpy scipy pyDOE3
/opt/coldrun/bin/python -m pip --version > /dev/null
/opt/coldrun/bin/coldrun --help > /dev/null
/opt/coldrun/bin/python -c 'import supervisor.cli, iteration_runners.python.iterations_runner
import analysis.pilot.stopping, analysis.pilot.wps, pyDOE3'
python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'
"""


def prepare_disk(image: GuestImage, work: Path) -> str:
    """``work``/root.ext4: the image with coldrun installed in /opt/coldrun and the test's sendmail; returns
    the guest Python's version.  (Needs root: chroot.)"""
    tree = work / "rootfs"
    subprocess.run(["cp", "-a", str(image.rootfs), str(tree)], check=True)
    try:
        wheels = tree / "var/tmp/wheels"
        wheels.mkdir(parents=True)
        for whl in dependency_wheels().glob("*.whl"):
            shutil.copy(whl, wheels)
        coldrun_wheel(wheels, work)
        shutil.copy(GUEST_FILES / "fake-sendmail", tree / "usr/sbin/sendmail")
        os.chmod(tree / "usr/sbin/sendmail", 0o755)
        r = subprocess.run(["chroot", str(tree), "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                            "HOME=/root", "LANG=C.UTF-8", "/bin/sh", "-c", INSTALL],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"installing coldrun into the guest's tree failed: {r.stderr[-2000:]}")
        shutil.rmtree(wheels)
        with open(work / "prepare.log", "w") as log:
            make_root_disk(tree, work / "root.ext4", log)
        return r.stdout.strip().splitlines()[-1]
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def build_payload(work: Path, *, mode: str, executions: int = 2, stop: str | None = None,
                  hold: str | None = None, experiment: str = "exp.toml", hostname: str | None = None,
                  ssh_key: Path | None = None, simulate: bool = False, poke: bool = False,
                  only_vm: str | None = None) -> Path:
    """Make ``work``/payload-<mode>.ext4 and return its path.

    "experiment": the experiment (``stop``: a [stop] table instead of the
    count; ``only_vm``: one VM's key alone) and its benchmarks, and ``hold``: where the boot service's coldrun
    waits for a power cut, and ``simulate``: the guest runs it in one boot with
    --simulate-reboots, and ``poke``: with pinning, and while a benchmark runs the
    guest reloads systemd and starts a transient unit once (the partition must
    survive both); "lab": the guest's ``hostname`` and the public
    ``ssh_key`` root accepts (test_lab.py: Ansible installs the rest).
    All carry boot.sh.
    """
    pdir = work / f"payload-{mode}"
    pdir.mkdir(parents=True)
    if mode == "experiment":
        experiment_dir(pdir / "exp", executions, stop, experiment, pinning=poke, only_vm=only_vm)
        (pdir / "state_dir").write_text(STATE_DIR + "\n")
        if hold:   # COLDRUN_TEST_HOLD_AT for the boot service (supervisor/boot/crash_points.py)
            (pdir / "hold").write_text(hold + "\n")
        if simulate:
            (pdir / "simulate").write_text("1\n")
        if poke:
            (pdir / "poke").write_text("1\n")
    elif mode == "lab":
        assert hostname and ssh_key
        (pdir / "hostname").write_text(hostname + "\n")
        shutil.copy(ssh_key, pdir / "authorized_keys")
    else:
        raise ValueError(mode)
    shutil.copy(GUEST_FILES / "boot.sh", pdir / "boot.sh")
    (pdir / "mode").write_text(mode + "\n")
    size_mb = 16 + 2 * sum(f.stat().st_size for f in pdir.rglob("*") if f.is_file()) // 2**20
    image = work / f"payload-{mode}.ext4"
    make_ext4(pdir, image, size_mb, "payload")
    return image
