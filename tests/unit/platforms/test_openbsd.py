"""OpenBSD platform against command outputs mirroring OpenBSD 7.5/amd64 (see the fixture's README)."""

import re
import shutil
import sys

import pytest


from supervisor.platforms.factory import make_platform
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.errors import PlatformError
from supervisor.system import CommandResult, SystemRoot
from doubles import FakeClock

from platform_helpers import ROOTS, MemoryLog

OUT = ROOTS / "openbsd-7.5" / "commands"


class FakeOpenBSD:
    """Command replies of an OpenBSD 7.5/amd64 machine, with the kernel's rules for the sysctls coldrun writes.

    From sysctl(2) (hw.perfpolicy, hw.setperf, hw.smt) and sysctl(8): hw.setperf is
    writable only while hw.perfpolicy is "manual" (otherwise the write fails with
    "Operation not permitted"); "high" sets the level to 100, "auto" lets the kernel
    move it; hw.smt is 0 or 1 and absent where the architecture has no SMT switch.
    A write prints "name: old -> new" as sysctl(8) does.  pgrep(1) -f: extended regex against the
    whole argument list of each process in ``processes``, exit 0 matched, 1 none.
    """

    def __init__(self, malloc_conf="", perfpolicy="auto", setperf="40", smt="1"):
        self.perfpolicy, self.setperf = perfpolicy, setperf
        self.smt = smt                      # None: no hw.smt on this architecture
        self.malloc_conf = malloc_conf
        self.dmesg = (OUT / "dmesg.txt").read_text()
        self.users: set[str] = set()
        self.ipcs = (OUT / "ipcs.txt").read_text()
        self.calls: list[tuple[str, ...]] = []
        self.processes: list[str] = ["/sbin/init", "/usr/sbin/cron", "/usr/local/bin/python3 /v/bin/coldrun resume /s"]
        self.boot: list[list[str]] = []     # extra processes at each successive pgrep round (then none)
        self._rounds: dict[str, int] = {}

    def _sysctl_write(self, a, name, value):
        ok = lambda out="": CommandResult(a, 0, out, "")  # noqa: E731
        denied = CommandResult(a, 1, "", f"sysctl: {name}: Operation not permitted\n")
        if name == "hw.perfpolicy" and value in ("auto", "high", "manual"):
            old, self.perfpolicy = self.perfpolicy, value
            if value == "high":
                self.setperf = "100"
            return ok(f"hw.perfpolicy: {old} -> {value}\n")
        if name == "hw.setperf":
            if self.perfpolicy != "manual":
                return denied
            old, self.setperf = self.setperf, value
            return ok(f"hw.setperf: {old} -> {value}\n")
        if name == "hw.smt" and self.smt is not None and value in ("0", "1"):
            old, self.smt = self.smt, value
            return ok(f"hw.smt: {old} -> {value}\n")
        return CommandResult(a, 1, "", f"sysctl: {name}: Invalid argument\n")

    def _pgrep(self, a, pattern):
        seen = self._rounds.setdefault(pattern, 0)
        self._rounds[pattern] += 1
        extra = self.boot[seen] if seen < len(self.boot) else []
        matched = [p for p in self.processes + extra if re.search(pattern, p)]
        return CommandResult(a, 0 if matched else 1, "".join(f"{100 + i}\n" for i, _ in enumerate(matched)), "")

    def run(self, argv, *, input=None, timeout=None):
        a = tuple(argv)
        self.calls.append(a)
        ok = lambda out="": CommandResult(a, 0, out, "")  # noqa: E731
        if a[:2] == ("pgrep", "-f"):
            return self._pgrep(a, a[2])
        if a[:2] == ("sysctl", "-n"):
            values = {"hw.setperf": self.setperf, "hw.perfpolicy": self.perfpolicy, "hw.smt": self.smt,
                      "vm.malloc_conf": self.malloc_conf, "hw.vendor": "ASUSTeK COMPUTER INC.",
                      "hw.product": "PRIME Z370-A", "kern.version": "OpenBSD 7.5 (GENERIC.MP) #82",
                      "hw.model": "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "hw.ncpuonline": "12"}
            if values.get(a[2]) is None:
                return CommandResult(a, 1, "", f"sysctl: top level name {a[2]} in {a[2]} is invalid\n")
            return ok(values[a[2]] + "\n")
        if a[0] == "sysctl" and len(a) == 2 and "=" in a[1]:
            return self._sysctl_write(a, *a[1].split("=", 1))
        if a == ("sysctl", "hw.sensors"):
            return ok((OUT / "sysctl_hw_sensors.txt").read_text())
        if a == ("dmesg",):
            return ok(self.dmesg)
        if a == ("uname", "-a"):
            return ok((OUT / "uname_a.txt").read_text())
        if a == ("ipcs",):
            return ok(self.ipcs)
        if a[0] == "ipcrm":
            self.ipcs = "".join(l for l in self.ipcs.splitlines(True) if l.split()[:2] != [a[1][1:], a[2]])
            return ok()
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
    """The platform on a copy of the OpenBSD tree (the undo log goes under its /var/lib/coldrun)."""
    if root is None:
        root = tmp_path / "openbsd-root"
        if not root.exists():
            shutil.copytree(ROOTS / "openbsd-7.5", root, symlinks=True)
    return make_platform("openbsd", policy or PlatformPolicy(), tmp_path / "state",
                         root=SystemRoot(root), commands=cmds, clock=FakeClock(), log=MemoryLog())


def test_sensors_from_sysctl_hw_sensors(tmp_path):
    temps = openbsd(tmp_path, FakeOpenBSD()).read_temperatures()
    assert temps == {"cpu0.temp0": 38.0, "acpitz0.temp0": 27.8, "it0.temp0": 34.0, "it0.temp1": 35.0,
                     "it0.temp2": -128.0}


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


def test_the_benchmark_users_ipc_objects_go_before_its_account(tmp_path):
    """Issue 26 item 7 on OpenBSD (no /proc/sysvipc): the objects ipcs lists as the user's (by name, or by uid,
    1001 in the fake's id) are removed with ipcrm before userdel; the other accounts' stay."""
    cmds = FakeOpenBSD()
    p = openbsd(tmp_path, cmds)
    p.launch_prefix("k")
    p.end_launch("k")
    ipcrm = [c for c in cmds.calls if c[0] == "ipcrm"]
    assert ipcrm == [("ipcrm", "-q", "65536"), ("ipcrm", "-m", "131073"), ("ipcrm", "-m", "196610"),
                     ("ipcrm", "-s", "262145")]
    assert cmds.calls.index(ipcrm[-1]) < cmds.calls.index(("userdel", "-r", "coldrunbench"))
    left = [l.split()[1] for l in cmds.ipcs.splitlines() if l[:2] in ("q ", "m ", "s ")]
    assert left == ["65537", "131072", "262144"]


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
    (tmp_path / "state").mkdir()
    p = openbsd(tmp_path, cmds)
    base = p.take_baselines()
    assert base["cpu0.temp0"] == 38.0
    p.waits.temperature_deadline = 5
    p.wait_until_ready(base)  # unchanged readings: ready at once (the first boot takes the baselines)
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


# --- hw.perfpolicy / hw.setperf (sysctl(2); apm(8) -H asks apmd for "high") ---------------

def reports_of(p) -> dict[str, dict]:
    return {r.control: r.as_dict() for r in p.apply_and_verify()}


def test_perfpolicy_high_from_auto_applied_verified_and_restored(tmp_path):
    cmds = FakeOpenBSD(perfpolicy="auto", setperf="40")
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(turbo="ignore"))
    r = reports_of(p)["apm_performance"]
    assert (r["found"], r["action"]) == ("hw.perfpolicy=high, hw.setperf=100",
                                         "changed from hw.perfpolicy=auto, hw.setperf=40")
    # No apm(8), no apmd: rc starts its own apmd after coldrun (a second one would fail or reset the policy).
    assert not any(c[0] in ("apm", "rcctl") for c in cmds.calls)   # the fake answers neither (127)
    p.restore()
    assert p.restore_failures == [] and cmds.perfpolicy == "auto"
    assert cmds.calls[-1] == ("sysctl", "hw.perfpolicy=auto")


