"""The Ansible role's fresh install (deploy/ansible install.yml) run for real on this machine.

ansible-playbook (from this venv) drives this machine as a host of the lab,
over the local connection: it stages the working tree's wheel and its
dependencies' wheels, makes a new venv, installs coldrun offline, builds the
runners, copies the experiment and checks it.  A second run changes nothing.
tests/vm/test_lab.py drives two real guests over SSH through the rest of the
night (start, watch, collect, abort) and the upgrade of an installed coldrun;
the fresh install runs here because under an emulated CPU it cost ten
minutes per guest.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from coldrun_helpers import REPO
from real_parts import missing_real_part

sys.path.insert(0, str(REPO / "tests/vm"))
from vm_payload import GUEST_FILES, coldrun_wheel, dependency_wheels  # noqa: E402

ANSIBLE_DIR = REPO / "deploy/ansible"
BIN = Path(sys.executable).parent
RECAP = re.compile(r"^local\s*: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.MULTILINE)


def _play(root: Path, inventory: Path, n: int) -> tuple[str, tuple[int, ...]]:
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(root), "LANG": "C.UTF-8",
           "ANSIBLE_CONFIG": str(ANSIBLE_DIR / "ansible.cfg"), "ANSIBLE_HOME": str(root / "ansible-home"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CALLBACK_RESULT_FORMAT": "json"}
    log = root / f"{n:02d}-install.yml.log"
    with open(log, "w") as f:
        r = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), "install.yml"],
                           cwd=ANSIBLE_DIR, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=900)
    out = log.read_text()
    m = RECAP.search(out)
    assert r.returncode == 0 and m, f"install.yml exited {r.returncode}:\n" + "\n".join(out.splitlines()[-60:])
    return out, tuple(int(x) for x in m.groups())


def test_install_playbook_makes_a_fresh_venv_offline_and_a_second_run_changes_nothing(tmp_path):
    if not (BIN / "ansible-playbook").exists():
        missing_real_part(f"this test needs ansible-playbook in {BIN}: pip install -e '.[test]'")
    wheel = coldrun_wheel(tmp_path / "dist", tmp_path / "wheel-build")
    # Outside pytest's 0700 temporary directory: check runs the benchmark's runner from the venv as the
    # benchmark user, who must reach it, as on a host (/opt, /srv).
    root = Path(tempfile.mkdtemp(prefix="coldrun-ansible-", dir="/var/tmp"))
    root.chmod(0o755)
    try:
        exp = root / "controller-experiment"
        (exp / "benchmarks/fib/python").mkdir(parents=True)
        shutil.copy(GUEST_FILES / "lab.toml", exp / "lab.toml")
        shutil.copy(REPO / "configs/demo/benchmarks/fib/python/bench.py", exp / "benchmarks/fib/python/bench.py")
        inventory = root / "inventory.ini"
        inventory.write_text(f"""[bench]
local ansible_connection=local ansible_python_interpreter={sys.executable}

[bench:vars]
coldrun_wheel={wheel}
coldrun_wheels_dir={dependency_wheels(analysis=False)}
coldrun_experiment_src={exp}
coldrun_experiment_file=lab.toml
coldrun_python={shutil.which("python3", path="/usr/bin:/bin")}
coldrun_venv={root}/venv
coldrun_stage_dir={root}/stage
coldrun_experiment_dir={root}/srv/lab
coldrun_state_dir={root}/state
coldrun_pip_args=["--no-compile"]
""")
        out, (ok, changed, unreachable, failed) = _play(root, inventory, 1)
        assert "lab.toml: OK, experiment 'lab'" in out, out[-3000:]
        assert changed >= 5 and unreachable == failed == 0, out[-3000:]
        install = out.split("TASK [coldrun : Install coldrun into the venv]", 1)[1].split("TASK [", 1)[0]
        assert "changed: [local]" in install, out[-3000:]       # pip said "Successfully installed"
        venv_python = root / "venv/bin/python"
        r = subprocess.run([str(venv_python), "-c", "import supervisor, sys; print(supervisor.__file__, sys.prefix)"],
                           capture_output=True, text=True, check=True, cwd=root)
        assert r.stdout.startswith(str(root / "venv/lib")), r.stdout   # the installed wheel, not this checkout
        assert (root / "srv/lab/benchmarks/fib/python/bench.py").read_text() == \
            (exp / "benchmarks/fib/python/bench.py").read_text()
        out, (ok, changed, unreachable, failed) = _play(root, inventory, 2)
        assert (changed, unreachable, failed) == (0, 0, 0), out[-3000:]
    finally:
        shutil.rmtree(root, ignore_errors=True)
