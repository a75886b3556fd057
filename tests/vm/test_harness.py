"""The harness itself: the cached image boots under qemu, systemd comes up,
the payload's script runs (installing coldrun from a wheel into a venv), and
the guest powers itself off."""

from __future__ import annotations

import re


def test_guest_boots_installs_coldrun_and_powers_off(prepared_guest):
    m = re.search(r"VMTEST-PREPARED system=(\S+) python=(\S+) uname=(\S+) coldrun=(\S+)",
                  prepared_guest.serial)
    assert m, prepared_guest.serial[-2000:]
    assert m.group(1) in ("running", "degraded"), m.group(0)
    assert m.group(2) == "3.11"
    assert m.group(3).endswith("-amd64")
    assert m.group(4) == "/opt/coldrun/bin/coldrun"
    print(f"accel={prepared_guest.accel}")