def test_manual_policy_is_restored_policy_first_then_its_level(tmp_path):
    cmds = FakeOpenBSD(perfpolicy="manual", setperf="40")
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(turbo="ignore"))
    assert reports_of(p)["apm_performance"]["found"] == "hw.perfpolicy=high, hw.setperf=100"
    p.restore()
    assert p.restore_failures == [] and (cmds.perfpolicy, cmds.setperf) == ("manual", "40")
    assert cmds.calls[-2:] == [("sysctl", "hw.perfpolicy=manual"), ("sysctl", "hw.setperf=40")]


def test_the_kernel_refuses_hw_setperf_unless_manual(tmp_path):
    """Why the restore above sets the policy first: the old undo (sysctl hw.setperf=40 alone) failed."""
    cmds = FakeOpenBSD(perfpolicy="high", setperf="100")
    assert "Operation not permitted" in cmds.run(["sysctl", "hw.setperf=40"]).stderr
    assert cmds.setperf == "100"


def test_manual_at_100_is_left_alone_and_nothing_to_restore(tmp_path):
    cmds = FakeOpenBSD(perfpolicy="manual", setperf="100")
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(turbo="ignore"))
    assert reports_of(p)["apm_performance"]["action"] == "none"
    p.restore()
    assert not any(c[0] == "sysctl" and "=" in c[-1] for c in cmds.calls)


