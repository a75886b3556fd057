"""Results of a lab (issue 16): several machines' exports in one `table` call,
kept apart by machine, the same key side by side, environments compared.

The exports are made here: small coldrun native bundles as `coldrun export`
writes them, one per machine, laid out as the collect playbook lays them out
(results/<inventory host>/export.json).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from analysis.cli import main
from analysis.machines import distinct_machines

ITERATIONS = 40
FIB, NBODY = "fib:CPython:default-python", "nbody:CPython:default-python"


def _times(rng, warm: bool, level: float) -> list[float]:
    return [float((2 * level if warm and i < 8 else level) + rng.normal(0, level / 1000))
            for i in range(ITERATIONS)]


def export(host: str, kernel: str, keys: dict[str, list[str]], seed: int, level: float = 1.0,
           cpu: str = "Xeon") -> dict:
    """A native export from ``host``: per key, one state per process execution."""
    rng = np.random.default_rng(seed)
    executions, jobs = [], []
    for key, slot_states in keys.items():
        bench, vm, variant = key.split(":")
        for pexec, state in enumerate(slot_states):
            times = _times(rng, bench == "fib", level) if state == "completed" else []
            executions.append({"record_version": 1, "supervisor_version": "1.0", "key": key, "bench": bench,
                               "vm": vm, "variant": variant, "pexec": pexec, "state": state,
                               "wallclock_times": times, "started_at": 1.7e9 + 60 * len(jobs),
                               "ended_at": 1.7e9 + 60 * len(jobs) + 30, "containment": "cgroup",
                               "exit_code": 0 if state == "completed" else 1, "stderr_tail": ""})
            jobs.append({"index": len(jobs), "key": key, "pexec": pexec, "state": state, "attempts": 1})
    return {"format": "coldrun-native", "format_version": 1, "jobs": jobs, "executions": executions,
            "audit": {"uname": f"Linux {host} {kernel} #1 SMP x86_64", "cpu": cpu,
                      "volatile": {"boot_id": f"boot-{seed}"}},
            "experiment": {"name": "lab", "text": 'name = "lab"\n'}}


def write(root: Path, inventory_host: str, doc: dict) -> Path:
    path = root / "results" / inventory_host / "export.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    return path


def table(paths: list[Path], capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["table", *map(str, paths), "--quality", "low", "--window", "4", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


@pytest.fixture
def two_machines(tmp_path) -> list[Path]:
    keys = {FIB: ["completed"] * 3, NBODY: ["completed", "completed", "errored"]}
    return [write(tmp_path, "lab-a", export("bench1", "6.1.0-18-amd64", keys, 1, level=1.0)),
            write(tmp_path, "lab-b", export("bench2", "6.5.0-1-amd64", keys, 2, level=3.0, cpu="EPYC"))]


def test_same_key_on_two_machines_reads_across_one_line(two_machines, capsys):
    code, out, err = table(two_machines, capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Machines: bench1, bench2"
    group_line = next(ln for ln in lines if ln.lstrip().startswith("bench1"))
    assert group_line.index("bench1") < group_line.index("bench2")
    fib = cells(next(ln for ln in lines if ln.startswith("fib ")))
    # Benchmark, VM, then (class, steady iter, steady perf) for each machine, in machine order.
    assert fib[:2] == ["fib", "CPython"] and len(fib) == 8
    assert fib[2] == fib[5] == "warmup"
    perf_a, perf_b = (float(c.split("±")[0].strip().split()[0]) for c in (fib[4], fib[7]))
    assert perf_a == pytest.approx(1.0, rel=0.05) and perf_b == pytest.approx(3.0, rel=0.05)


def test_each_machine_keeps_its_own_failed_executions(two_machines, capsys):
    code, out, _ = table(two_machines, capsys)
    assert code == 0
    for machine in ("bench1", "bench2"):
        assert f"{machine}: 1 process execution(s) without data, not classified: 1 errored (no data)." in out
    # per machine: its class cell, its summary line and its row (#3)
    assert out.count("errored (no data)") == 6


def test_environments_are_compared_across_machines(two_machines, capsys):
    code, out, _ = table(two_machines, capsys)
    assert code == 0
    assert "Execution environment: 2 entries differ between bench1, bench2" in out
    rows = {c[0]: c[1:] for c in map(cells, out.splitlines()) if c and c[0] in ("uname", "audit cpu")}
    assert rows["uname"] == ["Linux bench1 6.1.0-18-amd64 #1 SMP x86_64", "Linux bench2 6.5.0-1-amd64 #1 SMP x86_64"]
    assert rows["audit cpu"] == ["Xeon", "EPYC"]
    same = next(ln for ln in out.splitlines() if ln.startswith("Same on every machine: "))
    assert "experiment" in same and "supervisor version" in same and "uname" not in same
    assert "volatile" not in out   # differs at every boot: not a difference between machines


def test_cloned_hosts_with_one_hostname_are_told_apart_by_directory(tmp_path, capsys):
    keys = {FIB: ["completed"] * 3}
    paths = [write(tmp_path, "lab-a", export("coldrun-vm", "6.1", keys, 1, level=1.0)),
             write(tmp_path, "lab-b", export("coldrun-vm", "6.1", keys, 2, level=2.0))]
    code, out, err = table(paths, capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "Machines: coldrun-vm@lab-a, coldrun-vm@lab-b"
    assert "told apart by directory as coldrun-vm@lab-a, coldrun-vm@lab-b" in err
    fib = cells(next(ln for ln in out.splitlines() if ln.startswith("fib ")))
    assert float(fib[4].split()[0]) == pytest.approx(1.0, rel=0.05)
    assert float(fib[7].split()[0]) == pytest.approx(2.0, rel=0.05)


def test_one_machine_split_over_two_files_stays_one_machine(tmp_path, capsys):
    paths = [write(tmp_path, "part1", export("bench1", "6.1", {FIB: ["completed"] * 3}, 1)),
             write(tmp_path, "part2", export("bench1", "6.1", {NBODY: ["completed"] * 3}, 2))]
    code, out, err = table(paths, capsys)
    assert code == 0, err
    assert "Machine: bench1" in out and "Machines:" not in out and "told apart" not in err


def test_same_hostname_and_same_directory_name_is_one_clear_error(tmp_path, capsys):
    keys = {FIB: ["completed"] * 3}
    paths = [write(tmp_path / "x", "lab-a", export("clone", "6.1", keys, 1)),
             write(tmp_path / "y", "lab-a", export("clone", "6.1", keys, 2))]
    code, out, err = table(paths, capsys)
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "fib on CPython (clone) is also in" in line and "Traceback" not in err


def test_sections_layout_keeps_a_table_per_machine(two_machines, capsys):
    code, out, _ = table(two_machines, capsys, "--layout", "sections")
    assert code == 0
    assert "Machine: bench1" in out and "Machine: bench2" in out and "Execution environment" not in out


def test_distinct_machines_renames_failed_executions_too(tmp_path):
    def summary(bench_state: str) -> dict:
        return {"machines": {"vm1": {"CPython": {"fib": {"classification": "flat"}}}},
                "failed_process_executions": {"vm1": {"CPython": {"nbody": [{"index": 0, "state": bench_state}]}}}}
    a, b = tmp_path / "a" / "s.json", tmp_path / "b" / "s.json"
    warnings: list[str] = []
    renamed, renames = distinct_machines([(a, summary("errored")), (b, summary("crashed"))], warnings.append)
    assert renames == [{"vm1": "vm1@a"}, {"vm1": "vm1@b"}]
    assert list(renamed[0][1]["failed_process_executions"]) == ["vm1@a"]
    assert renamed[1][1]["failed_process_executions"]["vm1@b"]["CPython"]["nbody"][0]["state"] == "crashed"
    assert len(warnings) == 1
