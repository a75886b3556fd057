"""What one boot of the VM tests' guest costs in emulated CPU, and what coldrun's start-up costs inside it.

    .venv/bin/python bench/bench_vm_guest.py [--prepared DISK] [--cpu MODEL ...] [--smp N ...] [--guests N]

The VM tests (tests/vm/) run a Debian guest under qemu; where KVM cannot be used (no vmx/svm here)
that is TCG, software emulation, and the suite's length comes down to the guests' CPU time.  For
each qemu -cpu model named (default: max, the tests' own), this boots a copy of the tests' cached
image (tests/vm/vm_image.py) with a payload whose script times, inside the guest, `python -c pass`,
`import supervisor.cli` (cold: no bytecode cache; then warm, twice) and `coldrun status --help`, and
powers off.  It prints qemu's CPU seconds to the payload's first line (kernel and systemd) and in
all, and the guest's own seconds per step (the guest's clock: wall time inside the guest).

--smp: vCPU counts to compare (default 2); --guests: boot that many copies at once, as the suite's VM
groups do (each line is one guest; with more guests than cores, CPU seconds grow with the contention).

--prepared: a disk with coldrun installed (tests/vm's prepared guest, kept with COLDRUN_VM_KEEP=1
and --basetemp, e.g. /var/tmp/x/prepared-guest/root.ext4); without one, only the boot is measured.
Needs root and qemu (scripts/setup --for-tests).  Compare models side by side in one run: the
machine is shared, and CPU seconds are steadier than wall seconds under load, but not immune.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests/vm")]

import vm_image  # noqa: E402
from vm_qemu import Guest, copy_disk, make_ext4  # noqa: E402

SCRIPT = r"""#!/bin/sh
say() { echo "BENCH-$*" > /dev/console; }
say "BOOTED"
P=/opt/coldrun/bin/python
t() { s=$(cut -d' ' -f1 /proc/uptime); "$@" > /dev/null 2>&1; e=$(cut -d' ' -f1 /proc/uptime); echo "$s $e" | awk '{printf "%.1f", $2 - $1}'; }
if [ -x "$P" ]; then
    # a cache of our own, so the first import compiles whatever the disk's __pycache__ holds
    export PYTHONPYCACHEPREFIX=/var/tmp/bench-pycache
    rm -rf "$PYTHONPYCACHEPREFIX"
    say "STEP python-pass $(t $P -c pass)"
    say "STEP import-cli-cold $(t $P -c 'import supervisor.cli')"
    say "STEP import-cli-warm $(t $P -c 'import supervisor.cli') $(t $P -c 'import supervisor.cli')"
    say "STEP coldrun-status-help $(t /opt/coldrun/bin/coldrun status --help)"
fi
say "STEP startup $(systemd-analyze 2>&1 | head -n 1)"
sync
systemctl poweroff
"""


def qemu_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_boot(image: vm_image.GuestImage, disk_src: Path, cpu: str, work: Path, smp: int = 2) -> dict:
    work.mkdir(parents=True)
    payload_dir = work / "payload"
    payload_dir.mkdir()
    (payload_dir / "boot.sh").write_text(SCRIPT)
    payload = work / "payload.ext4"
    make_ext4(payload_dir, payload, 8, "payload")
    disk = work / "root.ext4"
    copy_disk(disk_src, disk)
    guest = Guest(image, disk, payload, work, cpus=smp)
    argv = guest.argv()
    if guest.accel == "tcg":
        argv[argv.index("max")] = cpu
    guest.argv = lambda: argv
    guest.start()
    t0, cpu_s, booted = time.monotonic(), 0.0, None
    try:
        while guest.proc.poll() is None and time.monotonic() - t0 < 1800:
            try:
                cpu_s = qemu_cpu_seconds(guest.proc.pid)
            except OSError:
                pass
            if booted is None and "BENCH-BOOTED" in guest.serial():
                booted = cpu_s
            time.sleep(0.2)
    finally:
        guest.kill()
    steps = {}
    for line in guest.serial().splitlines():
        if line.startswith("BENCH-STEP "):
            name, _, value = line.removeprefix("BENCH-STEP ").partition(" ")
            steps[name] = value
    return {"accel": guest.accel, "cpu_to_script": booted, "cpu_total": cpu_s,
            "wall": time.monotonic() - t0, "steps": steps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prepared", type=Path, help="a disk with coldrun installed (tests/vm's prepared guest)")
    ap.add_argument("--cpu", nargs="+", default=["max"], help="qemu -cpu models to compare (TCG only)")
    ap.add_argument("--smp", nargs="+", type=int, default=[2], help="vCPU counts to compare")
    ap.add_argument("--guests", type=int, default=1, help="guests booting at once")
    args = ap.parse_args()
    image = vm_image.cached_image() or vm_image.build_image()
    disk = args.prepared or image.disk
    load = os.getloadavg()[0]
    print(f"disk {disk}; load {load:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-vm-", dir="/var/tmp") as tmp:
        for cpu in args.cpu:
            for smp in args.smp:
                work = Path(tmp) / f"{cpu}-{smp}"
                runs: list[dict] = [{}] * args.guests
                def boot_one(i: int) -> None:
                    runs[i] = one_boot(image, disk, cpu, work / str(i), smp)
                threads = [threading.Thread(target=boot_one, args=(i,)) for i in range(args.guests)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                for r in runs:
                    print(f"-cpu {cpu} -smp {smp} ({r['accel']}, {args.guests} at once): qemu CPU "
                          f"{r['cpu_to_script'] or float('nan'):.1f} s to the payload's script, {r['cpu_total']:.1f} s "
                          f"in all; wall {r['wall']:.1f} s")
                    for name, value in r["steps"].items():
                        print(f"    {name}: {value}")
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
