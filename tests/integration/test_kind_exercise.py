"""A new kind of experiment written as an exercise: an A/A control job after every tenth job.

It is this module and one ``register`` call, nothing else: the boot loop,
check, status and export ask the kind and never which kind it is (issue 22,
DESIGN.md "Kinds of experiment").  The control re-runs the tenth job's key, so
a later analysis can compare two executions that should not differ.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from cycle_helpers import ScriptedPlatform, experiment, run_to_end, start_quiet
from supervisor import cli
from supervisor.boot import kinds
from supervisor.boot.kinds import Plain
from supervisor.experiment.model import load_experiment
from supervisor.experiment.plan import JobSpec, in_order
from supervisor.views.export import native_bundle
from supervisor.views.status import status_report
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir

EVERY = 10


class AAControl(Plain):
    name = "aa-control"

    def plan(self, seed):
        jobs = []
        for n, job in enumerate(super().plan(seed), 1):
            jobs.append(job)
            if n % EVERY == 0 and not job.skipped:    # the control: the same key once more, straight after
                jobs.append(JobSpec(job.key, -1, False, job.iterations, job.param))
        # Each key's executions numbered in the order they run (the controls included).
        return in_order((j.key, j.skipped, j.iterations, j.param) for j in jobs)

    def controls(self, n_jobs: int) -> list[int]:
        """Job indices of the controls: each follows a tenth job of the plain plan."""
        return [i for i in range(n_jobs) if (i + 1) % (EVERY + 1) == 0]

    def setup_lines(self):
        return [f"A/A control: the key of every {EVERY}th job runs once more straight after it"]

    def export_parts(self, state_path, schedule):
        return {"aa_controls": self.controls(len(schedule.jobs))}, {}


@pytest.fixture
def aa_kind(monkeypatch):
    monkeypatch.setattr(kinds, "_KINDS", list(kinds._KINDS))     # this test's registration goes with it
    kinds.register(AAControl, lambda exp: exp.name == "aa")


def _aa_experiment(tmp_path: Path) -> Path:
    exp = experiment(tmp_path, {"a": "ok", "b": "ok", "c": "ok", "d": "ok", "e": "ok"}, executions=2)
    exp.write_text(exp.read_text().replace('name = "unit"', 'name = "aa"'))
    return exp


def test_a_new_kind_plans_runs_checks_and_exports_through_its_own_module(tmp_path, aa_kind):
    exp = _aa_experiment(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["check", str(exp)]) == 0
    assert "A/A control: the key of every 10th job runs once more straight after it" in out.getvalue()
    assert "schedule (11 jobs, 11 to run)" in out.getvalue()       # 10 jobs and a control

    state = tmp_path / "s"
    start_quiet(exp, state)
    jobs = Schedule.load(state / "schedule").jobs
    assert [(j.key, j.pexec) for j in jobs][9:] == [("e:fake:v", 1), ("e:fake:v", 2)]   # the 10th job, its control
    assert run_to_end(state, ScriptedPlatform()) == 0

    report = status_report(str(state))
    assert (report.done, report.total, report.run_length, report.pairs) == (11, 11, None, None)
    bundle = native_bundle(StateDir(state))
    assert bundle["aa_controls"] == [10]
    control = bundle["executions"][10]
    assert control["key"] == "e:fake:v" and control["pexec"] == 2 and control["state"] == "completed"


def test_without_the_registration_the_same_file_is_a_plain_experiment(tmp_path):
    exp = _aa_experiment(tmp_path)
    assert type(kinds.kind_for(load_experiment(str(exp))[0])) is Plain
