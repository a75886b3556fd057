"""A qemu guest driven from the host: serial console to a file, QMP for power cuts.

The guest boots the image's kernel with -kernel/-initrd.  A reboot inside the
guest restarts it in the same qemu process (no -no-reboot), a power-off ends
the process.  ``power_cut()`` is QMP ``system_reset``: the guest loses
everything not yet on its virtual disk, with no shutdown.
"""

from __future__ import annotations

import json
import os
import re
import socket
import shutil
import subprocess
import time
import warnings
from pathlib import Path

from process_groups import dies_with_us, kill_group, register
from vm_image import GuestImage


_accel_cache: dict[str, str] = {}


def choose_accel(image: GuestImage, workdir: Path) -> str:
    """"kvm" when a guest kernel really starts under KVM here, else "tcg".

    /dev/kvm existing is not enough: nested KVM can hang the guest before
    its first console line.  So boot the kernel once with KVM and wait for
    its banner (under a second when KVM works); the answer is kept for the
    session.  COLDRUN_VM_ACCEL=kvm|tcg forces a choice.
    """
    forced = os.environ.get("COLDRUN_VM_ACCEL")
    if forced in ("kvm", "tcg"):
        return forced
    if "accel" in _accel_cache:
        return _accel_cache["accel"]
    accel = "tcg"
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
        os.close(fd)
        kvm_device = True
    except OSError:
        kvm_device = False
    if kvm_device:
        log = workdir / "kvm-probe.log"
        probe = subprocess.Popen(dies_with_us(
            ["qemu-system-x86_64", "-nodefaults", "-no-user-config", "-display", "none",
             "-machine", "q35,accel=kvm", "-cpu", "host", "-m", "256",
             "-kernel", str(image.kernel), "-append", "console=ttyS0 panic=-1",
             "-serial", f"file:{log}", "-no-reboot"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        register(probe.pid)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and probe.poll() is None:
                if log.exists() and "Linux version" in log.read_text(errors="replace"):
                    accel = "kvm"
                    break
                time.sleep(0.2)
        finally:
            kill_group(probe.pid)
            probe.wait()
    _accel_cache["accel"] = accel
    return accel


class Guest:
    def __init__(self, image: GuestImage, disk: Path, payload: Path, workdir: Path,
                 memory_mb: int = 1024, cpus: int = 2, ssh_port: int | None = None):
        self.image, self.disk, self.payload = image, disk, payload
        # ssh_port: the guest's port 22 forwarded from 127.0.0.1 (no other network: restrict=on).
        self.ssh_port = ssh_port
        self.workdir = workdir
        self.serial_path = workdir / "serial.log"
        self.qmp_path = workdir / "qmp.sock"
        self.memory_mb, self.cpus = memory_mb, cpus
        self.proc: subprocess.Popen | None = None
        self.accel = choose_accel(image, workdir)

    def argv(self) -> list[str]:
        return [
            "qemu-system-x86_64", "-nodefaults", "-no-user-config", "-display", "none",
            "-machine", f"q35,accel={self.accel}", "-cpu", "host" if self.accel == "kvm" else "max",
            "-m", str(self.memory_mb), "-smp", str(self.cpus),
            "-kernel", str(self.image.kernel), "-initrd", str(self.image.initrd),
            "-append", self.image.cmdline,
            "-drive", f"file={self.disk},format=raw,if=virtio,cache=writeback",
            "-drive", f"file={self.payload},format=raw,if=virtio,readonly=on",
            "-serial", f"file:{self.serial_path}",
            "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
            "-nic", "none" if self.ssh_port is None else
            f"user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:{self.ssh_port}-:22",
        ]

    def start(self) -> None:
        self.serial_path.write_text("")
        # Its own process group, killed by kill(); dies_with_us and the registry (tests/process_groups.py)
        # kill it when this test process is killed before kill() runs.
        with open(self.workdir / "qemu.out", "w") as out:
            self.proc = subprocess.Popen(dies_with_us(self.argv()), stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        register(self.proc.pid)

    def wait_booted(self, timeout: float = 900, quiet: float = 300) -> None:
        """Wait for the first boot's VMTEST-BOOT line (boot.sh's first act, before coldrun runs anything);
        a first boot that hangs is started once more, with a warning.  A TCG guest on a loaded CI machine
        once printed nothing at all in 600 s: that hang is the emulator's, not coldrun's, so one retry does
        not hide anything the test is about; the hung console is kept as serial-hung.log."""
        try:
            self.wait_for(r"VMTEST-BOOT", timeout=timeout, quiet=quiet)
            return
        except GuestError as hung:
            first = hung
        kept = self.workdir / "serial-hung.log"
        shutil.copyfile(self.serial_path, kept)
        self.kill()
        warnings.warn(f"the guest's first boot hung; starting it again (console kept in {kept}): "
                      f"{str(first).splitlines()[0]}", GuestBootRetried, stacklevel=2)
        self.start()
        self.wait_for(r"VMTEST-BOOT", timeout=timeout, quiet=quiet)

    # --- serial console -------------------------------------------------------

    def serial(self) -> str:
        return self.serial_path.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float, after: int = 0, quiet: float | None = None) -> re.Match:
        """Wait until ``pattern`` appears in the serial log at or after offset ``after``: at most ``timeout``
        seconds, and with ``quiet``, at most that long without a new console line (a hung guest fails
        early; a starved one that still makes progress gets the whole ``timeout``)."""
        rx = re.compile(pattern, re.MULTILINE)
        start = time.monotonic()
        deadline = start + timeout
        seen, last_change = -1, start
        while True:
            text = self.serial()
            m = rx.search(text, after)
            if m:
                return m
            now = time.monotonic()
            if len(text) != seen:
                seen, last_change = len(text), now
            if self.proc is not None and self.proc.poll() is not None:
                raise GuestError(f"guest exited (rc {self.proc.returncode}) before {pattern!r} "
                                 f"appeared; qemu said: {self.qemu_output()[-500:]}", self)
            if now > deadline:
                raise GuestError(f"{pattern!r} did not appear within {timeout:.0f}s", self)
            if quiet is not None and now - last_change > quiet:
                raise GuestError(f"{pattern!r} did not appear, and the console was silent for "
                                 f"{now - last_change:.0f}s (after {now - start:.0f}s)", self)
            time.sleep(0.2)

    def qemu_output(self) -> str:
        p = self.workdir / "qemu.out"
        return p.read_text(errors="replace") if p.exists() else ""

    def wait_exit(self, timeout: float) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise GuestError(f"guest did not power off within {timeout:.0f}s", self)

    # --- QMP ------------------------------------------------------------------

    def qmp(self, command: str) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(self.qmp_path))
            f = s.makefile("rw")
            json.loads(f.readline())                      # greeting
            for cmd in ("qmp_capabilities", command):
                f.write(json.dumps({"execute": cmd}) + "\n")
                f.flush()
                while True:
                    reply = json.loads(f.readline())
                    if "return" in reply or "error" in reply:
                        break                             # skip async events
            return reply

    def power_cut(self) -> None:
        reply = self.qmp("system_reset")
        if "error" in reply:
            raise GuestError(f"system_reset failed: {reply['error']}", self)

    def kill(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                kill_group(self.proc.pid)
                self.proc.wait()
            else:
                kill_group(self.proc.pid)   # exited: only its registry entry (and any stray child) goes


class GuestBootRetried(UserWarning):
    """A guest's first boot hung before boot.sh ran and was started again."""


class GuestError(AssertionError):
    def __init__(self, message: str, guest: Guest):
        tail = "\n".join(guest.serial().splitlines()[-60:])
        super().__init__(f"{message}\n--- last serial console lines ---\n{tail}")


def make_ext4(directory: Path, image: Path, size_mb: int, label: str) -> None:
    """An ext4 filesystem image holding ``directory`` (no mount, no loop device)."""
    subprocess.run(["truncate", "-s", f"{size_mb}M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", label, "-d", str(directory), str(image)],
                   check=True, capture_output=True)


def copy_disk(src: Path, dst: Path) -> None:
    subprocess.run(["cp", "--sparse=always", str(src), str(dst)], check=True)


def read_guest_tree(disk: Path, guest_path: str, dest: Path) -> Path:
    """Copy a directory out of the guest's (powered-off) ext4 root with debugfs."""
    dest.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["debugfs", "-R", f"rdump {guest_path} {dest}", str(disk)],
                       capture_output=True, text=True)
    out = dest / Path(guest_path).name
    if not out.exists():
        raise AssertionError(f"debugfs could not read {guest_path}: {r.stderr.strip()}")
    return out


def guest_path_exists(disk: Path, guest_path: str) -> bool:
    r = subprocess.run(["debugfs", "-R", f"stat {guest_path}", str(disk)],
                       capture_output=True, text=True)
    if "Inode:" in r.stdout:
        return True
    if "File not found" in r.stderr:
        return False
    raise AssertionError(f"debugfs could not read {disk}: {r.stderr.strip()}")
