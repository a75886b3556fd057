"""Helpers for the supervisor integration tests: build small experiments in tmp dirs and run coldrun as a user would."""

from __future__ import annotations

import bz2
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from root_runs import runs_as_invoker  # tests/root_runs.py: as root, benchmarks run as you

REPO = Path(__file__).resolve().parents[2]
FAKE_RUNNER = Path(__file__).parent / "runners" / "fake_runner.py"
_spec = importlib.util.spec_from_file_location("fake_runner", FAKE_RUNNER)
_fake = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fake)
OK_SCALE = _fake.OK_SCALE      # the "ok" behaviour's times: (param + pid / 1e9 + i / 1e12) * OK_SCALE


# An experiment's [waits] that wait for nothing: tests measure nothing that settles.
NO_WAITS = "[waits]\nboot_settle = 0\nsync = 0\nbaseline_pause = 0\n"


def coldrun(*args: str, env: dict | None = None, timeout: float = 120, cwd: str | None = None):
    """Run `python -m supervisor ARGS` and return the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.pop("COLDRUN_TEST_PAUSE_AT", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "supervisor", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=cwd or str(REPO))


def config_as_invoker(tmp_path: Path, name: str) -> str:
    """configs/NAME (its benchmarks under configs/demo), or as root a copy whose benchmarks run as root
    (tests/root_runs.py says why)."""
    text = (REPO / "configs" / name).read_text()
    if runs_as_invoker(text) == text:
        return f"configs/{name}"
    p = tmp_path / name
    p.write_text(runs_as_invoker(text.replace('benchmarks_dir = "demo/benchmarks"',
                                              f'benchmarks_dir = "{REPO / "configs" / "demo" / "benchmarks"}"')))
    return str(p)
def one_problem(r, *fragments: str) -> str:
    """The one "problem: " line `coldrun check` printed (exit 1, no traceback), holding every fragment."""
    assert r.returncode == 1, r.stdout + r.stderr
    return _the_one_line(r, r.stdout, "problem: ", fragments)


def one_line_error(r, *fragments: str) -> str:
    """The one "coldrun: " line a failed command printed (no traceback), holding every fragment."""
    assert r.returncode != 0, r.stdout
    return _the_one_line(r, r.stderr, "coldrun: ", fragments)


def _the_one_line(r, text: str, prefix: str, fragments: tuple[str, ...]) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in text.splitlines() if ln.startswith(prefix)]
    assert len(lines) == 1, text
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def pause_env(pause: str | None = None) -> dict:
    """This environment, with COLDRUN_TEST_PAUSE_AT=``pause`` (a crash point, boot/crash_points.py) or without it."""
    env = {k: v for k, v in os.environ.items() if k != "COLDRUN_TEST_PAUSE_AT"}
    if pause:
        env["COLDRUN_TEST_PAUSE_AT"] = pause
    return env


def make_experiment(tmp: Path, behaviours: dict[str, str], *, executions: int | None = 1, iterations: int = 5,
                    extra: str = "", params: dict[str, int] | None = None) -> Path:
    """An experiment whose benchmarks are run by the fake external runner.

    ``behaviours`` maps benchmark name -> behaviour word (see runners/fake_runner.py);
    ``executions=None`` leaves the count out, for a [stop] table in ``extra``.
    """
    for i, (bench, behaviour) in enumerate(behaviours.items()):
        d = tmp / "benchmarks" / bench / "fake"
        d.mkdir(parents=True, exist_ok=True)
        (d / "bench.txt").write_text(behaviour + "\n")
    params = params or {b: 1000 * (i + 1) for i, b in enumerate(behaviours)}
    bench_lines = "\n".join(f"{b} = {params[b]}" for b in behaviours)
    text = textwrap.dedent(f"""\
        name = "t"
        {"" if executions is None else f"executions = {executions}"}
        {extra}

        [waits]
        boot_settle = 0
        sync = 0
        baseline_pause = 0

        [benchmarks]
        """) + bench_lines + textwrap.dedent(f"""

        [variants.fake]
        target = "bench.txt"
        subdir = "fake"

        [vms.fake]
        runner = "external"
        executable = "{sys.executable}"
        args = ["{FAKE_RUNNER}"]
        iterations = {iterations}
        variants = ["fake"]
        """)
    path = tmp / "exp.toml"
    path.write_text(runs_as_invoker(text))
    return path


def native_export(state: Path, tmp_path: Path) -> dict:
    """The state dir's native export, read back."""
    out = tmp_path / "native.json"
    r = coldrun("export", str(state), "--format", "native", "-o", str(out))
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def records_match_schedule(bundle: dict) -> None:
    """One completed record per job, the job's own: key, pexec, iterations, param, and as many times."""
    jobs = {j["index"]: j for j in bundle["jobs"]}
    assert all(j["state"] == "completed" for j in jobs.values()), bundle["jobs"]
    assert len(bundle["executions"]) == len(jobs)
    for rec in bundle["executions"]:
        job = jobs[rec["job_index"]]
        assert (rec["key"], rec["pexec"], rec["iterations"], rec["param"]) == \
            (job["key"], job["pexec"], job["iterations"], job["param"])
        assert len(rec["wallclock_times"]) == job["iterations"]
    for key in {j["key"] for j in jobs.values()}:
        assert sorted(j["pexec"] for j in jobs.values() if j["key"] == key) == \
            list(range(sum(1 for j in jobs.values() if j["key"] == key)))
def run_and_export(tmp: Path, exp: Path) -> tuple[dict, str]:
    """start --simulate-reboots (really re-executing per job), then the native bundle."""
    state = tmp / "state"
    # a bound, not a speed check: a run of every language beside four TCG guests took more than 300 s
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "experiment finished" in r.stderr
    out = tmp / "native.json.bz2"
    e = coldrun("export", str(state), "--format", "native", "-o", str(out))
    assert e.returncode == 0, e.stderr
    return json.loads(bz2.decompress(out.read_bytes())), r.stderr
