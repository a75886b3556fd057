"""runner.json left by an earlier boot: reconciliation kills the runner it names, and nothing else."""

from __future__ import annotations

import json
import signal

import psutil

from cycle_helpers import boot_quiet, experiment, start_quiet
from process_checks import bystander  # noqa: F401 (a fixture)


def _boot_with_runner_json(tmp_path, runner: dict) -> str:
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    (state / "runner.json").write_text(json.dumps(runner))
    assert boot_quiet(state) == 0
    assert not (state / "runner.json").exists()
    return (state / "log").read_text()


def test_stale_runner_json_with_null_start_time_spares_an_unrelated_group(tmp_path, bystander):
    # The file as a supervisor that could not read the start time left it, its pid now reused.
    log = _boot_with_runner_json(tmp_path, {"pid": bystander.pid, "create_time": None})
    assert f"runner {bystander.pid} not killed: runner.json has no start time" in log
    assert bystander.poll() is None


def test_runner_json_naming_the_live_runner_kills_its_group(tmp_path, bystander):
    created = psutil.Process(bystander.pid).create_time()
    log = _boot_with_runner_json(tmp_path, {"pid": bystander.pid, "create_time": created, "cgroup": None})
    assert f"killed runner process group {bystander.pid}" in log
    assert bystander.wait(timeout=5) == -signal.SIGKILL
