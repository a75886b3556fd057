"""Builds (once) and caches the minimal Debian 12 guest image for the VM tests.

The image is a raw ext4 filesystem (no partition table) made with
``debootstrap --variant=minbase`` plus the few packages coldrun and the test
need, and ``mkfs.ext4 -d`` (no loop device, no mount).  The guest kernel and
initrd are copied out beside it so qemu boots them with -kernel/-initrd, and the
tree itself is kept: the prepared guest (tests/vm/vm_payload.py) installs coldrun
into a copy of it natively, in a chroot, instead of in an emulated boot.

The cache key covers the package list and the files baked into the image, so
changing either rebuilds.  Run by hand with ``python tests/vm/vm_image.py``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUITE = "bookworm"
MIRROR = os.environ.get("COLDRUN_VM_MIRROR", "http://deb.debian.org/debian")
CACHE_DIR = Path(os.environ.get("COLDRUN_VM_CACHE", "/var/cache/coldrun-vm"))
IMAGE_SIZE = "3G"

# What the guest needs: an init system, Python with venv for installing
# coldrun as a user would, a C compiler for C benchmarks, a kernel.
PACKAGES = [
    "systemd", "systemd-sysv", "dbus", "udev", "kmod",
    "linux-image-amd64", "initramfs-tools",
    "python3", "python3-venv", "gcc", "libc6-dev",
    "sudo", "procps", "util-linux", "e2fsprogs",
    # The lab test (test_lab.py) reaches guests with Ansible over SSH; other
    # tests never start sshd (it is not enabled: see SSH_UNITS).
    "openssh-server", "iproute2",
]

# Installed but not started at boot: only the lab payload's boot.sh starts sshd,
# so the other VM tests pay no boot time for it.
SSH_UNITS = ["ssh.service", "sshd.service"]

# The one test-only unit baked into the image: at every boot it mounts the
# payload disk (/dev/vdb) and runs the payload's boot.sh.  Everything the
# test does inside the guest lives on the payload, so the cached image never
# needs rebuilding when the test changes.
VMTEST_UNIT = """\
[Unit]
Description=coldrun VM test driver (test only: runs the payload disk's boot.sh)
After=multi-user.target
ConditionPathExists=/dev/vdb

[Service]
Type=exec
ExecStartPre=/bin/mkdir -p /mnt/payload
ExecStartPre=/bin/mount -o ro /dev/vdb /mnt/payload
ExecStart=/bin/sh /mnt/payload/boot.sh
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
"""

FSTAB = "/dev/vda / ext4 rw,errors=remount-ro 0 1\n"

# Test only: coldrun's own unit logs to the journal; this drop-in also puts
# its output on the serial console, where the host watches the boot cycle.
# (coldrun removes its unit file at the end; a drop-in alone is no unit.)
CONSOLE_DROPIN = """\
[Service]
StandardOutput=journal+console
StandardError=journal+console
"""

# Under TCG every boot costs CPU time: keep only what the test needs, and
# give the initrd just the modules that find the root disk.  No udev coldplug
# (the trigger and the modprobe@ units): the initrd has loaded the disks'
# drivers, and the lab's boot.sh loads virtio_net itself.  With the generators
# below and multi-user.target as the default, that took a boot's emulated CPU
# up to the payload's script from 35-37 s to 22-28 s (bench/bench_vm_guest.py's
# boot, side by side, load 2-3).
MASKED_UNITS = [
    "apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "e2scrub_reap.service",
    "fstrim.timer", "systemd-networkd-wait-online.service", "getty@tty1.service",
    "serial-getty@ttyS0.service", "systemd-update-utmp.service",
    "systemd-update-utmp-runlevel.service", "systemd-logind.service", "console-getty.service",
    "systemd-timesyncd.service", "man-db.timer", "dpkg-db-backup.timer",
    "systemd-udev-trigger.service", "systemd-udev-settle.service", "modprobe@loop.service",
    "modprobe@dm_mod.service", "modprobe@drm.service", "modprobe@fuse.service",
    "modprobe@configfs.service", "modprobe@efi_pstore.service", "systemd-binfmt.service",
    "proc-sys-fs-binfmt_misc.automount", "sys-kernel-debug.mount", "sys-kernel-tracing.mount",
]
# Generators the guest has no use for (no getty, GPT, encrypted, hibernated or SysV parts): each is a
# process at every boot.
MASKED_GENERATORS = [
    "systemd-cryptsetup-generator", "systemd-getty-generator", "systemd-gpt-auto-generator",
    "systemd-hibernate-resume-generator", "systemd-integritysetup-generator", "systemd-rc-local-generator",
    "systemd-system-update-generator", "systemd-sysv-generator", "systemd-veritysetup-generator",
]
INITRD_MODULES = ["virtio_pci", "virtio_blk", "ext4", "crc32c_generic"]
JOURNALD_CONF = "[Journal]\nStorage=volatile\n"

# Serial console; journald forwards to it so the host sees coldrun's log.  The kernel's own boot messages
# go there too (no "quiet"): a boot that hangs shows where, and a slow one is not taken for a silent one.
KERNEL_CMDLINE = ("root=/dev/vda rw console=ttyS0 net.ifnames=0 "
                  "systemd.show_status=0 mitigations=off tsc=reliable no_timer_check")


@dataclass(frozen=True)
class GuestImage:
    disk: Path      # raw ext4 root filesystem (read-only: copy it per run)
    kernel: Path
    initrd: Path
    rootfs: Path    # the tree root.ext4 was made from (read-only: copy it)
    cmdline: str = KERNEL_CMDLINE


def cache_key() -> str:
    h = hashlib.sha256()
    for part in (SUITE, MIRROR.rsplit("/", 1)[-1], " ".join(sorted(PACKAGES)),
                 VMTEST_UNIT, FSTAB, IMAGE_SIZE, CONSOLE_DROPIN, " ".join(MASKED_UNITS), " ".join(MASKED_GENERATORS),
                 " ".join(INITRD_MODULES), JOURNALD_CONF, " ".join(SSH_UNITS), "v6"):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def missing_tools() -> list[str]:
    needed = ["debootstrap", "mkfs.ext4", "debugfs", "qemu-system-x86_64", "qemu-img"]
    return [t for t in needed if shutil.which(t) is None]


def cached_image() -> GuestImage | None:
    d = CACHE_DIR / f"base-{cache_key()}"
    img = GuestImage(d / "root.ext4", d / "vmlinuz", d / "initrd.img", d / "rootfs")
    if (d / "complete").exists() and all(p.exists() for p in (img.disk, img.kernel, img.initrd, img.rootfs)):
        return img
    return None


def _run(argv: list[str], log) -> None:
    print("+", " ".join(argv), file=log, flush=True)
    subprocess.run(argv, check=True, stdout=log, stderr=subprocess.STDOUT)


def _configure_rootfs(rootfs: Path) -> None:
    (rootfs / "etc/hostname").write_text("coldrun-vm\n")
    (rootfs / "etc/hosts").write_text("127.0.0.1 localhost\n127.0.1.1 coldrun-vm\n")
    (rootfs / "etc/fstab").write_text(FSTAB)
    unit_dir = rootfs / "etc/systemd/system"
    (unit_dir / "coldrun-vmtest.service").write_text(VMTEST_UNIT)
    wants = unit_dir / "multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / "coldrun-vmtest.service"
    if not link.is_symlink():
        link.symlink_to("/etc/systemd/system/coldrun-vmtest.service")
    dropin = unit_dir / "coldrun@.service.d"
    dropin.mkdir(exist_ok=True)
    (dropin / "vmtest-console.conf").write_text(CONSOLE_DROPIN)
    for unit in SSH_UNITS:
        (wants / unit).unlink(missing_ok=True)
        (unit_dir / unit).unlink(missing_ok=True)   # the sshd.service alias
    for unit in MASKED_UNITS:
        p = unit_dir / unit
        if not p.exists() and not p.is_symlink():
            p.symlink_to("/dev/null")
    generators = rootfs / "etc/systemd/system-generators"
    generators.mkdir(parents=True, exist_ok=True)
    for name in MASKED_GENERATORS:
        if not (generators / name).is_symlink():
            (generators / name).symlink_to("/dev/null")
    default = unit_dir / "default.target"
    default.unlink(missing_ok=True)
    default.symlink_to("/lib/systemd/system/multi-user.target")
    (rootfs / "etc/systemd/journald.conf.d").mkdir(parents=True, exist_ok=True)
    (rootfs / "etc/systemd/journald.conf.d/vmtest.conf").write_text(JOURNALD_CONF)
    conf = rootfs / "etc/initramfs-tools/initramfs.conf"
    conf.write_text(conf.read_text().replace("MODULES=most", "MODULES=list"))
    (rootfs / "etc/initramfs-tools/modules").write_text("\n".join(INITRD_MODULES) + "\n")
    # Root without a password on the serial console, for debugging a failed run.
    shadow = rootfs / "etc/shadow"
    lines = shadow.read_text().splitlines()
    shadow.write_text("\n".join(
        ("root::" + l.split(":", 2)[2]) if l.startswith("root:") else l for l in lines) + "\n")
    # Keep the image small: downloaded .debs and docs are not needed.
    for sub in ("var/cache/apt/archives", "usr/share/doc", "usr/share/man", "usr/share/locale"):
        p = rootfs / sub
        if p.is_dir():
            for child in p.iterdir():
                if child.is_file() and not child.name.endswith(".lock"):
                    child.unlink()
                elif child.is_dir() and sub != "var/cache/apt/archives":
                    shutil.rmtree(child, ignore_errors=True)


def make_root_disk(rootfs: Path, disk: Path, log=sys.stderr) -> None:
    """The guest's root disk: an ext4 image of IMAGE_SIZE holding ``rootfs``."""
    _run(["truncate", "-s", IMAGE_SIZE, str(disk)], log)
    _run(["mkfs.ext4", "-q", "-F", "-L", "coldrun-root", "-d", str(rootfs), str(disk)], log)


def build_image(log=sys.stderr) -> GuestImage:
    """Return the cached image, building it first if needed (needs root, ~5-10 min)."""
    found = cached_image()
    if found:
        return found
    if os.geteuid() != 0:
        raise RuntimeError("building the VM image needs root (debootstrap)")
    missing = missing_tools()
    if missing:
        raise RuntimeError(f"missing tools: {', '.join(missing)}")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    final = CACHE_DIR / f"base-{cache_key()}"
    work = Path(tempfile.mkdtemp(prefix="build-", dir=CACHE_DIR))
    try:
        rootfs = work / "rootfs"
        _run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
              SUITE, str(rootfs), MIRROR], log)
        _configure_rootfs(rootfs)
        _run(["chroot", str(rootfs), "update-initramfs", "-u", "-k", "all"], log)
        kernels = sorted((rootfs / "boot").glob("vmlinuz-*"))
        initrds = sorted((rootfs / "boot").glob("initrd.img-*"))
        if not kernels or not initrds:
            raise RuntimeError("debootstrap produced no kernel/initrd in /boot")
        shutil.copy2(kernels[-1], work / "vmlinuz")
        shutil.copy2(initrds[-1], work / "initrd.img")
        make_root_disk(rootfs, work / "root.ext4", log)
        (work / "complete").write_text(cache_key() + "\n")
        if final.exists():
            shutil.rmtree(final)
        work.rename(final)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    img = cached_image()
    assert img is not None
    return img


if __name__ == "__main__":
    image = build_image()
    print(image)
