from supervisor.platforms.kernel_log import (DEFAULT_ALLOW, dmesg_new_lines, kmsg_position, kmsg_since,
                                             parse_kmsg_line, unexpected)
from supervisor.system import SystemRoot

from platform_helpers import make_linux, vm_policy


def test_parse_record_header():
    r = parse_kmsg_line("4,1234,5678901,-;mce: [Hardware Error]: CPU 2: Machine Check")
    assert (r.seq, r.priority, r.usec) == (1234, 4, 5678901)
    assert r.message == "mce: [Hardware Error]: CPU 2: Machine Check"
    assert parse_kmsg_line(" SUBSYSTEM=block") is None


def test_position_skips_continuation_lines(machine):
    root = SystemRoot(machine("intel-desktop"))
    assert kmsg_position(root) == 5
    assert kmsg_since(root, 5) == ([], False)


def test_new_records_since_position_and_ring_buffer_loss(machine):
    path = machine("vm-nocpufreq")
    root = SystemRoot(path)
    pos = kmsg_position(root)
    with open(path / "dev/kmsg", "a") as f:
        f.write("6,6,9000000,-;enp3s0: Link is Down\n3,7,9100000,-;watchdog: BUG: soft lockup - CPU#1 stuck\n")
    lines, lost = kmsg_since(root, pos)
    assert lines == ["enp3s0: Link is Down", "watchdog: BUG: soft lockup - CPU#1 stuck"] and not lost
    assert unexpected(lines, DEFAULT_ALLOW) == ["watchdog: BUG: soft lockup - CPU#1 stuck"]
    # records 8..9 overwritten before we read: reported as lost
    (path / "dev/kmsg").write_text("6,10,9900000,-;eno1: Link is Up\n")
    assert kmsg_since(root, 7) == (["eno1: Link is Up"], True)


def test_post_check_flags_unexpected_lines_and_stores_them(machine, tmp_path):
    path = machine("vm-nocpufreq")
    p = make_linux(path, tmp_path / "s", vm_policy(kernel_log_allow=[r"^my harmless driver"]))
    before = p.snapshot()
    with open(path / "dev/kmsg", "a") as f:
        f.write("6,6,1,-;my harmless driver says hi\n6,7,2,-;e1000e 0000:00:1f.6 eno1: NIC Link is Down\n")
    assert "kernel_log" not in p.post_checks(before, {}).flags
    with open(path / "dev/kmsg", "a") as f:
        f.write("4,8,3,-;perf: interrupt took too long (2502 > 2500), lowering kernel.perf_event_max_sample_rate\n")
    res = p.post_checks(before, {})
    assert res.flags == ["kernel_log"] and not res.rerun
    assert res.details["kernel_log"] == [
        "perf: interrupt took too long (2502 > 2500), lowering kernel.perf_event_max_sample_rate"]


def test_dmesg_diff_anchors_on_the_tail():
    before = "a\nb\nc\nd\n"
    assert dmesg_new_lines(before, "a\nb\nc\nd\ne\nf\n") == (["e", "f"], False)
    assert dmesg_new_lines(before, "c\nd\ne\n") == (["e"], False)  # start rolled off
    assert dmesg_new_lines(before, "x\ny\n") == (["x", "y"], True)  # anchor gone