def test_no_frequency_driver_is_a_one_line_problem(tmp_path):
    cmds = FakeOpenBSD(perfpolicy=None, setperf=None)
    r = next(r for r in openbsd(tmp_path, cmds).inspect() if r.control == "apm_performance")
    assert r.fatal and 'apm_performance = "ignore"' in r.fix and "\n" not in r.fix


# --- hw.smt (sysctl(2): 1 schedules on SMT siblings; 0, the default, does not) -------------

def test_smt_required_off_is_switched_off_verified_and_restored(tmp_path):
    cmds = FakeOpenBSD(smt="1")
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(smt="require_off", turbo="ignore"))
    r = reports_of(p)["smt"]
    assert (r["found"], r["action"]) == ("hw.smt=0", "changed from hw.smt=1")
    p.restore()
    assert p.restore_failures == [] and cmds.smt == "1"


def test_smt_already_off_and_smt_reported(tmp_path):
    cmds = FakeOpenBSD(smt="0")
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(smt="require_off", turbo="ignore"))
    assert reports_of(p)["smt"]["action"] == "none"
    reported = openbsd(tmp_path, FakeOpenBSD(smt="1"), policy=PlatformPolicy(turbo="ignore"))
    r = next(r for r in reported.inspect() if r.control == "smt")
    assert (r.found, r.action, r.ok) == ("hw.smt=1", "report", True)


def test_smt_without_hw_smt_is_refused_with_one_line(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD(smt=None), policy=PlatformPolicy(smt="require_off", turbo="ignore"))
    r = next(r for r in p.inspect() if r.control == "smt")
    assert r.fatal and r.fix.startswith("hw.smt is missing") and 'smt = "ignore"' in r.fix


def test_smt_write_refused_by_the_kernel_stops_the_experiment(tmp_path):
    cmds = FakeOpenBSD(smt="1")
    cmds._sysctl_write = lambda a, name, value: CommandResult(a, 1, "", f"sysctl: {name}: Operation not permitted\n")
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(smt="require_off", turbo="ignore"))
    with pytest.raises(PlatformError, match=r"smt: sysctl hw.smt=0 failed: sysctl: hw.smt: Operation not permitted"):
        p.apply_and_verify()


# --- turbo: no OS switch on OpenBSD; hw.setperf=100 selects the turbo P-state ---------------

def test_turbo_off_is_refused_by_check_with_one_line(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD())       # the default policy: turbo = "off"
    r = next(r for r in p.inspect() if r.control == "turbo")
    assert r.fatal and r.fix.startswith("OpenBSD cannot switch turbo off") and "\n" not in r.fix
    with pytest.raises(PlatformError, match="turbo: OpenBSD cannot switch turbo off"):
        p.apply_and_verify()
    on = openbsd(tmp_path, FakeOpenBSD(), policy=PlatformPolicy(turbo="on"))
    assert next(r for r in on.inspect() if r.control == "turbo").ok
    ignored = openbsd(tmp_path, FakeOpenBSD(), policy=PlatformPolicy(turbo="ignore"))
    assert all(r.control != "turbo" for r in ignored.inspect())


# --- boot order: /etc/rc, then reorder_kernel (KARL), must be over before anything is applied --

RC = "sh /etc/rc autoboot"                                 # init(8) runs rc so
KARL = "/bin/ksh /usr/libexec/reorder_kernel"              # rc's last line: /usr/libexec/reorder_kernel &


