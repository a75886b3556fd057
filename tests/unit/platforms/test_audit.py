from supervisor.platforms.audit import compare_audit
from supervisor.experiment.platform_policy import PlatformPolicy

from platform_helpers import FakeMachineCommands, make_linux


def test_audit_fingerprint_of_a_machine(machine, tmp_path):
    p = make_linux(machine("intel-desktop"), tmp_path / "s", PlatformPolicy(intel_pstate="allow"))
    a = p.audit()
    assert a["uname"].startswith("Linux bench-intel 6.1.0-26-amd64 #1 SMP")
    assert a["cpu_model"] == "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz" and a["microcode"] == "0xf4"
    assert a["kernel_cmdline"].endswith("nohz_full=1-3") and a["packages_count"] == 2
    assert len(a["packages_sha256"]) == 64 and a["volatile"]["uptime_s"] == 1234.56


def test_package_upgrade_and_kernel_change_are_reported(machine, tmp_path):
    root = machine("intel-desktop")
    old = make_linux(root, tmp_path / "s").audit()
    (root / "proc/sys/kernel/osrelease").write_text("6.1.0-27-amd64\n")
    (root / "proc/uptime").write_text("99.0 1.0\n")
    new = make_linux(root, tmp_path / "s", commands=FakeMachineCommands(dpkg="libc6 2.36-10 amd64\n")).audit()
    diffs = compare_audit(old, new)
    assert any(d.startswith("kernel_release: was '6.1.0-26-amd64', now '6.1.0-27-amd64'") for d in diffs)
    assert any(d.startswith("packages_sha256:") for d in diffs)
    assert not any(d.startswith("volatile") for d in diffs)  # uptime changes every boot
    assert compare_audit(old, new, allowed=["*"]) == []
    only_kernel = compare_audit(old, new, allowed=["packages_sha256", "packages_count", "uname"])
    assert [d.split(":")[0] for d in only_kernel] == ["kernel_release"]


def test_missing_and_added_keys():
    assert compare_audit({"a": 1}, {"b": 2}) == ["a: was 1, now missing", "b: not recorded at start, now 2"]
    assert compare_audit({"a": 1, "volatile": {"x": 1}}, {"a": 1, "volatile": {"x": 2}}) == []
