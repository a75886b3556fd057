"""The progress bar follows a long key from inside it (issue 26 item 20): one execution of many iterations
was one key, so the bar stood at 0 until the quadratic changepoint search ended (hours at a million)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis import pipeline


def _results(keys: dict[str, int]) -> dict:
    rng = np.random.default_rng(20)
    return {"wallclock_times": {k: [list(1.0 + 0.01 * rng.standard_normal(n))] for k, n in keys.items()},
            "pexec_flags": {k: ["C"] for k in keys}, "audit": {"uname": "Linux m 6.1"}}


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_bar_says_how_far_the_changepoint_search_is(capsys, jobs):
    # Long enough that the search, which now leaves most candidates out, lasts several of the bar's ticks.
    big = 400_000
    keys = {"big:vm:v": big, "small:vm:v": 50} if jobs > 1 else {"big:vm:v": big}
    results = _results(keys)
    typed = pipeline.analyse(results, pipeline.classifier_for(results), jobs=jobs, progress=True,
                             warn=lambda m: None)
    assert set(typed.annotations) == set(keys)
    frames = capsys.readouterr().err.split("\r")    # progress=True draws even off a terminal
    steps = [int(f.split("changepoints at ")[1].split("/")[0].replace(",", "")) for f in frames
             if "big:vm:v: execution 1/1, changepoints at " in f]
    assert steps and 0 < max(steps) < big, frames[-5:]
    assert steps == sorted(steps)
    assert frames[-1].startswith("annotate: [" + "#" * 30 + "]")
