"""A duet experiment in the real Debian guest (2 CPUs, systemd's cgroup v2 with the cpuset controller), run in one
boot with --simulate-reboots: each side's execution cgroup is given its own CPU by cpuset, and the records say so.
This host's own cgroup v2 has no cpuset (tests/unit/supervisor/test_pair_cpuset.py plays the kernel instead)."""

from __future__ import annotations

import time

from test_real_reboots import GUEST_WAIT, QUIET, Run, collect
from vm_payload import build_payload
from vm_qemu import GuestError, copy_disk


def test_each_side_of_a_pair_runs_in_its_own_single_cpu_cpuset(guest_image, prepared_guest, make_guest, tmp_path):
    t0 = time.monotonic()
    payload = build_payload(tmp_path, mode="experiment", experiment="duet.toml", simulate=True)
    disk = tmp_path / "root.ext4"
    copy_disk(prepared_guest.disk, disk)
    guest = make_guest(guest_image, disk, payload)
    guest.start()
    guest.wait_booted()
    guest.wait_for(r"VMTEST-(FINISHED|SETUP-FAILED).*", timeout=GUEST_WAIT, quiet=QUIET)
    assert "VMTEST-FINISHED simulated rc=0" in guest.serial(), GuestError("the duet experiment failed", guest)
    assert guest.wait_exit(timeout=120) == 0
    run = collect(Run(guest, disk, tmp_path / "out"))

    execs = run.bundle["executions"]
    assert [(e["side"], e["state"]) for e in execs] == [("a", "completed"), ("b", "completed")] * 2, \
        [e.get("reason") for e in execs]
    for a, b in zip(execs[::2], execs[1::2]):
        assert {a["pair"]["cpu"], b["pair"]["cpu"]} == {0, 1}
        for side in (a, b):
            pair = side["pair"]
            assert pair["placement_mechanism"] == "cpuset", pair
            assert pair["effective_cpus"] == pair["verified_cpus"] == [pair["cpu"]], pair
            assert pair["barrier"] and pair["spin_us"] == 100
    print(f"accel={guest.accel} duration={time.monotonic() - t0:.0f}s")
