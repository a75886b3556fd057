"""The [duet] table: pairs of existing keys, refused with one line naming file and pair otherwise; its jobs."""

from __future__ import annotations

import io
import os

import pytest

from cycle_helpers import ScriptedPlatform
from doubles import FakeMachine
from pair_experiments import pair_experiment
from supervisor.boot.lifecycle import start
from supervisor.boot.prepare import prepare
from supervisor.errors import ColdrunError
from supervisor.system import SystemRoot
from contracts.keys import pair_sides
from supervisor.kinds.duet.table import Duet, OneCpu, pair_cpus, side_cpus, start_order
from supervisor.experiment.model import load_experiment
from supervisor.boot.kinds import kind_for
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.factory import HARDWARE, SIMULATED, Machine


def _refusal(path) -> str:
    with pytest.raises(ColdrunError) as e:
        load_experiment(path)
    return str(e.value)


def test_pairs_expand_to_one_job_per_pair_execution_a_over_b(tmp_path):
    exp, _ = load_experiment(pair_experiment(tmp_path, [("ok", "ok"), ("ok", "slow")], executions=3))
    jobs = kind_for(exp).plan(7)
    assert [j.key for j in jobs] == ["b:py:ok/b:py:ok", "b:py:ok/b:py:slow"] * 3
    assert [j.pexec for j in jobs] == [0, 0, 1, 1, 2, 2]
    assert pair_sides(jobs[1].key) == ("b:py:ok", "b:py:slow")
    assert pair_sides("b:py:ok") is None
    assert all(j.iterations == 5 for j in jobs)


def test_a_pair_naming_an_unknown_key_is_one_line_naming_the_file_and_the_pair(tmp_path):
    path = pair_experiment(tmp_path, [("ok", "ok")])
    path.write_text(path.read_text().replace('b = "b:py:ok" }', 'b = "b:py:nosuch" }'))
    msg = _refusal(path)
    assert msg.count("\n") == 0, msg
    assert msg.startswith(f"{path}: duet.pairs.0: names 'b:py:nosuch', which is not a bench:vm:variant key")


def test_sides_with_different_iteration_counts_are_refused(tmp_path):
    path = pair_experiment(tmp_path, [("ok", "b:py2:ok")], py2_iterations=6)
    msg = _refusal(path)
    assert msg == (f"{path}: duet.pairs.0: its sides run 5 and 6 iterations; a pair meets before every "
                   f"iteration, so both VMs need the same iterations")


def test_duet_with_a_run_length_target_is_refused(tmp_path):
    path = pair_experiment(tmp_path, [("ok", "ok")])
    path.write_text(path.read_text().replace("executions = 1\n", "", 1) + "\n[stop]\nci_percent = 0.05\n")
    assert "[duet] runs a fixed number of pair executions" in _refusal(path)


def test_spin_and_barrier_default_to_a_spinning_barrier_and_bad_values_are_one_line(tmp_path):
    exp, _ = load_experiment(pair_experiment(tmp_path, [("ok", "ok")]))
    assert (exp.duet.spin_us, exp.duet.barrier) == (100, True)
    for bad, says in (("spin_us = -1", "greater than or equal to 0"), ("spin_us = 1000001", "less than or equal to 1000000"),
                      ("spin_us = 2.5", "must be an integer"), ('barrier = "no"', "duet.barrier")):
        path = pair_experiment(tmp_path / bad.split()[0] / str(len(says)), [("ok", "ok")], duet_extra=bad)
        msg = _refusal(path)
        assert msg.count("\n") == 0 and msg.startswith(f"{path}: duet.") and says in msg, msg
    exp, _ = load_experiment(pair_experiment(tmp_path / "off", [("ok", "ok")], duet_extra="barrier = false\nspin_us = 0"))
    assert (exp.duet.spin_us, exp.duet.barrier) == (0, False)


def test_start_order_is_seeded_per_job_and_attempt_and_takes_both_orders():
    orders = [start_order(42, i, 1) for i in range(40)]
    assert orders == [start_order(42, i, 1) for i in range(40)]
    assert set(orders) == {"AB", "BA"}
    assert [start_order(43, i, 1) for i in range(40)] != orders


