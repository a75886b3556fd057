"""The launcher: fd 3, rlimits, process group, timeout, bounded tails, exit status and signals; containment of what a runner leaves."""

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from process_checks import bystander, gone  # noqa: F401 (bystander is a fixture)
from supervisor.launch.containment import cgroup2_mount, open_containment
from supervisor.platforms.base import LaunchPrefix
from supervisor.launch.process import Tail, kill_orphan, run_process

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C"}


def run(code: str, **kw):
    kw.setdefault("heap_limit", None)
    kw.setdefault("stack_limit", None)
    kw.setdefault("timeout", 10)
    return run_process([sys.executable, "-c", code], ENV, cwd="/", **kw)


def test_results_on_fd3_and_separate_stdout():
    r = run("import os; print('bench output'); os.write(3, b'{\"a\": 1}')")
    assert r.exit_code == 0 and r.signal is None and not r.timed_out
    assert r.results == b'{"a": 1}'
    assert r.stdout.text() == "bench output\n"


def test_only_fds_0_to_3_are_open_and_env_is_exact():
    # /proc/self/environ: what exec received (Python's locale coercion edits os.environ later)
    r = run("import os, json; env = open('/proc/self/environ', 'rb').read().decode(); "
            "os.write(3, json.dumps([sorted(os.listdir('/proc/self/fd')), env]).encode())")
    import json
    fds, raw_env = json.loads(r.results)
    env = dict(kv.split("=", 1) for kv in raw_env.split("\0") if kv)
    # listdir itself holds one extra descriptor open while listing
    assert [f for f in fds if int(f) <= 3] == ["0", "1", "2", "3"] and len(fds) == 5
    assert env == ENV


def test_rlimits_applied_in_child():
    r = run("import resource, os; os.write(3, repr((resource.getrlimit(resource.RLIMIT_DATA)[0], "
            "resource.getrlimit(resource.RLIMIT_STACK)[0])).encode())",
            heap_limit=1 << 30, stack_limit=4 << 20)
    assert r.results == repr((1 << 30, 4 << 20)).encode()


