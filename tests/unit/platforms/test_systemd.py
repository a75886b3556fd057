"""Issue 23, points 10 and 11: systemd's timers are stopped for the experiment and undone after;
a unit that ran during an execution flags it; the housekeeping slices keep cpuset on at the root."""

from __future__ import annotations

from typing import Sequence

from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.linux_systemd import active_timers, units_started
from supervisor.system import CommandResult

from platform_helpers import FakeMachineCommands, make_linux

# Debian 12's timers after a default install (systemctl list-units --type=timer --state=active)
DEBIAN_TIMERS = ["apt-daily-upgrade.timer", "apt-daily.timer", "dpkg-db-backup.timer", "e2scrub_all.timer",
                 "fstrim.timer", "logrotate.timer", "man-db.timer", "systemd-tmpfiles-clean.timer"]


class SystemdCommands(FakeMachineCommands):
    """systemctl as it answers: list-units, mask/unmask/start, show (AllowedCPUs: FakeMachineCommands')."""

    def __init__(self, timers=DEBIAN_TIMERS, admin_timers=(), show_units=""):
        super().__init__()
        self.active = set(timers)
        self.masked: dict[str, str] = {}          # timer -> "persistent" / "runtime"
        self.admin = set(admin_timers)            # unit files in /etc: cannot be masked there
        self.show_units = show_units

    def run(self, argv: Sequence[str], *, input=None, timeout=None) -> CommandResult:
        a = tuple(str(x) for x in argv)
        if a[0] != "systemctl" or a[1] == "set-property" or "--property=AllowedCPUs" in a:
            return super().run(argv, input=input, timeout=timeout)
        self.calls.append(a)
        ok = lambda out="": CommandResult(a, 0, out, "")  # noqa: E731
        verb = a[1]
        if verb == "list-units":
            lines = [f"{t} loaded active waiting {t[:-6]}" for t in sorted(self.active)]
            return ok("".join(ln + "\n" for ln in lines))
        if verb == "mask":
            timer = a[-1]
            if "--runtime" not in a and timer in self.admin:
                return CommandResult(a, 1, "", f"Failed to mask unit: File /etc/systemd/system/{timer} already exists.")
            self.masked[timer] = "runtime" if "--runtime" in a else "persistent"
            self.active.discard(timer)
            return ok()
        if verb == "unmask":
            self.masked.pop(a[-1], None)
            return ok()
        if verb == "start":
            if a[-1] in self.masked:
                return CommandResult(a, 1, "", f"Failed to start {a[-1]}: Unit {a[-1]} is masked.")
            self.active.add(a[-1])
            return ok()
        if verb == "show":
            return ok(self.show_units)
        return ok()


POLICY = dict(tickless="ignore", temperatures="ignore", kernel_log="ignore", intel_pstate="allow",
              benchmark_user=False, throttle_counters="ignore", amperf="ignore", clocksource="ignore")


def test_active_timers_are_masked_recorded_and_restored(machine, tmp_path):
    cmds = SystemdCommands(admin_timers={"backup.timer"}, timers=DEBIAN_TIMERS + ["backup.timer"])
    p = make_linux(machine("intel-desktop"), tmp_path / "s", PlatformPolicy(**POLICY), commands=cmds)
    r = next(r for r in p.inspect() if r.control == "timers")
    assert r.action == "would change" and r.found.split() == sorted(DEBIAN_TIMERS + ["backup.timer"])
    applied = next(r for r in p.apply_and_verify() if r.control == "timers")
    assert applied.found == "none active" and applied.action.startswith("changed from apt-daily-upgrade.timer")
    assert cmds.masked["apt-daily.timer"] == "persistent"    # Persistent=true timers must not fire at boot
    assert cmds.masked["backup.timer"] == "runtime"          # the admin's own unit file: masked until reboot
    p.restore()
    assert cmds.active == set(DEBIAN_TIMERS + ["backup.timer"]) and not cmds.masked


def test_timers_report_only_records_them(machine, tmp_path):
    cmds = SystemdCommands()
    p = make_linux(machine("intel-desktop"), tmp_path / "s", PlatformPolicy(**{**POLICY, "timers": "report"}),
                   commands=cmds)
    r = next(r for r in p.apply_and_verify() if r.control == "timers")
    assert r.action == "report" and "fstrim.timer" in r.found and cmds.active == set(DEBIAN_TIMERS)


def test_a_failed_unit_marker_is_not_a_timer_name():
    class Failed(SystemdCommands):
        def run(self, argv, **kw):
            if list(argv)[:2] == ["systemctl", "list-units"]:
                return CommandResult(tuple(argv), 0, "● fstrim.timer loaded failed failed Discard\n", "")
            return super().run(argv, **kw)
    assert active_timers(Failed()) == ["fstrim.timer"]


# `systemctl show '*.service' '*.timer' -p ...`: one block per unit, Service properties before Unit's.
SHOW = """ExecMainStartTimestampMonotonic=5000000
Id=apt-daily.service

ExecMainStartTimestampMonotonic=1000
Id=ssh.service

LastTriggerUSecMonotonic=5000001
Id=apt-daily.timer

ExecMainStartTimestampMonotonic=5000002
Id=coldrun@-var-lib-coldrun-exp.service

ExecMainStartTimestampMonotonic=0
Id=cron.service
"""


def test_units_that_ran_during_an_execution_are_named():
    assert units_started(SystemdCommands(show_units=SHOW), 4_000_000, 6_000_000) == ["apt-daily.service",
                                                                                      "apt-daily.timer"]
    assert units_started(SystemdCommands(show_units=SHOW), 6_000_000, 7_000_000) == []


def test_post_checks_flag_a_unit_that_ran(machine, tmp_path):
    from doubles import FakeClock
    clock = FakeClock(now=4.0)
    cmds = SystemdCommands(show_units=SHOW)
    p = make_linux(machine("intel-desktop"), tmp_path / "s", PlatformPolicy(**POLICY), commands=cmds, clock=clock)
    before = p.snapshot()
    clock.sleep(2.0)
    res = p.post_checks(before, {})
    assert res.flags == ["systemd_units"] and res.details["systemd_units"] == ["apt-daily.service", "apt-daily.timer"]
    from supervisor.experiment.model import Rerun
    assert res.rerun and "systemd_units" not in Rerun().on_flags    # re-run only when on_flags names it


def test_housekeeping_slices_hold_systemd_to_the_other_cpus_and_are_reset(machine, tmp_path):
    cmds = SystemdCommands()
    p = make_linux(machine("zen4-acpi"), tmp_path / "s", PlatformPolicy(**{**POLICY, "pinning": True}),
                   commands=cmds)
    r = next(r for r in p.inspect() if r.control == "housekeeping_slices")
    assert r.wanted == "system.slice=0-1 user.slice=0-1" and r.found == "system.slice=(all) user.slice=(all)"
    p.apply_and_verify()
    assert cmds.allowed == {"system.slice": "0-1", "user.slice": "0-1"}   # cpu1 shares cpu0's core
    p.restore()
    assert cmds.allowed == {"system.slice": "", "user.slice": ""}


def test_timers_unknown_are_not_passed_but_do_not_stop(machine, tmp_path):
    root = machine("intel-desktop")
    (root / "run/systemd/system/.keep").unlink()
    (root / "run/systemd/system").rmdir()                   # not booted with systemd
    r = next(r for r in make_linux(root, tmp_path / "s", PlatformPolicy(**POLICY)).inspect() if r.control == "timers")
    assert r.action == "unavailable" and not r.ok and not r.fatal and "stop cron, anacron" in r.fix
