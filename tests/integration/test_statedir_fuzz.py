"""Fuzzing a finished state dir: random truncation, garbage, deletion, replacement by a directory or a symlink of
each file, then `coldrun status`, `export` and `resume` as a user would run them.

Every command: no traceback; when it refuses, one line names the damaged file.
Damage to the results (schedule, experiment copy, records) is refused
(non-zero exit) whenever coldrun's own rules can see it; the metadata resume
needs (meta.json) is refused by resume when it no longer parses.  No record
intact before is lost or changed.

What the rules cannot see, and the fuzzer therefore lets pass (counted as
hypothesis events): garbage that leaves a record a JSON object with the same
key, pexec and outcome (records carry no checksum), and garbage that leaves
the schedule well-formed and consistent with the records (its mutable fields,
boots or temperatures, are updated in place and carry no checksum either).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from coldrun_helpers import coldrun, make_experiment
from supervisor.errors import ColdrunError
from supervisor.state.outcome import (EXIT_ABORTED, EXIT_CLEAN, EXIT_FAILURES, EXIT_RUNNING, EXIT_STOPPED,
                                      EXIT_UNCONVERGED)
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir
from supervisor.state.verify import verify_records

EXAMPLES = int(os.environ.get("COLDRUN_FUZZ_EXAMPLES", "30"))
# The examples in independent shards (each its own random examples), so xdist workers share them.
SHARDS = 3
DAMAGES = ("truncate", "garbage", "delete", "directory", "symlink", "json_list")
# A file whose damage each command must refuse.  The log, lock and audit are
# diagnostics or hints (a damaged one is tolerated, never a traceback), except
# that a symlink or directory in place of any state-dir file is always refused.
# status's exit codes for how the experiment stands (supervisor/state/outcome.py)
STANDING = {EXIT_CLEAN, EXIT_STOPPED, EXIT_FAILURES, EXIT_ABORTED, EXIT_RUNNING, EXIT_UNCONVERGED}
MUST_REFUSE = {"schedule": {"status", "export", "resume"}, "experiment.toml": {"status", "export", "resume"},
               "record": {"status", "export", "resume"}, "meta.json": {"resume"}}


@pytest.fixture(scope="session")
def template(tmp_path_factory) -> Path:
    """A finished 4-job experiment, set back to running: resume then verifies and finishes without running.
    (Session scope: each xdist worker that runs a shard makes its own, once.)"""
    tmp = tmp_path_factory.mktemp("fuzz-template")
    exp = make_experiment(tmp, {"a": "ok", "b": "ok"}, executions=2, iterations=3)
    state = tmp / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=300)
    assert r.returncode == 0, r.stderr
    sched = Schedule.load(state / "schedule")
    assert sched.status == "finished" and len(list((state / "executions").iterdir())) == 4
    sched.set_status("running")
    return state


def records(state: Path) -> dict[str, bytes]:
    out = {}
    d = state / "executions"
    if d.is_dir() and not d.is_symlink():
        for p in d.iterdir():
            if p.is_file() and not p.is_symlink():
                out[p.name] = p.read_bytes()
    return out


def damage(path: Path, how: str, data: st.DataObject, elsewhere: Path) -> None:
    original = path.read_bytes()
    if how == "truncate":
        path.write_bytes(original[:data.draw(st.integers(0, max(0, len(original) - 1)), label="keep bytes")])
    elif how == "garbage":
        junk = data.draw(st.binary(min_size=1, max_size=64), label="garbage")
        at = data.draw(st.integers(0, len(original)), label="at")
        path.write_bytes(original[:at] + junk + original[at + len(junk):])
        if path.read_bytes() == original:       # the garbage happened to equal what was there
            path.write_bytes(original + b"\0")
    elif how == "delete":
        path.unlink()
    elif how == "directory":
        path.unlink()
        path.mkdir()
    elif how == "symlink":
        target = elsewhere / "target"
        target.write_bytes(original)         # same content: only the symlink itself is wrong
        path.unlink()
        path.symlink_to(target)
    elif how == "json_list":
        path.write_bytes(b"[1,2,3]")


def invisible(state: Path, kind: str, original: bytes, damaged_path: Path) -> bool:
    """Whether garbage left the file consistent by every rule coldrun has (see the module doc)."""
    if kind == "record":
        try:
            new, old = json.loads(damaged_path.read_bytes()), json.loads(original)
        except ValueError:
            return False
        return isinstance(new, dict) and all(new.get(k) == old.get(k) for k in ("key", "pexec", "outcome"))
    if kind == "schedule":
        try:
            return verify_records(StateDir(state), Schedule.load(state / "schedule")) == []
        except ColdrunError:
            return False
    if kind == "meta.json":
        try:
            StateDir(state).meta()
            return True
        except ColdrunError:
            return False
    return False


def one_line_names(output: str, name: str) -> bool:
    return any(name in line for line in output.splitlines())


@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=max(1, EXAMPLES // SHARDS), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_state_file_is_one_line_and_loses_no_record(template, tmp_path_factory, shard, data):
    work = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    state = work / "state"
    shutil.copytree(template, state, symlinks=True)
    names = sorted(records(state))
    choices = ["schedule", "experiment.toml", "meta.json", "audit.json", "log", "lock"] + [
        f"executions/{n}" for n in names]
    target = data.draw(st.sampled_from(choices), label="file")
    how = data.draw(st.sampled_from(DAMAGES), label="damage")
    intact = records(state)
    original = (state / target).read_bytes()
    damage(state / target, how, data, work)
    kind = "record" if target.startswith("executions/") else target
    unseen = how == "garbage" and invisible(state, kind, original, state / target)
    event(f"{how} of {kind}")
    if unseen:
        event(f"garbage coldrun cannot see in {kind}")
    intact.pop(Path(target).name, None)
    name = Path(target).name

    results = {"status": coldrun("status", str(state)), "status --json": coldrun("status", str(state), "--json"),
               "export": coldrun("export", str(state), "--format", "native", "-o", str(work / "out.json")),
               "resume": coldrun("resume", str(state), timeout=120)}
    as_json = results["status --json"]
    assert as_json.returncode == results["status"].returncode, f"status and --json disagree after {how} of {target}"
    assert bool(as_json.stdout) == bool(results["status"].stdout)
    if as_json.stdout:
        assert json.loads(as_json.stdout)["format"] == "coldrun-status"
    for name_and_flags, r in results.items():
        cmd = name_and_flags.split()[0]
        both = r.stdout + r.stderr
        assert "Traceback" not in both, f"{name_and_flags} after {how} of {target}:\n{both}"
        refuse = (cmd in MUST_REFUSE.get(kind, set()) and not unseen) or how in ("directory", "symlink")
        if refuse:
            assert r.returncode != 0, f"{cmd} accepted {how} of {target}:\n{both}"
        standing = cmd == "status" and r.returncode in STANDING   # status's answer, not a refusal
        if r.returncode != 0 and not standing:
            assert one_line_names(both, name), f"{cmd} refused {how} of {target} without naming it:\n{both}"
            errors = [line for line in r.stderr.splitlines() if line.startswith("coldrun:")]
            assert len(errors) <= 1, f"{cmd}: more than one error line:\n{r.stderr}"
    after = records(state)
    assert {n: after.get(n) for n in intact} == intact, f"a record changed after {how} of {target}"
    shutil.rmtree(work)
