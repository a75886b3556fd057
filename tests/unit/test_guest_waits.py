"""tests/vm/vm_qemu.Guest.wait_for: a starved guest that still prints gets the whole timeout; one whose console
stays silent for ``quiet`` seconds fails early (CI's power-cut wait once ran out at a fixed 600 s while the
guest was only slow)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vm"))

from vm_qemu import Guest, GuestError  # noqa: E402


def console(tmp_path: Path) -> Guest:
    """A Guest with only its serial log: no qemu (wait_for reads the file; no process to watch)."""
    g = Guest.__new__(Guest)
    g.serial_path, g.workdir, g.proc = tmp_path / "serial.log", tmp_path, None
    g.serial_path.write_text("VMTEST-BOOT 1\n")
    return g


def print_lines(g: Guest, lines: list[str], every: float) -> threading.Thread:
    def run():
        for line in lines:
            time.sleep(every)
            with open(g.serial_path, "a") as f:
                f.write(line + "\n")
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_a_slow_guest_that_keeps_printing_is_waited_for(tmp_path):
    g = console(tmp_path)
    # 12 lines 0.3 s apart, the pattern last: longer than ``quiet``, never silent that long
    t = print_lines(g, [f"boot step {i}" for i in range(11)] + ["VMTEST-FINISHED"], every=0.3)
    m = g.wait_for("VMTEST-FINISHED", timeout=30, quiet=1.0)
    assert m.group(0) == "VMTEST-FINISHED"
    t.join()


def test_a_silent_guest_fails_after_quiet_seconds_not_the_timeout(tmp_path):
    g = console(tmp_path)
    t0 = time.monotonic()
    with pytest.raises(GuestError, match=r"console was silent for 1s"):
        g.wait_for("VMTEST-FINISHED", timeout=30, quiet=1.0)
    assert time.monotonic() - t0 < 10


def test_the_timeout_still_bounds_a_guest_that_prints_forever(tmp_path):
    g = console(tmp_path)
    print_lines(g, ["again"] * 40, every=0.1)
    with pytest.raises(GuestError, match=r"did not appear within 1s"):
        g.wait_for("VMTEST-FINISHED", timeout=1.0, quiet=0.5)


class FirstBootHangs(Guest):
    """A Guest whose "qemu" is a shell: the first prints nothing (a boot hung before boot.sh), the second
    prints boot.sh's first line."""

    def __init__(self, tmp_path: Path):
        self.serial_path, self.workdir, self.proc = tmp_path / "serial.log", tmp_path, None
        self.starts = 0

    def argv(self) -> list[str]:
        self.starts += 1
        line = "" if self.starts == 1 else f"echo 'VMTEST-BOOT 2' >> {self.serial_path}; "
        return ["sh", "-c", f"echo '[    0.000000] Linux version' >> {self.serial_path}; {line}exec sleep 60"]


def test_a_first_boot_that_hangs_is_started_once_more_with_a_warning(tmp_path):
    g = FirstBootHangs(tmp_path)
    g.start()
    try:
        with pytest.warns(UserWarning, match=r"first boot hung; starting it again .*silent for 1s"):
            g.wait_booted(timeout=30, quiet=1.0)
        assert g.starts == 2 and "VMTEST-BOOT 2" in g.serial()
        assert (tmp_path / "serial-hung.log").read_text() == "[    0.000000] Linux version\n"
    finally:
        g.kill()


def test_a_second_hang_fails(tmp_path):
    g = FirstBootHangs(tmp_path)
    g.argv = lambda: ["sleep", "60"]
    g.start()
    try:
        with pytest.warns(UserWarning), pytest.raises(GuestError, match=r"console was silent"):
            g.wait_booted(timeout=30, quiet=1.0)
    finally:
        g.kill()