def test_apply_waits_for_rc_and_then_reorder_kernel(tmp_path):
    cmds = FakeOpenBSD()
    cmds.boot = [[RC], [RC, "/usr/sbin/apmd -A"], [KARL, "ld -o bsd"], [KARL]]
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(turbo="ignore"))
    r = reports_of(p)["boot_scripts"]
    assert (r["found"], r["action"]) == ("finished after waiting 20 s for /etc/rc and reorder_kernel", "waited")
    # Nothing was changed before both had ended.
    first_write = next(i for i, c in enumerate(cmds.calls) if c[0] == "sysctl" and "=" in c[-1])
    last_pgrep = max(i for i, c in enumerate(cmds.calls) if c[0] == "pgrep")
    assert last_pgrep < first_write
    assert p.snapshot()["boot_scripts"] == "finished after waiting 20 s for /etc/rc and reorder_kernel"


def test_no_boot_scripts_running_means_no_wait(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD(), policy=PlatformPolicy(turbo="ignore"))
    assert reports_of(p)["boot_scripts"]["found"] == "finished" and p.clock.slept == []


def test_a_relink_that_never_ends_stops_at_the_deadline(tmp_path):
    cmds = FakeOpenBSD()
    cmds.processes.append(KARL)
    p = openbsd(tmp_path, cmds, policy=PlatformPolicy(turbo="ignore"))
    with pytest.raises(PlatformError, match="boot_scripts: reorder_kernel still running after 3600 s"):
        p.apply_and_verify()


def test_pgrep_failing_is_a_platform_error(tmp_path):
    cmds = FakeOpenBSD()
    cmds._pgrep = lambda a, pattern: CommandResult(a, 3, "", "pgrep: out of memory")
    with pytest.raises(PlatformError, match="cannot tell whether reorder_kernel is still relinking"):
        openbsd(tmp_path, cmds, policy=PlatformPolicy(turbo="ignore")).apply_and_verify()


# --- Linux-only [platform] fields: refused when the experiment sets them, listed when left at defaults --

def test_a_linux_only_setting_in_the_experiment_is_refused_with_one_line(tmp_path):
    p = openbsd(tmp_path, FakeOpenBSD(), policy=PlatformPolicy(turbo="ignore", governor="performance", aslr=False))
    refused = {r.control: r for r in p.inspect() if r.fatal}
    assert set(refused) == {"governor", "aslr"}
    assert refused["governor"].fix == 'governor has no meaning on OpenBSD; remove it from [platform] or set it to "ignore"'
    with pytest.raises(PlatformError, match="governor: governor has no meaning on OpenBSD"):
        p.apply_and_verify()


def test_linux_only_fields_switched_off_or_left_at_defaults_pass(tmp_path):
    policy = PlatformPolicy(turbo="ignore", governor="ignore", pinning=False, aslr=True, swap="report")
    p = openbsd(tmp_path, FakeOpenBSD(), policy=policy)
    reports = {r.control: r for r in p.inspect()}
    assert not any(r.fatal for r in reports.values())
    unused = reports["linux_only"].found
    assert unused.startswith("defaults unused on OpenBSD: ") and "tickless" in unused and "governor" not in unused


def test_a_jobs_overrides_keep_what_the_experiment_set(tmp_path):
    """for_job re-validates the policy; the fields the file left unset must stay unset (not refused)."""
    p = openbsd(tmp_path, FakeOpenBSD(), policy=PlatformPolicy(turbo="ignore"))
    job = p.for_job({"smt": "ignore"})
    assert job.policy.model_fields_set == {"turbo", "smt"}
    assert not any(r.fatal for r in job.inspect())


def test_the_boot_script_patterns_match_real_processes_through_a_real_pgrep(tmp_path, monkeypatch):
    """perl's $0 rewrites its argument list, so pgrep -f sees the command lines OpenBSD's rc shows."""
    import shutil
    import subprocess
    from supervisor.system import RealCommands
    if shutil.which("perl") is None or shutil.which("pgrep") is None:
        pytest.skip("needs perl and pgrep")
    monkeypatch.setattr("supervisor.platforms.openbsd.BOOT_SCRIPTS_DEADLINE", 10.0)   # two looks
    procs = [subprocess.Popen(["perl", "-e", f'$0 = "{line}"; sleep 60']) for line in (RC, KARL)]
    try:
        import time
        time.sleep(0.3)
        p = openbsd(tmp_path, RealCommands(), policy=PlatformPolicy(turbo="ignore"))
        with pytest.raises(PlatformError, match="boot_scripts: /etc/rc and reorder_kernel still running"):
            p.wait_for_boot_scripts()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert p.wait_for_boot_scripts().found == "finished"