def test_exit_status_and_signal_recorded():
    assert run("import sys; sys.exit(7)").exit_code == 7
    r = run("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert r.signal == signal.SIGSEGV and r.exit_code is None


def test_timeout_kills_whole_group():
    t0 = time.monotonic()
    r = run("import subprocess, sys, os, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(p.pid, flush=True)\ntime.sleep(60)", timeout=1.0)
    assert r.timed_out and r.signal == signal.SIGKILL
    assert time.monotonic() - t0 < 30     # not the children's 60 s (loose: a loaded CI machine)
    grandchild = int(r.stdout.text().split()[0])
    time.sleep(0.1)
    try:
        os.kill(grandchild, 0)
        # a zombie reparented to init counts as gone once reaped; check its state
        with open(f"/proc/{grandchild}/stat") as f:
            assert f.read().split()[2] == "Z"
    except ProcessLookupError:
        pass


def test_huge_output_keeps_bounded_tail():
    r = run("import os\nfor _ in range(40): os.write(1, b'y' * (1 << 20))\nos.write(1, b'THE END')",
            tail_bytes=4096)
    assert r.exit_code == 0
    assert r.stdout.total == 40 * (1 << 20) + 7
    assert len(r.stdout.text()) == 4096 and r.stdout.text().endswith("THE END")


def test_results_limit():
    r = run("import os\nfor _ in range(4): os.write(3, b'z' * 1000)", results_limit=1500)
    assert r.results_oversize and len(r.results) <= 1500 and r.exit_code == 0


def test_a_document_over_the_limit_is_kept_whole_in_the_spill_file(tmp_path):
    """Issue 26 item 6: nothing measured is thrown away: over the limit, the document goes to a file whole."""
    spill = tmp_path / "over.json"
    r = run("import os\nfor i in range(4): os.write(3, bytes([65 + i]) * 1000)", results_limit=1500,
            results_spill=str(spill))
    assert r.results_oversize and r.results == b"" and r.results_spilled == str(spill)
    assert spill.read_bytes() == b"A" * 1000 + b"B" * 1000 + b"C" * 1000 + b"D" * 1000
    assert spill.stat().st_mode & 0o777 == 0o600


def test_missing_executable_is_a_launch_error():
    r = run_process(["/no/such/runner"], ENV, cwd="/", heap_limit=None, stack_limit=None, timeout=5)
    assert r.launch_error and "No such file" in r.launch_error


def test_runner_gets_its_own_process_group():
    r = run("import os; os.write(3, str((os.getpgrp(), os.getpid())).encode())")
    pgrp, pid = eval(r.results)
    assert pgrp == pid != os.getpgrp()


def test_tail_counts_everything():
    t = Tail(10)
    for chunk in (b"abc", b"defghijklmnop", b"qrstuvwxyz" * 5):
        t.add(chunk)
    assert t.total == 66 and t.text() == "qrstuvwxyz" and t.truncated


def test_bare_command_names_are_found_on_the_child_path():
    r = run_process(["sh", "-c", "echo $0"], ENV, cwd="/", heap_limit=None, stack_limit=None, timeout=5)
    assert r.exit_code == 0 and r.stdout.text().strip().endswith("sh")


def test_recorded_environment_follows_an_env_prefix():
    prefix = LaunchPrefix(["nice", "-n", "-20", "setpriv", "--reuid=u", "--"], {"HOME": "/home/u", "USER": "u"})
    assert prefix.argv() == ["nice", "-n", "-20", "setpriv", "--reuid=u", "--", "env", "HOME=/home/u", "USER=u"]
    assert prefix.environment({"HOME": "/x", "PATH": "/bin"}) == {"HOME": "/home/u", "PATH": "/bin",
                                                                  "USER": "u"}
    assert LaunchPrefix().environment({"A": "1"}) == {"A": "1"} and LaunchPrefix().argv() == []


# --- containment: escaped helpers, REAL processes ------------------------------------------------------

NO_CGROUP_HERE = "/nonexistent-coldrun-test-dir"   # a parent where no cgroup can be made: forces the fallback

# The runner forks a helper that calls setsid and forks again; the grandchild reports its pid and sleeps.
ESCAPE = """
import os, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(r)
        {grandchild}
        os.write(w, str(os.getpid()).encode()); os.close(w)
        time.sleep(600)
    os._exit(0)
os.close(w)
helper = int(os.read(r, 64))
os.wait()
print('helper', helper, flush=True)
{then}
"""
HOLDS_PIPES = "pass   # keeps stdout, stderr and fd 3 open"
DETACHES = "n = os.open('/dev/null', os.O_RDWR); [os.dup2(n, fd) for fd in (0, 1, 2, 3)]   # double-fork daemon"


def cgroup_or_skip() -> dict:
    box, why = open_containment()
    box.close()
    if box.kind != "cgroup":
        print(f"SKIP cgroup containment: {why}")
        pytest.skip(f"no writable cgroup v2 here: {why}")
    return {}


@pytest.fixture(params=["cgroup", "process_group"])
def contained(request):
    """run_process keyword arguments for each containment; the cgroup one is skipped, saying why, where impossible."""
    return cgroup_or_skip() if request.param == "cgroup" else {"cgroup_parent": NO_CGROUP_HERE}


def helper_of(r) -> int:
    return int(r.stdout.text().split()[1])


def test_setsid_helper_holding_the_pipes_neither_hangs_nor_times_out(contained):
    t0 = time.monotonic()
    r = run(ESCAPE.format(grandchild=HOLDS_PIPES, then="os.write(3, b'{\"doc\": 1}')"), timeout=None,
            **contained)
    assert time.monotonic() - t0 < 30     # not the helper's 600 s
    assert r.exit_code == 0 and not r.timed_out and r.results == b'{"doc": 1}'
    assert r.leftover_processes == 1 and r.containment == ("process_group" if contained else "cgroup")
    assert gone(helper_of(r))


def test_double_fork_escapee_is_found_and_killed(contained):
    r = run(ESCAPE.format(grandchild=DETACHES, then="os.write(3, b'{}')"), **contained)
    assert r.exit_code == 0 and not r.timed_out and r.results == b"{}"
    assert r.leftover_processes == 1 and r.duration < 30     # not the helper's 600 s
    assert gone(helper_of(r))


def test_timeout_kills_runner_and_escaped_helper(contained):
    r = run(ESCAPE.format(grandchild=HOLDS_PIPES, then="time.sleep(600)"), timeout=1.0, **contained)
    assert r.timed_out and r.signal == signal.SIGKILL
    assert 1.0 <= r.duration < 30 and r.leftover_processes == 1     # killed at 1 s, not 600
    assert gone(helper_of(r))


def test_a_clean_runner_leaves_nothing(contained):
    r = run("print('done')", **contained)
    assert r.exit_code == 0 and r.leftover_processes == 0


# Half the helpers stay in the runner's process group, half leave it by setsid; all sleep on.
MANY_HELPERS = """
import os, time
for i in range(2 * {half}):
    if os.fork() == 0:
        if i % 2:
            os.setsid()
        time.sleep(600)
        os._exit(0)
os.write(3, b'{{}}')
"""


def test_every_leftover_is_counted(contained):
    """Issue 26 item 19: the fallback counted only what was still alive after killing the group (half)."""
    r = run(MANY_HELPERS.format(half=20), **contained)
    assert r.exit_code == 0 and r.results == b"{}"
    assert r.leftover_processes == 40


def test_cgroup_is_removed_and_holds_the_runner():
    cgroup_or_skip()
    r = run("import os; os.write(3, open('/proc/self/cgroup').read().encode())")
    path = r.containment_detail.split(" ", 1)[1]
    assert r.containment == "cgroup"
    assert f"0::/{os.path.relpath(path, cgroup2_mount())}" in r.results.decode().splitlines()
    assert not os.path.exists(path)


def test_unkilled_holder_of_the_pipes_only_delays_by_the_drain_bound(contained):
    # A process outside the containment (it predates the execution) opens the runner's stdout
    # pipe through /proc and keeps it: the supervisor reads for drain_seconds, then goes on.
    holder = subprocess.Popen([sys.executable, "-c", "import os, sys, time\n"
                               "pid = sys.stdin.readline().strip()\n"
                               "fd = os.open(f'/proc/{pid}/fd/1', os.O_WRONLY)\n"
                               "print('holding', flush=True)\ntime.sleep(60)"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def started(pid, create_time, cgroup):
        holder.stdin.write(f"{pid}\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "holding\n"

    try:
        t0 = time.monotonic()
        r = run("import time; time.sleep(1); print('x')", drain_seconds=0.5, on_started=started, **contained)
        elapsed = time.monotonic() - t0
        assert r.exit_code == 0 and r.stdout.text() == "x\n" and r.leftover_processes == 0
        assert 1.5 <= elapsed < 30 and r.duration < elapsed - 0.4     # the drain's 0.5 s, not the holder's 60
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()


# --- runner.json from an earlier boot: kill only the process it names ---------------------------------------

def test_stale_runner_json_without_start_time_kills_nothing(bystander):
    said = kill_orphan(bystander.pid, None)
    assert "not killed" in said and "no start time" in said
    assert bystander.poll() is None


def test_runner_json_with_another_start_time_kills_nothing(bystander):
    said = kill_orphan(bystander.pid, psutil.Process(bystander.pid).create_time() - 100)
    assert "not killed" in said and "pid now belongs" in said
    assert bystander.poll() is None


def test_runner_json_matching_the_live_process_kills_its_group(bystander):
    said = kill_orphan(bystander.pid, psutil.Process(bystander.pid).create_time())
    assert said == f"killed runner process group {bystander.pid}"
    assert bystander.wait(timeout=5) == -signal.SIGKILL


def test_orphan_cgroup_is_emptied_and_removed():
    cgroup_or_skip()
    path = os.path.join(cgroup2_mount(), f"coldrun.test-orphan-{os.getpid()}")
    os.mkdir(path)
    procs = os.path.join(path, "cgroup.procs")

    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=enter,
                         start_new_session=True)
    try:
        said = kill_orphan(p.pid + 10 ** 7, None, path)   # pid unknown: only the cgroup can be trusted
        assert "killed 1 process(es) left in its cgroup" in said
        assert p.wait(timeout=5) == -signal.SIGKILL and not os.path.exists(path)
    finally:
        p.kill()
        if os.path.exists(path):
            p.wait()
            os.rmdir(path)


def test_cgroup2_mount_found_on_unified_and_hybrid_hosts(tmp_path):
    unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
    hybrid = ("31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
              "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
              "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
    v1_only = "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    found = []
    for text in (unified, hybrid, v1_only):
        (tmp_path / "mountinfo").write_text(text)
        found.append(cgroup2_mount(str(tmp_path / "mountinfo")))
    assert found == ["/sys/fs/cgroup", "/sys/fs/cgroup/unified", None]




def may_raise_hard_limits() -> bool:
    """Root with CAP_SYS_RESOURCE (a container's root may lack it)."""
    code = ("import resource\nresource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))\n"
            "resource.setrlimit(resource.RLIMIT_STACK, (2 << 20, 2 << 20))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_rlimits_are_the_experiments_even_below_an_inherited_hard_limit(tmp_path):
    """As under OpenBSD's rc (the daemon login class): coldrun's own hard limits are lower than asked."""
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_DATA, (512 << 20, 512 << 20))\n"
            "resource.setrlimit(resource.RLIMIT_STACK, (2 << 20, 2 << 20))\n"
            "from supervisor.launch.process import run_process\n"
            "r = run_process([sys.executable, '-c', 'import resource, os; os.write(3, repr([resource.getrlimit(l) "
            "for l in (resource.RLIMIT_DATA, resource.RLIMIT_STACK)]).encode())'], {'PATH': '/usr/bin:/bin'}, "
            "cwd='/', heap_limit=1 << 30, stack_limit=4 << 20, timeout=10)\n"
            "print(r.results.decode() or r.launch_error)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if may_raise_hard_limits():
        assert out.stdout.strip() == repr([(1 << 30, 1 << 30), (4 << 20, 4 << 20)]), out
    else:
        assert "cannot set RLIMIT_DATA to 1073741824 bytes: the inherited hard limit is 536870912" in out.stdout, out
