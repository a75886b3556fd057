"""A screening experiment in the real Debian guest, rebooting for real: a 2 x 2 full factorial of one runtime
platform factor (perf_event_max_sample_rate, set and read back through coldrun's control) and one factor that
needs a reboot (vm.swappiness from a sysctl.d file that systemd-sysctl applies at boot; switched between batches
and read back after the boot).  Each record's levels are checked against what the benchmark itself saw in the
guest (tests/vm/guest/benchmarks/probe prints the two settings on stderr)."""

from __future__ import annotations

import re
from collections import Counter

from test_real_reboots import GUEST_WAIT, QUIET, SOLO_CPUS, Run, collect, log_records
from vm_payload import build_payload
from vm_qemu import GuestError, copy_disk, guest_path_exists

PROBE = re.compile(r"SCREEN-PROBE rate=(\d+) swappiness=(\d+)")


def test_screening_levels_hold_across_real_reboots(guest_image, prepared_guest, make_guest, tmp_path):
    payload = build_payload(tmp_path, mode="experiment", experiment="screen.toml")
    disk = tmp_path / "root.ext4"
    copy_disk(prepared_guest.disk, disk)
    guest = make_guest(guest_image, disk, payload, cpus=SOLO_CPUS)
    guest.start()
    guest.wait_booted()
    run = Run(guest, disk, tmp_path / "out")
    guest.wait_for(r"VMTEST-START perf", timeout=GUEST_WAIT, quiet=QUIET)
    guest.wait_for(r"VMTEST-(FINISHED|STUCK|SETUP-FAILED)", timeout=GUEST_WAIT, quiet=QUIET)
    assert "VMTEST-FINISHED" in guest.serial(), GuestError("screening experiment did not finish", guest)
    assert guest.wait_exit(timeout=120) == 0
    collect(run)

    assert run.bundle["screening"] == {"factors": {"rate": ["1", "2000"], "swappiness": ["60", "10"]},
                                       "design": "full factorial", "seed": 3, "reboot_factors": ["swappiness"],
                                       "boot_check_batch": None, "aliases": []}
    execs = run.bundle["executions"]
    assert len(execs) == 4 and [e["state"] for e in execs] == ["completed"] * 4, [e.get("reason") for e in execs]
    assert sorted(e["screening"]["treatment"] for e in execs) == [0, 1, 2, 3]
    for e in execs:
        seen = PROBE.search(e["stderr_tail"] or "")
        assert seen, e["stderr_tail"]
        levels = e["screening"]["levels"]
        assert (levels["rate"], levels["swappiness"]) == seen.groups(), (levels, seen.group(0))
    # split plot: each batch holds one swappiness level, and the two batches run one after the other
    batches = [e["screening"]["batch"] for e in execs]
    assert batches == sorted(batches) and Counter(batches) == {0: 2, 1: 2}
    assert {b: {e["screening"]["levels"]["swappiness"] for e in execs if e["screening"]["batch"] == b}
            for b in (0, 1)} in ({0: {"60"}, 1: {"10"}}, {0: {"10"}, 1: {"60"}})
    switches = [r for r in log_records(run) if r.get("event") == "screening: switching a level that needs a reboot"]
    assert 1 <= len(switches) <= 2, switches       # into the batch at 10 (and back to 60 if it came first)
    # the switch's file was removed from the undo log at the end
    assert not guest_path_exists(disk, "/etc/sysctl.d/90-coldrun-screen.conf")
    print(f"accel={guest.accel} boots={run.bundle['boots']} switches={len(switches)}")
