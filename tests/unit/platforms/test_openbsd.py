"""OpenBSD platform against command outputs mirroring OpenBSD 7.5/amd64 (see the fixture's README)."""

import sys


from supervisor.platforms.factory import make_platform
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import CommandResult, SystemRoot
from doubles import FakeClock

from platform_helpers import ROOTS, MemoryLog

OUT = ROOTS / "openbsd-7.5" / "commands"


class FakeOpenBSD:
    def __init__(self, apmd_running=False, malloc_conf=""):
        self.perfpolicy, self.setperf = "auto", "40"
        self.apmd = apmd_running
        self.malloc_conf = malloc_conf
        self.dmesg = (OUT / "dmesg.txt").read_text()
        self.users: set[str] = set()
        self.calls: list[tuple[str, ...]] = []

    def run(self, argv, *, input=None, timeout=None):
        a = tuple(argv)
        self.calls.append(a)
        ok = lambda out="": CommandResult(a, 0, out, "")  # noqa: E731
        if a == ("apm",):
            return ok((OUT / ("apm_high.txt" if self.perfpolicy == "high" else "apm_auto.txt")).read_text())
        if a == ("apm", "-H"):
            self.perfpolicy, self.setperf = "high", "100"
            return ok()
        if a == ("apm", "-A"):
            self.perfpolicy, self.setperf = "auto", "40"
            return ok()
        if a == ("rcctl", "check", "apmd"):
            return ok("apmd(ok)\n") if self.apmd else CommandResult(a, 1, "apmd(failed)\n", "")
        if a[:2] == ("rcctl", "-f") and a[2:] == ("start", "apmd"):
            self.apmd = True
            return ok()
        if a == ("rcctl", "stop", "apmd"):
            self.apmd = False
            return ok()
        if a[:2] == ("sysctl", "-n"):
            values = {"hw.setperf": self.setperf, "hw.perfpolicy": self.perfpolicy,
                      "vm.malloc_conf": self.malloc_conf, "hw.vendor": "ASUSTeK COMPUTER INC.",
                      "hw.product": "PRIME Z370-A", "kern.version": "OpenBSD 7.5 (GENERIC.MP) #82",
                      "hw.model": "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "hw.ncpuonline": "12"}
            return ok(values[a[2]] + "\n")
        if a == ("sysctl", "hw.sensors"):
            return ok((OUT / "sysctl_hw_sensors.txt").read_text())
        if a == ("dmesg",):
            return ok(self.dmesg)
        if a == ("uname", "-a"):
            return ok((OUT / "uname_a.txt").read_text())
        if a == ("pkg_info", "-q"):
            return ok("pypy3-7.3.15\nluajit-2.1.0\n")
        if a[0] == "id":
            return ok("1001\n") if a[-1] in self.users else CommandResult(a, 1, "", "id: no such user")
        if a[0] == "useradd":
            self.users.add(a[-1])
            return ok()
        if a[0] == "userdel":
            self.users.discard(a[-1])
            return ok()
        if a in (("reboot",), ("sync",)):
            return ok()
        return CommandResult(a, 127, "", "not found")


def openbsd(tmp_path, cmds, policy=None, root=None):
    return make_platform("openbsd", policy or PlatformPolicy(), tmp_path / "state",
                         root=SystemRoot(root or ROOTS / "openbsd-7.5"), commands=cmds, clock=FakeClock(),
                         log=MemoryLog())


def test_sensors_from_sysctl_hw_sensors(tmp_path):
    temps = openbsd(tmp_path, FakeOpenBSD()).read_temperatures()
    assert temps == {"cpu0.temp0": 38.0, "acpitz0.temp0": 27.8, "it0.temp0": 34.0, "it0.temp1": 35.0,
                     "it0.temp2": -128.0}


def test_apm_high_applied_verified_and_restored(tmp_path):
    cmds = FakeOpenBSD(apmd_running=False)
    p = openbsd(tmp_path, cmds)
    reports = {r.control: r.as_dict() for r in p.apply_and_verify()}
    assert reports["apmd"]["action"] == "changed from stopped"
    assert reports["apm_performance"]["found"] == "manual, hw.setperf=100"
    assert ("apm", "-H") in cmds.calls
    p.restore()
    assert (cmds.perfpolicy, cmds.setperf, cmds.apmd) == ("auto", "40", False)
    assert cmds.calls[-2:] == [("apm", "-A"), ("rcctl", "stop", "apmd")]  # newest change undone first


def test_malloc_conf_override_is_a_problem(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD(malloc_conf="S"))
    r = next(r for r in p.inspect() if r.control == "malloc_conf")
    assert r.fatal and r.found == "vm.malloc_conf=S" and "/etc/malloc.conf" in r.fix
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/malloc.conf").symlink_to("J")  # OpenBSD's malloc.conf is a symlink naming the options
    p2 = openbsd(tmp_path, FakeOpenBSD(), root=root)
    assert next(r for r in p2.inspect() if r.control == "malloc_conf").found == "/etc/malloc.conf exists"


def test_launch_prefix_keeps_fd_and_sets_malloc_options(tmp_path):
    cmds = FakeOpenBSD()
    p = openbsd(tmp_path, cmds)
    prefix = p.launch_prefix("k").argv()
    assert prefix[:3] == ["nice", "-n", "-20"]
    assert prefix[3:7] == [sys.executable, "-m", "supervisor.platforms.runas", "coldrunbench"]
    assert prefix[-2:] == ["env", "MALLOC_OPTIONS=cfgrux"]
    assert any(c[0] == "useradd" and "-m" in c for c in cmds.calls)
    p.end_launch("k")
    assert ("userdel", "-r", "coldrunbench") in cmds.calls


def test_dmesg_wx_violation_is_allowed_other_lines_flagged(tmp_path):
    cmds = FakeOpenBSD()
    p = openbsd(tmp_path, cmds)
    before = p.snapshot()
    cmds.dmesg += "pypy3(41234): mprotect W^X violation\n"
    assert "kernel_log" not in p.post_checks(before, {}).flags
    cmds.dmesg += "uhub0: device problem, disabling port 2\n"
    res = p.post_checks(before, {})
    assert res.flags == ["kernel_log"] and res.details["kernel_log"] == ["uhub0: device problem, disabling port 2"]


def test_audit_and_bare_metal_detection(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD())
    a = p.audit()
    assert a["uname"] == "OpenBSD bench-obsd.example.org 7.5 GENERIC.MP#82 amd64"
    assert a["virtual"] is False and a["packages_count"] == 2
    cmds = FakeOpenBSD()
    cmds.dmesg += "virtio0 at pci0 dev 4 function 0 \"Qumranet Virtio Network\" rev 0x00\n"
    assert openbsd(tmp_path, cmds).is_virtual() == (True, "dmesg: virtio0 at pci0 dev 4 function 0 "
                                                          "\"Qumranet Virtio Network\" rev 0x00")


def test_reboot_runs_reboot(tmp_path):
    cmds = FakeOpenBSD()
    openbsd(tmp_path, cmds).reboot()
    assert cmds.calls[-1] == ("reboot",)


def test_baselines_and_wait_use_sysctl_sensors(tmp_path):
    from supervisor.errors import PlatformError
    cmds = FakeOpenBSD()
    p = openbsd(tmp_path, cmds)
    base = p.take_baselines()
    assert base["cpu0.temp0"] == 38.0
    p.waits.temperature_deadline = 5
    p.wait_until_ready(base)  # unchanged readings: ready at once
    hot = (OUT / "sysctl_hw_sensors.txt").read_text().replace("cpu0.temp0=38.00", "cpu0.temp0=45.50")
    real_run = cmds.run
    cmds.run = lambda argv, **kw: (CommandResult(tuple(argv), 0, hot, "") if tuple(argv) == ("sysctl", "hw.sensors")
                                   else real_run(argv, **kw))
    try:
        p.wait_until_ready(base)
    except PlatformError as e:
        assert "cpu0.temp0 45.5 °C is 7.5 °C above baseline 38.0" in str(e)
    else:
        raise AssertionError("a sensor 7.5 °C above its baseline must stop the wait at the deadline")


def test_counters_required_fails_on_openbsd_with_the_fix(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD(), policy=PlatformPolicy(counters="require"))
    r = next(r for r in p.inspect() if r.control == "counters")
    assert r.fatal and 'counters = "if_available"' in r.fix
    default = openbsd(tmp_path, FakeOpenBSD())
    assert all(r.control != "counters" for r in default.inspect())
