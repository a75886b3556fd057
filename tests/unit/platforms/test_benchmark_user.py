import os
import shutil
import sys

import pytest

from supervisor.errors import PlatformError
from supervisor.system import CommandResult

from platform_helpers import FakeMachineCommands, make_linux, vm_policy


def test_fresh_user_per_execution_with_setpriv_prefix(machine, tmp_path):
    cmds = FakeMachineCommands()
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)
    prefix = p.launch_prefix("bench:vm:variant").argv()
    assert prefix[:6] == ["chrt", "--other", "0", "nice", "-n", "-20"]
    assert prefix[6:11] == ["setpriv", "--reuid=coldrunbench", "--regid=coldrunbench", "--init-groups", "--"]
    assert "HOME=/home/coldrunbench" in prefix and "sudo" not in prefix
    useradd = next(c for c in cmds.calls if c[0] == "useradd")
    assert "--skel" in useradd and os.listdir(useradd[useradd.index("--skel") + 1]) == []  # empty home
    assert "coldrunbench" in cmds.users
    p.end_launch("bench:vm:variant")
    assert "coldrunbench" not in cmds.users
    assert ("userdel", "--remove", "--force", "coldrunbench") in cmds.calls
    assert not (tmp_path / "s/benchmark_user").exists()


def test_pre_existing_account_is_never_used_or_deleted(machine, tmp_path):
    cmds = FakeMachineCommands(users={"coldrunbench"})
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)
    with pytest.raises(PlatformError, match="already exists and was not created by coldrun"):
        p.launch_prefix("k")
    assert not any(c[0] in ("userdel", "useradd") for c in cmds.calls)
    assert next(r for r in p.inspect() if r.control == "benchmark_user").fatal


def test_leftover_from_a_crash_is_recreated(machine, tmp_path):
    cmds = FakeMachineCommands(users={"coldrunbench"})
    (tmp_path / "s").mkdir()
    (tmp_path / "s/benchmark_user").write_text("coldrunbench\n")  # coldrun created it, then the power went
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)
    p.launch_prefix("k")
    kinds = [c[0] for c in cmds.calls if c[0] in ("useradd", "userdel")]
    assert kinds == ["userdel", "useradd"]


def test_without_benchmark_user_only_nice(machine, tmp_path):
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(benchmark_user=False, nice=-5))
    assert p.launch_prefix("k").argv() == ["chrt", "--other", "0", "nice", "-n", "-5"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv to switch users")
def test_setpriv_keeps_the_results_fd_open(tmp_path):
    """The user switch must leave fd 3 (the runner's results channel) open, unlike sudo."""
    r, w = os.pipe()
    child = ("import os; os.write(3, str(os.getuid()).encode()); os.close(3)")
    argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--init-groups", "--", sys.executable, "-c", child]
    pid = os.fork()
    if pid == 0:  # child: put the pipe on fd 3 exactly as the supervisor's pass_fds does
        os.dup2(w, 3)
        os.execvp(argv[0], argv)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    out = os.read(r, 100)
    os.close(r)
    assert os.waitstatus_to_exitcode(status) == 0
    assert out == b"65534"


def test_no_uid_is_used_twice_in_an_experiment(machine, tmp_path):
    """Issue 26 item 7: useradd gave each fresh account the uid the last one had."""
    cmds = FakeMachineCommands()
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)
    for _ in range(3):
        p.launch_prefix("k")
        p.end_launch("k")
    uids = [c[c.index("--uid") + 1] for c in cmds.calls if c[0] == "useradd"]
    assert uids == ["1000", "1001", "1002"]
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)   # a later boot: the same file
    p.launch_prefix("k")
    assert [c for c in cmds.calls if c[0] == "useradd"][-1][5] == "1003"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files another owner")
def test_a_users_files_go_and_nothing_else(tmp_path):
    from supervisor.platforms.user_leftovers import remove_files_of
    uid, other = 54321, 54322
    shared = tmp_path / "tmp"
    (shared / "others").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    owned = {shared / "f": "file", shared / "d": "dir", shared / "others" / "g": "file", shared / "link": "link"}
    for path, kind in owned.items():
        if kind == "dir":
            path.mkdir()
            (path / "inner").write_text("x")
        elif kind == "link":
            path.symlink_to(outside)
        else:
            path.write_text("x")
        os.lchown(path, uid, uid)
    (shared / "kept").write_text("x")
    os.chown(shared / "kept", other, other)
    removed, left = remove_files_of(uid, (str(shared), str(tmp_path / "absent")))
    assert left == []
    assert sorted(removed) == sorted(str(p) for p in owned)
    assert outside.read_text() == "keep" and (shared / "kept").exists() and (shared / "others").is_dir()


class UidTakenMeanwhile(FakeMachineCommands):
    """Another account takes each of the first ``times`` uids coldrun found unused, just before its useradd
    (as another experiment's coldrun did in the test suite); useradd then refuses it as shadow-utils does."""

    def __init__(self, times: int):
        super().__init__()
        self.taken: set[str] = set()
        self.times = times

    def run(self, argv, **kw):
        a = tuple(str(x) for x in argv)
        if a[:2] == ("getent", "passwd"):
            self.calls.append(a)
            return CommandResult(a, 0 if a[2] in self.taken else 2, "", "")
        if a[0] == "useradd" and self.times:
            self.calls.append(a)
            self.times -= 1
            uid = a[a.index("--uid") + 1]
            self.taken.add(uid)
            return CommandResult(a, 4, "", f"useradd: UID {uid} is not unique\n")
        return super().run(argv, **kw)


def test_a_uid_taken_between_the_check_and_useradd_is_passed_over(machine, tmp_path):
    cmds = UidTakenMeanwhile(times=2)
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)
    p.launch_prefix("k")
    uids = [c[c.index("--uid") + 1] for c in cmds.calls if c[0] == "useradd"]
    assert uids == ["1000", "1001", "1002"] and "coldrunbench" in cmds.users
    assert (tmp_path / "s" / "benchmark_next_uid").read_text() == "1003\n"


def test_useradd_failing_for_another_reason_is_not_retried(machine, tmp_path):
    class Refuses(FakeMachineCommands):
        def run(self, argv, **kw):
            if argv[0] == "useradd":
                self.calls.append(tuple(argv))
                return CommandResult(tuple(argv), 9, "", "useradd: group coldrunbench exists - if you want "
                                     "to add this user to that group, use -g.\n")
            return super().run(argv, **kw)
    cmds = Refuses()
    p = make_linux(machine("vm-nocpufreq"), tmp_path / "s", vm_policy(), cmds)
    with pytest.raises(PlatformError, match="could not create benchmark user 'coldrunbench': useradd: group "):
        p.launch_prefix("k")
    assert len([c for c in cmds.calls if c[0] == "useradd"]) == 1
