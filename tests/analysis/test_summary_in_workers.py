"""``summary`` bootstraps each key in its annotate worker (pipeline.analyse with summary
settings): the summary and its warnings must be exactly those of annotating first and
summarising after."""

from __future__ import annotations

import json
import numpy as np
import pytest

from analysis import pipeline, summary, summary_json
from analysis.key_results import SummarySettings

UNAME = "Linux rig1.example.org 6.1.0 #1 SMP x86_64"


def _results() -> dict:
    """Warm-up, flat and slowdown keys, failed and too-short executions, one key that cannot be classified."""
    rng = np.random.default_rng(11)

    def series(first: float, rest: float, n: int = 120) -> list[float]:
        return [float((first if i < 15 else rest) + rng.normal(0, 0.002)) for i in range(n)]

    return {
        "wallclock_times": {
            "fib:PyPy:default-python": [series(2.0, 1.0), [], series(2.0, 1.0), series(1.0, 1.0)],
            "nbody:PyPy:default-python": [series(1.0, 1.0), series(1.0, 1.0), [0.5, 0.5]],
            "slow:CPython:default-python": [series(1.0, 1.5), series(1.0, 1.5)],
            "gone:CPython:default-python": [[], []],
        },
        "pexec_flags": {
            "fib:PyPy:default-python": ["C", "E", "C", "C"],
            "nbody:PyPy:default-python": ["C", "C", "C"],
            "slow:CPython:default-python": ["C", "C"],
            "gone:CPython:default-python": ["E", "T"],
        },
        "audit": {"uname": UNAME},
    }


def _after_annotating(jobs: int) -> tuple[dict, list[str]]:
    said: list[str] = []
    annotated = pipeline.annotate(_results(), jobs=jobs, warn=said.append)
    return summary.summarise({"rig1": annotated}, resamples=2000, seed=3, jobs=jobs, warn=said.append), said


def _in_workers(jobs: int) -> tuple[dict, list[str]]:
    said: list[str] = []
    settings = SummarySettings(2000, 3, "0.99")
    results = _results()
    analysed = pipeline.analyse(results, pipeline.classifier_for(results), summarise=settings, machine="rig1",
                                jobs=jobs, warn=said.append)
    assert set(analysed.summaries) == set(results["wallclock_times"])  # every key summarised in its worker
    done = summary.summarise_annotated({"rig1": analysed}, settings, jobs=jobs, warn=said.append)
    return summary_json.summary_document(done), said


@pytest.mark.parametrize("jobs", [1, 2])
def test_same_summary_and_warnings_as_summarising_after(jobs):
    before, said_before = _after_annotating(jobs)
    after, said_after = _in_workers(jobs)
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)
    assert said_after == said_before
    benches = after["machines"]["rig1"]
    assert benches["PyPy"]["fib"]["steady_state_time"] is not None  # bootstrapped in the worker
    assert any("not classified" in line or "skipping" in line for line in said_after)


def test_finished_keys_start_no_workers(monkeypatch):
    tasks_seen: list[list] = []
    real = summary.run_parallel
    monkeypatch.setattr(summary, "run_parallel", lambda func, tasks, *a, **k: tasks_seen.append(tasks) or real(
        func, tasks, *a, **k))
    _in_workers(2)
    assert tasks_seen == [[]]
    _after_annotating(1)
    assert len(tasks_seen[1]) == 3  # fib, nbody and slow have steady states to bootstrap
