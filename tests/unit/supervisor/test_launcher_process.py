"""The launcher: fd 3, rlimits, process group, timeout, bounded tails, exit status and signals."""

import os
import signal
import sys
import time

from supervisor.launch.process import Tail, run_process

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
    assert time.monotonic() - t0 < 5
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
    from supervisor.boot.execution import _env_after_prefix
    prefix = ["nice", "-n", "-20", "setpriv", "--reuid=u", "--", "env", "HOME=/home/u", "USER=u"]
    assert _env_after_prefix(prefix, {"HOME": "/x", "PATH": "/bin"}) == {"HOME": "/home/u", "PATH": "/bin",
                                                                         "USER": "u"}
    assert _env_after_prefix([], {"A": "1"}) == {"A": "1"}
