"""The per-run payload disk: coldrun as wheels, the experiment, and the guest's boot script.

coldrun is installed in the guest the way a user installs it: a wheel built
from the working tree (``pip wheel``) plus its dependencies' wheels,
installed offline with pip into a venv.  The dependencies' wheels are
downloaded once and cached (keyed by the dependency list).  They include
numpy and scipy (the analysis extra, without matplotlib, which only plots):
a [stop] experiment analyses its records between executions.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from filelock import FileLock

from vm_image import CACHE_DIR
from vm_qemu import make_ext4

REPO = Path(__file__).resolve().parents[2]
GUEST_FILES = Path(__file__).parent / "guest"
STATE_DIR = "/var/lib/coldrun/vmtest"
# What pip must not copy from the working tree into the wheel build.
_IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                 "cache", "*-state", "demo-results", ".pytest_cache", "*.so",
                                 "iterations_runner")


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


def experiment_dir(dest: Path, executions: int, stop: str | None = None, experiment: str = "exp.toml",
                   pinning: bool = False) -> None:
    """guest/exp.toml with ``executions``, or with the [stop] table ``stop`` in place of the count;
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
    if pinning:   # and a longer benchmark (fib 25: tens of seconds in the guest), which the poke lands inside
        assert "\n[platform]\n" in text and "\nfib = 20\n" in text
        text = text.replace("\n[platform]\n", "\n[platform]\npinning = true\n").replace("\nfib = 20\n", "\nfib = 25\n")
    (dest / "exp.toml").write_text(text)
    # The demo's fib benchmark in both languages; the C one is compiled in the guest.
    demo = REPO / "configs/demo/benchmarks/fib"
    for lang, name in (("python", "bench.py"), ("c", "bench.c")):
        d = dest / "benchmarks/fib" / lang
        d.mkdir(parents=True)
        shutil.copy(demo / lang / name, d / name)


def build_payload(work: Path, *, mode: str, executions: int = 2, stop: str | None = None,
                  hold: str | None = None, experiment: str = "exp.toml", hostname: str | None = None,
                  ssh_key: Path | None = None, simulate: bool = False, poke: bool = False) -> Path:
    """Make ``work``/payload-<mode>.ext4 and return its path.

    "prepare": the wheels (coldrun from the working tree, its dependencies);
    "experiment": the experiment (``stop``: a [stop] table instead of the
    count) and its benchmarks, and ``hold``: where the boot service's coldrun
    waits for a power cut, and ``simulate``: the guest runs it in one boot with
    --simulate-reboots, and ``poke``: with pinning, and while a benchmark runs the
    guest reloads systemd and starts a transient unit once (the partition must
    survive both); "lab": the guest's ``hostname`` and the public
    ``ssh_key`` root accepts (test_lab.py: Ansible installs the rest).
    All carry boot.sh.
    """
    pdir = work / f"payload-{mode}"
    pdir.mkdir(parents=True)
    if mode == "prepare":
        wheels = pdir / "wheels"
        wheels.mkdir()
        for whl in dependency_wheels().glob("*.whl"):
            shutil.copy(whl, wheels)
        coldrun_wheel(wheels, work)
    elif mode == "experiment":
        experiment_dir(pdir / "exp", executions, stop, experiment, pinning=poke)
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
    for name in ("boot.sh", "fake-sendmail"):
        shutil.copy(GUEST_FILES / name, pdir / name)
    (pdir / "mode").write_text(mode + "\n")
    size_mb = 16 + 2 * sum(f.stat().st_size for f in pdir.rglob("*") if f.is_file()) // 2**20
    image = work / f"payload-{mode}.ext4"
    make_ext4(pdir, image, size_mb, "payload")
    return image
