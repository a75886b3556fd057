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


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates and deletes real user accounts")
def test_simulated_run_as_root_cannot_write_into_the_state_dir():
    if not shutil.which("useradd") or not shutil.which("setpriv"):
        pytest.skip("useradd/setpriv not installed")
    # Under /tmp, not pytest's tmp dir: the fresh user must reach the runner (pytest's dirs are 0700).
    top = Path(tempfile.mkdtemp(prefix="coldrun-simroot-", dir="/tmp"))
    try:
        top.chmod(0o755)
        state = top / "state"
        runner = top / "runner.sh"
        runner.write_text(RUNNER.replace("$STATE", str(state)))
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
        # The real command: simulated reboots re-execute it until the one execution is done.
        res = subprocess.run([sys.executable, "-m", "supervisor", "start", str(exp), "--simulate-reboots",
                              "--state-dir", str(state)], capture_output=True, text=True, timeout=120)
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
