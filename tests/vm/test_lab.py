"""A lab of two benchmark machines driven by the deploy/ansible playbooks (issue 16).

Two guests of the VM tests' prepared disk (coldrun installed into /opt/coldrun
by the README's route), each named apart (bench-a, bench-b) and reachable only
through a qemu port forward on 127.0.0.1, accept an SSH key made here.
ansible-playbook (from this venv) installs the working tree's wheel, rebuilt
here, over the installed one (the role's upgrade path: same version, so a
forced reinstall), checks the experiment, starts it (both guests then reboot
for real between executions), watches `coldrun status --json` until both
finish, and collects both exports into one report.  Re-running install (on one
host) and collect must change nothing; start refuses a host whose experiment has
already run (the other host); abort is harmless then.

The role's fresh install (stage the wheels, make the venv, pip install offline)
runs in tests/integration/test_ansible_install.py against this machine: under an
emulated CPU it cost ten minutes per guest (Ansible copies and checksums each
wheel with a Python module run in the guest), which the suite cannot spend twice.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from real_parts import missing_real_part
from test_real_reboots import GUEST_WAIT, QUIET, SOLO_CPUS
from vm_payload import GUEST_FILES, REPO, build_payload, coldrun_wheel
from vm_qemu import GuestError, copy_disk

ANSIBLE_DIR = REPO / "deploy/ansible"
BIN = Path(sys.executable).parent          # this venv: ansible-playbook, coldrun-analyze
HOSTS = {"lab-a": "bench-a", "lab-b": "bench-b"}   # inventory name -> the guest's host name
AGAIN, OTHER = "lab-a", "lab-b"            # the host install runs on a second time; the one start refuses
EXECUTIONS = 1                             # tests/vm/guest/lab.toml: one key, one execution (two reboots a guest)
RECAP = re.compile(r"^(\S+)\s*: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _controller_files(tmp_path: Path) -> dict[str, Path]:
    """The wheel, the experiment and the SSH key (the guests have the dependencies)."""
    wheel = coldrun_wheel(tmp_path / "dist", tmp_path / "wheel-build")
    exp = tmp_path / "experiment"
    (exp / "benchmarks/fib/python").mkdir(parents=True)
    shutil.copy(GUEST_FILES / "lab.toml", exp / "lab.toml")
    shutil.copy(REPO / "configs/demo/benchmarks/fib/python/bench.py", exp / "benchmarks/fib/python/bench.py")
    key = tmp_path / "id_lab"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "coldrun-lab-test", "-f", str(key)],
                   check=True)
    return {"wheel": wheel, "experiment": exp, "key": key}


# coldrun_watch_interval: each round's `coldrun status` costs a guest ~20 s of emulated CPU (its imports).
def _inventory(path: Path, ports: dict[str, int], files: dict[str, Path], results: Path) -> None:
    hosts = "\n".join(f"{name} ansible_port={port}" for name, port in ports.items())
    path.write_text(f"""[bench]
{hosts}