def test_which_side_gets_which_cpu_is_drawn_per_pair_execution():
    draws = [side_cpus((2, 3), 42, i, 1) for i in range(40)]
    assert set(draws) == {(2, 3), (3, 2)} and draws == [side_cpus((2, 3), 42, i, 1) for i in range(40)]


def test_pair_cpus_need_two_distinct_usable_cpus():
    assert pair_cpus(Duet(pairs=[{"a": "x:y:z", "b": "x:y:z"}]), [3, 5, 7]) == (3, 5)
    with pytest.raises(OneCpu, match="gives coldrun 1 CPU .0.; a pair runs its two sides at once"):
        pair_cpus(Duet(pairs=[{"a": "x:y:z", "b": "x:y:z"}]), [0])
    with pytest.raises(OneCpu, match="CPU 9 is not one coldrun may use"):
        pair_cpus(Duet(pairs=[{"a": "x:y:z", "b": "x:y:z"}], cpus=[0, 9]), [0, 1])


def test_single_cpu_machine_is_refused_before_anything_is_created(tmp_path):
    exp = pair_experiment(tmp_path, [("ok", "ok")])
    with pytest.raises(ColdrunError) as e:
        prepare(str(exp), machine=Machine(affinity=lambda: [0]), simulate=True)
    assert str(e.value) == (f"{exp}: duet: this machine gives coldrun 1 CPU (0); a pair runs its two sides at "
                            f"once, one per CPU, so it needs at least 2")
    machine = FakeMachine(ScriptedPlatform())
    machine.affinity = lambda: [0]
    state = tmp_path / "state"
    with pytest.raises(ColdrunError, match="needs at least 2"):
        start(str(exp), str(state), simulate=True, stderr=io.StringIO(), machine=machine)
    assert not os.path.exists(state)


def test_pair_cpus_default_to_the_pinning_partitions_on_hardware_and_to_the_supervisors_otherwise(tmp_path):
    root = tmp_path / "root"
    (root / "sys/devices/system/cpu").mkdir(parents=True)
    (root / "sys/devices/system/cpu/online").write_text("0-3\n")
    machine = Machine(root=SystemRoot(str(root)), affinity=lambda: [0, 1])
    # the partition takes its CPUs from every other cgroup, the supervisor's included: not its affinity
    assert machine.cpus(HARDWARE, PlatformPolicy(pinning=True)) == [1, 2, 3]
    assert machine.cpus(HARDWARE, PlatformPolicy(pinning=True, benchmark_cpus="2,3")) == [2, 3]
    assert machine.cpus(HARDWARE, PlatformPolicy(pinning=False)) == [0, 1]
    assert machine.cpus(SIMULATED, PlatformPolicy(pinning=True)) == [0, 1]
    duet = Duet(pairs=[{"a": "x:y:z", "b": "x:y:z"}])
    assert pair_cpus(duet, machine.cpus(HARDWARE, PlatformPolicy(pinning=True, benchmark_cpus="2,3"))) == (2, 3)


def test_a_side_in_a_pinning_partition_gets_taskset_after_the_wrappers_that_move_it():
    from supervisor.kinds.duet.execution import side_prefix
    from supervisor.platforms.base import LaunchPrefix
    plain = LaunchPrefix(["nice", "-n", "-20"])
    assert side_prefix(plain, 1) is plain
    pinned = LaunchPrefix(["cgexec-wrapper", "--", "setpriv", "--"], {"HOME": "/h"}, cgroup="/sys/fs/cgroup/x", user="u")
    side = side_prefix(pinned, 1)
    assert side.argv() == ["cgexec-wrapper", "--", "setpriv", "--", "taskset", "--cpu-list", "1",
                           "env", "HOME=/h"]
    assert (side.cgroup, side.user) == (pinned.cgroup, "u") and pinned.wrappers[-1] == "--"


def test_the_taskset_wrapper_really_pins_what_it_runs():
    import shutil
    import subprocess
    from supervisor.kinds.duet.execution import side_prefix
    from supervisor.platforms.base import LaunchPrefix
    if shutil.which("taskset") is None:
        pytest.fail("taskset (util-linux) is not installed; pair executions in a pinning partition need it")
    cpu = max(os.sched_getaffinity(0))
    argv = side_prefix(LaunchPrefix([], cgroup="/x"), cpu).argv() + ["grep", "Cpus_allowed_list", "/proc/self/status"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert out.split()[-1] == str(cpu)
