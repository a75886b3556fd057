"""The harness itself: the cached image boots under qemu, systemd comes up, the
payload's script runs, and the guest powers itself off."""

from __future__ import annotations

import shutil
from pathlib import Path

from vm_qemu import copy_disk, make_ext4

GUEST_FILES = Path(__file__).parent / "guest"


def test_guest_boots_runs_a_command_and_powers_off(guest_image, make_guest, tmp_path):
    payload_dir = tmp_path / "payload"
    payload_dir.mkdir()
    shutil.copy(GUEST_FILES / "boot.sh", payload_dir / "boot.sh")
    (payload_dir / "mode").write_text("smoke\n")
    payload = tmp_path / "payload.ext4"
    make_ext4(payload_dir, payload, 16, "payload")
    disk = tmp_path / "root.ext4"
    copy_disk(guest_image.disk, disk)

    guest = make_guest(guest_image, disk, payload)
    guest.start()
    m = guest.wait_for(r"VMTEST-SMOKE system=(\S+) python=(\S+) uname=(\S+)", timeout=180)
    assert m.group(1) in ("running", "degraded"), m.group(0)
    assert m.group(2) == "3.11"
    assert m.group(3).endswith("-amd64")
    assert guest.wait_exit(timeout=60) == 0
    print(f"accel={guest.accel}")