[bench:vars]
ansible_host=127.0.0.1
ansible_user=root
ansible_ssh_private_key_file={files["key"]}
ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes'
ansible_python_interpreter=/usr/bin/python3
coldrun_wheel={files["wheel"]}
coldrun_experiment_src={files["experiment"]}
coldrun_experiment_file=lab.toml
coldrun_pip_args=["--no-compile", "--no-index"]
coldrun_watch_interval=30
coldrun_watch_rounds=600
coldrun_watch_batch=30
coldrun_results_dir={results}
coldrun_analyze={BIN / "coldrun-analyze"}
coldrun_analyze_args=["--quality", "low"]
""")


class Lab:
    def __init__(self, tmp_path: Path, inventory: Path, guests: dict):
        self.tmp_path, self.inventory, self.guests = tmp_path, inventory, guests
        self.env = dict(os.environ, ANSIBLE_CONFIG=str(ANSIBLE_DIR / "ansible.cfg"),
                        ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_NOCOLOR="1",
                        # one line per message (ansible.cfg wraps YAML at 80 columns for people)
                        ANSIBLE_CALLBACK_RESULT_FORMAT="json",
                        ANSIBLE_SSH_CONTROL_PATH_DIR=str(tmp_path / "cp"),
                        # a TCG guest on a busy machine may take longer than the default 10 s to greet
                        # (seen: "Connection timed out during banner exchange")
                        ANSIBLE_TIMEOUT="120",
                        # each task's duration, per playbook run, to see where a slow run spends its time
                        ANSIBLE_CALLBACKS_ENABLED="ansible.builtin.junit",
                        JUNIT_OUTPUT_DIR=str(tmp_path / "task-times"))
        self.runs = 0

    def play(self, playbook: str, timeout: float, hosts: list[str] | None = None
             ) -> tuple[int, str, dict[str, tuple[int, ...]]]:
        """Run one playbook (on ``hosts`` only: --limit): exit status, output, and the recap (ok, changed,
        unreachable, failed) per host."""
        self.runs += 1
        log = self.tmp_path / f"{self.runs:02d}-{playbook}.log"    # written as it runs, to follow a slow run
        limit = ["--limit", ",".join(hosts)] if hosts else []
        with open(log, "w") as f:
            r = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(self.inventory), *limit, playbook],
                               cwd=ANSIBLE_DIR, env=self.env, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
        out = log.read_text()
        recap = {m[1]: tuple(int(x) for x in m.groups()[1:]) for m in RECAP.finditer(out)
                 if m[1] != "localhost"}   # watch.yml's judge, collect.yml's report
        return r.returncode, out, recap

    def fail(self, what: str, out: str) -> None:
        serials = "\n".join(f"--- {name} serial ---\n" + "\n".join(g.serial().splitlines()[-25:])
                            for name, g in self.guests.items())
        pytest.fail(f"{what}\n--- ansible-playbook (last 80 lines) ---\n"
                    + "\n".join(out.splitlines()[-80:]) + "\n" + serials, pytrace=False)

    def ok(self, playbook: str, timeout: float, hosts: list[str] | None = None) -> tuple[str, dict]:
        rc, out, recap = self.play(playbook, timeout, hosts)
        if rc != 0 or sorted(recap) != sorted(hosts or HOSTS):
            self.fail(f"{playbook} exited {rc}", out)
        return out, recap


@pytest.fixture
def lab(guest_image, prepared_guest, make_guest, tmp_path):
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            missing_real_part(f"the lab test needs {tool}: apt-get install openssh-client")
    if not (BIN / "ansible-playbook").exists():
        missing_real_part(f"the lab test needs ansible-playbook in {BIN}: pip install -e '.[test]'")
    files = _controller_files(tmp_path)
    guests, ports = {}, {}
    for name, hostname in HOSTS.items():
        work = tmp_path / name
        work.mkdir()
        payload = build_payload(work, mode="lab", hostname=hostname, ssh_key=Path(f"{files['key']}.pub"))
        disk = work / "root.ext4"
        copy_disk(prepared_guest.disk, disk)
        ports[name] = _free_port()
        guests[name] = make_guest(guest_image, disk, payload, workdir=work, ssh_port=ports[name], cpus=SOLO_CPUS)
        guests[name].start()
    for name, guest in guests.items():
        guest.wait_booted()
        m = guest.wait_for(r"VMTEST-(SSH-READY|SETUP-FAILED).*", timeout=GUEST_WAIT, quiet=QUIET)
        if "SETUP-FAILED" in m.group(0):
            raise GuestError(f"{name}: the lab guest did not come up", guest)
    inventory = tmp_path / "inventory.ini"
    _inventory(inventory, ports, files, tmp_path / "results")
    return Lab(tmp_path, inventory, guests)


def test_lab_installs_starts_watches_and_collects_two_rebooting_machines(lab):
    out, _ = lab.ok("install.yml", timeout=1800)
    assert out.count("lab.toml: OK, experiment 'lab'") >= len(HOSTS), out[-3000:]
    # the rebuilt wheel replaced the installed coldrun of the same version on both hosts
    reinstall = out.split("TASK [coldrun : Reinstall coldrun when its wheel changed", 1)[1].split("TASK [", 1)[0]
    assert sorted(re.findall(r"^changed: \[(\S+)\]", reinstall, re.MULTILINE)) == sorted(HOSTS), out[-3000:]
    # The re-run on one host: each of its tasks ran on both above, and the role does the same on each (every
    # host's re-run is a TCG guest's ten minutes of emulated Python on a 2-core machine).
    out, recap = lab.ok("install.yml", timeout=1200, hosts=[AGAIN])
    assert {h: r[1] for h, r in recap.items()} == {AGAIN: 0}, out[-3000:]   # changed=0

    out, _ = lab.ok("start.yml", timeout=1200)
    for name in HOSTS:
        assert f"{name}: started lab.toml" in out

    out, _ = lab.ok("watch.yml", timeout=3600)
    boots = EXECUTIONS + 1   # one per execution, then the one that finishes
    for name, guest in lab.guests.items():
        assert f"{name}: finished, {EXECUTIONS}/{EXECUTIONS} executions done, boot {boots}" in out, out[-3000:]
        # Real reboots: the first boot, then every boot coldrun asked for.
        assert guest.serial().count("VMTEST-BOOT ") == 1 + boots
    assert "all 2 hosts finished" in out

    out, recap = lab.ok("collect.yml", timeout=1200)
    results = lab.tmp_path / "results"
    for name, hostname in HOSTS.items():
        bundle = json.loads((results / name / "export.json").read_text())
        assert bundle["audit"]["uname"].split(" ")[1] == hostname
        assert [(j["key"], j["pexec"], j["state"]) for j in bundle["jobs"]] == \
            [("fib:python:default-python", i, "completed") for i in range(EXECUTIONS)]
        assert len([e for e in bundle["executions"] if e["state"] == "completed"]) == EXECUTIONS
    report = (results / "report.txt").read_text()
    assert report.splitlines()[0] == "Machines: bench-a, bench-b", report
    fib = re.split(r"\s{2,}", next(ln for ln in report.splitlines() if ln.startswith("fib ")))
    assert fib[:2] == ["fib", "python"] and len(fib) == 2 + 3 * len(HOSTS), report
    assert "Execution environment:" in report and "Linux bench-a " in report and "Linux bench-b " in report
    assert "Machines: bench-a, bench-b" in out          # the report is printed too
    _, recap = lab.ok("collect.yml", timeout=1200)
    assert {h: r[1] for h, r in recap.items()} == {h: 0 for h in HOSTS}   # nothing new to fetch or write

    # start refuses a host whose experiment has run, and abort is harmless then: on the other host
    rc, out, recap = lab.play("start.yml", timeout=600, hosts=[OTHER])
    assert rc != 0 and {h: r[3] for h, r in recap.items()} == {OTHER: 1}, out[-3000:]
    assert f"{OTHER}: /var/lib/coldrun/lab holds an experiment that is finished" in out

    out, recap = lab.ok("abort.yml", timeout=600, hosts=[OTHER])
    assert out.count("experiment already finished; nothing to abort") == 1
    assert {h: r[1] for h, r in recap.items()} == {OTHER: 0}
