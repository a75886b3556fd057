"""Fixtures for the real-reboot VM tests: the cached guest image and a per-test guest.

Skipped, with the reason printed, when the tools cannot be used here (not
root, no qemu/debootstrap); under CI=true that is a failure instead, never a
silent skip (tests/real_parts.py).  CI installs them (scripts/setup --for-tests):
    apt-get install -y --no-install-recommends qemu-system-x86 qemu-utils debootstrap e2fsprogs
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

sys.path.insert(0, str(Path(__file__).parent))

from real_parts import missing_real_part  # noqa: E402  (tests/ is on sys.path: tests/conftest.py)

import vm_image  # noqa: E402
from vm_payload import prepare_disk  # noqa: E402
from vm_qemu import Guest  # noqa: E402

APT_LINE = ("apt-get install -y --no-install-recommends qemu-system-x86 qemu-utils "
            "debootstrap e2fsprogs")


@pytest.fixture(scope="session")
def guest_image() -> vm_image.GuestImage:
    if os.environ.get("COLDRUN_SKIP_VM_TESTS"):
        pytest.skip("COLDRUN_SKIP_VM_TESTS is set")
    missing = vm_image.missing_tools()
    if missing:
        missing_real_part(f"VM tests need {', '.join(missing)}: install with `{APT_LINE}`")
    found = vm_image.cached_image()
    if found:
        return found
    if os.geteuid() != 0:
        missing_real_part("building the VM image needs root (debootstrap); no cached image in "
                          f"{vm_image.CACHE_DIR}")
    log = vm_image.CACHE_DIR.parent / "coldrun-vm-build.log"
    try:
        # One build for every xdist worker (and any other test run on this machine): the others wait.
        vm_image.CACHE_DIR.mkdir(parents=True, exist_ok=True)
        with FileLock(vm_image.CACHE_DIR / "build.lock"):
            found = vm_image.cached_image()
            if found:
                return found
            with open(log, "w") as f:
                return vm_image.build_image(log=f)
    except Exception as e:  # network or mirror trouble: say why; fail only under CI
        missing_real_part(f"could not build the Debian guest image ({e}); see {log}")


@dataclass
class PreparedGuest:
    """A guest disk with coldrun installed, and the guest Python's version."""
    disk: Path
    python: str


def _run_shared_dir(tmp_path_factory) -> Path:
    """A directory every xdist worker of this run sees (the controller's basetemp); alone, our own.
    (tests/conftest.py's pytest_sessionfinish drops the prepared disk there at the end.)"""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def prepared_guest(guest_image, tmp_path_factory):
    """The image with coldrun installed from the working tree's wheel (vm_payload.prepare_disk, natively in
    a chroot: seconds, where a boot of the guest took minutes).  Each experiment run starts from a copy of
    this disk.  Once per run: the first xdist worker to need it prepares it under a lock, the others wait."""
    work = _run_shared_dir(tmp_path_factory) / "prepared-guest"
    with FileLock(str(work) + ".lock"):
        if not (work / "prepared.json").exists():
            shutil.rmtree(work, ignore_errors=True)    # a half-made one from a worker that died
            work.mkdir(parents=True)
            python = prepare_disk(guest_image, work)
            (work / "prepared.json").write_text(json.dumps({"python": python}))
    facts = json.loads((work / "prepared.json").read_text())
    yield PreparedGuest(work / "root.ext4", facts["python"])


@pytest.fixture
def make_guest(tmp_path):
    guests: list[Guest] = []

    def make(image, disk, payload, workdir: Path | None = None, **kw) -> Guest:
        g = Guest(image, disk, payload, workdir or tmp_path, **kw)
        guests.append(g)
        return g

    yield make
    for g in guests:
        g.kill()
        _drop_disk(g.disk)


def _drop_disk(disk: Path) -> None:
    """Guest disks are ~1 GB each; keep them only when asked (COLDRUN_VM_KEEP=1)."""
    if not os.environ.get("COLDRUN_VM_KEEP"):
        disk.unlink(missing_ok=True)
