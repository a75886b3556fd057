from supervisor.experiment.plan import JobSpec
from supervisor.state.schedule import COMPLETED, Schedule, render_new
from supervisor.views.status import estimate_remaining


def test_eta_is_per_key_mean_times_outstanding(tmp_path):
    jobs = [JobSpec("a:v:x", 0, False, 1, 0), JobSpec("b:v:x", 0, False, 1, 0), JobSpec("a:v:x", 1, False, 1, 0),
            JobSpec("b:v:x", 1, False, 1, 0), JobSpec("c:v:x", 0, True, 1, 0)]
    path = tmp_path / "schedule"
    Schedule.create(path, render_new(jobs, experiment_sha256="0" * 64, mode="simulated", order="round-robin",
                                     seed=0, baselines={}))
    s = Schedule.load(path)
    s.set_job(s.jobs[0], COMPLETED, 1)
    s.set_job(s.jobs[1], COMPLETED, 1)
    # unknown until every outstanding key has a sample
    assert estimate_remaining(s, {"a:v:x": [10.0]}, 0.0) is None
    eta = estimate_remaining(s, {"a:v:x": [10.0, 20.0], "b:v:x": [4.0]}, overhead=1.0)
    assert eta == (15.0 + 1.0) + (4.0 + 1.0)
