"""Simulated mode as root runs each benchmark as a fresh unprivileged user, by the code path real runs use."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from supervisor.eventlog import make_logger
from supervisor.platforms.benchmark_user import BenchmarkUser, simulated_user_name
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.simulated import SimulatedPlatform
from supervisor.state.records import list_records
from supervisor.state.schedule import Schedule
from supervisor.system import CommandResult
from doubles import RecordingCommands


def Log():
    return make_logger(None, stderr=None)     # logs nowhere: these tests look at accounts and argv


class Accounts:
    """Test double for useradd/userdel/id: a set of account names; records every argv."""

    def __init__(self):
        self.names: set[str] = set()
        self.calls: list[tuple[str, ...]] = []

    def run(self, argv, *, input=None, timeout=None):
        argv = tuple(argv)
        self.calls.append(argv)
        if argv[0] == "useradd":
            self.names.add(argv[-1])
        elif argv[0] == "userdel":
            self.names.discard(argv[-1])
        elif argv[:2] != ("id", "-u"):
            return CommandResult(argv, 127, "", "not faked")
        return CommandResult(argv, 0 if argv[0] != "id" or argv[-1] in self.names else 1, "", "")


def test_as_root_the_prefix_is_the_real_platforms_drop_to_a_fresh_user(tmp_path):
    name = simulated_user_name("coldrunbench", tmp_path)
    assert name.startswith("coldrunbench-") and len(name) <= 31
    assert simulated_user_name("coldrunbench", tmp_path / "other") != name   # side-by-side experiments
    accounts = Accounts()
    p = SimulatedPlatform(PlatformPolicy(), tmp_path, commands=accounts, log=Log(), euid=0)
    prefix = p.launch_prefix("a:b:c").argv()
    assert prefix == BenchmarkUser(name, accounts, tmp_path, Log(), "linux").switch().argv()
    assert prefix[:5] == ["setpriv", f"--reuid={name}", f"--regid={name}", "--init-groups", "--"]
    assert accounts.names == {name} and (tmp_path / "benchmark_user").read_text() == name + "\n"
    p.end_launch("a:b:c")
    assert accounts.names == set() and not (tmp_path / "benchmark_user").exists()


def test_as_root_an_account_of_that_name_coldrun_did_not_make_is_refused(tmp_path):
    accounts = Accounts()
    name = simulated_user_name("coldrunbench", tmp_path)
    accounts.names.add(name)
    p = SimulatedPlatform(PlatformPolicy(), tmp_path, commands=accounts, log=Log(), euid=0)
    with pytest.raises(Exception, match="already exists and was not created by coldrun"):
        p.launch_prefix("a:b:c")
    assert not any(c[0] in ("useradd", "userdel") for c in accounts.calls)


def test_not_root_or_benchmark_user_false_runs_as_is(tmp_path):
    commands = RecordingCommands()
    for policy, euid in ((PlatformPolicy(), 1000), (PlatformPolicy(benchmark_user=False), 0)):
        p = SimulatedPlatform(policy, tmp_path, commands=commands, log=Log(), euid=euid)
        assert p.launch_prefix("a:b:c").argv() == []
        p.end_launch("a:b:c")
    assert commands.calls == []


RUNNER = """\
#!/bin/sh
# A runner that tries to write into the state dir, then reports who it ran as.
echo "uid=$(id -u) wrote=$( (echo evil > "$STATE/executions/evil.json") 2>/dev/null && echo yes || echo no)"
printf '{"protocol_version": 1, "wallclock_times": [0.001, 0.001, 0.001], "core_cycle_counts": [], "aperf_counts": [], \
"mperf_counts": [], "counters": {"available": false, "reason": "sh"}}' >&3
"""


def _simroot(runner_text: str) -> tuple[Path, Path, Path]:
    """An experiment of one /bin/sh runner in a fresh dir under /tmp, reachable by the fresh user: (dir, file,
    state dir)."""
    if not shutil.which("useradd") or not shutil.which("setpriv"):
        pytest.skip("useradd/setpriv not installed")
    # Under /tmp, not pytest's tmp dir: the fresh user must reach the runner (pytest's dirs are 0700).
    top = Path(tempfile.mkdtemp(prefix="coldrun-simroot-", dir="/tmp"))
    top.chmod(0o755)
    state = top / "state"
    runner = top / "runner.sh"
    runner.write_text(runner_text.replace("$STATE", str(state)))
    runner.chmod(0o755)
    (top / "benchmarks" / "a").mkdir(parents=True)
    (top / "benchmarks" / "a" / "b.txt").write_text("x\n")
    for d in (top / "benchmarks", top / "benchmarks" / "a"):
        d.chmod(0o755)
    (top / "benchmarks" / "a" / "b.txt").chmod(0o644)
    exp = top / "exp.toml"
    exp.write_text(textwrap.dedent(f"""\
        name = "simroot"
        executions = 1
        [waits]
        boot_settle = 0
        sync = 0
        [benchmarks]
        a = 1
        [variants.v]
        target = "b.txt"
        [vms.sh]
        runner = "external"
        executable = "/bin/sh"
        args = ["{runner}"]
        iterations = 3
        variants = ["v"]
        """))
    return top, exp, state


def _coldrun(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supervisor", *args], capture_output=True, text=True, timeout=120,
                          env=None if env is None else {**os.environ, **env})


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates and deletes real user accounts")
def test_simulated_run_as_root_cannot_write_into_the_state_dir():
    top, exp, state = _simroot(RUNNER)
    try:
        # The real command: simulated reboots re-execute it until the one execution is done.
        res = _coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state))
        assert res.returncode == 0, res.stderr
        [rec_path] = list_records(state).values()
        rec = json.loads(rec_path.read_text())
        assert rec["outcome"] == "C", rec.get("reason")
        assert rec["stdout_tail"].startswith("uid=") and "uid=0 " not in rec["stdout_tail"]
        assert "wrote=no" in rec["stdout_tail"] and not (state / "executions" / "evil.json").exists()
        assert rec["argv"][0] == "setpriv"
        name = simulated_user_name("coldrunbench", state)
        assert subprocess.run(["id", "-u", name], capture_output=True).returncode != 0   # deleted again
        assert Schedule.load(state / "schedule").counts()["completed"] == 1
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates and deletes real user accounts")
@pytest.mark.parametrize("then", ["abort", "resume"])
def test_the_account_of_a_supervisor_killed_mid_run_is_deleted(then):
    """Issue 26 item 8: after SIGKILL to the supervisor mid-run, abort left the coldrunbench-... account and
    its home (and a later start in hardware mode refused the name as "not created by coldrun").  abort and a
    boot's reconcile delete the account the state dir's marker names."""
    top, exp, state = _simroot("#!/bin/sh\nsleep 60\n")
    name = simulated_user_name("coldrunbench", state)
    try:
        res = _coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state),
                       env={"COLDRUN_TEST_PAUSE_AT": "during-run@1"})
        assert res.returncode == -9, res.stderr[-2000:]
        assert subprocess.run(["id", "-u", name], capture_output=True).returncode == 0   # left behind
        if then == "abort":
            res = _coldrun("abort", str(state))
            assert res.returncode == 0, res.stderr[-2000:]
        else:    # the next boot reconciles, then runs the job again with a fresh account (killed: sleeps 60 s)
            res = _coldrun("resume", str(state), env={"COLDRUN_TEST_PAUSE_AT": "after-claim@2"})
            assert res.returncode == -9, res.stderr[-2000:]
        assert f"deleted the benchmark user {name!r}" in (state / "log").read_text()
        assert subprocess.run(["id", "-u", name], capture_output=True).returncode != 0
        assert not Path(f"/home/{name}").exists()
    finally:
        subprocess.run(["userdel", "--remove", "--force", name], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


LEAVING_RUNNER = """\
#!/bin/sh
# Leaves files outside its home (one setuid), a directory in /tmp and a System V shared memory segment;
# says first whether an earlier execution's are still there.
tag=$(basename "$(dirname "$0")")
seen=no
for f in /var/tmp/$tag /dev/shm/$tag /tmp/$tag.d; do [ -e "$f" ] && seen=yes; done
echo "uid=$(id -u) seen=$seen"
echo x > /var/tmp/$tag; chmod 4755 /var/tmp/$tag
echo x > /dev/shm/$tag
mkdir /tmp/$tag.d && echo x > /tmp/$tag.d/f
ipcmk -M 4096 >/dev/null
printf '{"protocol_version": 1, "wallclock_times": [0.001, 0.001, 0.001], "core_cycle_counts": [], "aperf_counts": [], \
"mperf_counts": [], "counters": {"available": false, "reason": "sh"}}' >&3
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates and deletes real user accounts")
def test_each_execution_starts_without_an_earlier_users_files():
    """Issue 26 item 7: execution 1's fresh user got execution 0's uid and found (and owned) its files in
    /var/tmp and /dev/shm, setuid bit included; userdel took the home only.  Now each account's files in the
    shared directories and its System V IPC objects go with it, and no uid is used twice in an experiment."""
    if not shutil.which("ipcmk"):
        pytest.skip("ipcmk (util-linux) not installed")
    top, exp, state = _simroot(LEAVING_RUNNER)
    exp.write_text(exp.read_text().replace("executions = 1", "executions = 3"))
    tag = top.name
    try:
        res = _coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state))
        assert res.returncode == 0, res.stderr[-2000:]
        recs = [json.loads(p.read_text()) for p in sorted(list_records(state).values())]
        assert [r["outcome"] for r in recs] == ["C"] * 3, [r.get("reason") for r in recs]
        said = [dict(w.split("=") for w in r["stdout_tail"].split()) for r in recs]
        uids = [int(s["uid"]) for s in said]
        assert len(set(uids)) == 3, uids                       # never the same uid twice
        assert [s["seen"] for s in said] == ["no"] * 3
        for path in (f"/var/tmp/{tag}", f"/dev/shm/{tag}", f"/tmp/{tag}.d"):
            assert not os.path.exists(path), path
        shm = Path("/proc/sysvipc/shm").read_text().splitlines()
        owner = shm[0].split().index("uid")
        assert not [line for line in shm[1:] if int(line.split()[owner]) in uids]
    finally:
        for path in (f"/var/tmp/{tag}", f"/dev/shm/{tag}"):
            if os.path.exists(path):
                os.unlink(path)
        shutil.rmtree(f"/tmp/{tag}.d", ignore_errors=True)
        shutil.rmtree(top, ignore_errors=True)
