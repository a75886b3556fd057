"""Pilot's own unit-reading sessions (../shared/golden/pilot/golden_session_*.jsonl) against the
production functions that reproduce parts of them: the EDM warm-up removal of a long round
(``edm.dominant_segment``, what ``stopping``'s "pilot" estimate keeps) and the final statistics of
the kept unit readings (``subsession.analyse_sample``). Pilot's round scheduling itself is not
reproduced: ``stopping`` adapts its rule across process executions (tested in test_pilot_stopping)."""

from __future__ import annotations

import pytest

from analysis.pilot import edm
from analysis.pilot import subsession as ss
from pilot_golden import Checks, rows, session_mock

SESSION_FILES = ("golden_session_original.jsonl", "golden_session_fork.jsonl")
# Per file: 5 scenarios x 7 results.
SESSION_CHECKS = 5 * 7
# Pilot rejects a whole round shorter than this (short_round_detection_threshold_), before any EDM.
SECOND_NS = 1_000_000_000


def replay(r: dict) -> list[tuple[list[float], int, dict]]:
    """Each recorded round's unit readings from the golden's own mock workload, with its duration."""
    mock = session_mock().Mock()
    out = []
    for rd in r["rounds"]:
        urs, _reading, duration = mock.round(rd["work_amount"])
        assert (duration, len(urs)) == (rd["duration_ns"], rd["num_urs"])
        out.append((urs, duration, rd))
    return out


@pytest.mark.parametrize("filename", SESSION_FILES)
def test_session_statistics(filename):
    """The kept unit readings (Pilot's recorded warm-up lengths dropped) analysed as Pilot did."""
    c = Checks()
    scenarios = rows(filename)
    assert len(scenarios) == 5
    for r in scenarios:
        kept = [u for urs, _duration, rd in replay(r) for u in urs[rd["warm_up_len"]:]]
        a = ss.analyse_sample(kept, ci_percent=r["ci_perc"], min_samples=r["min_sample_size"])
        label = r["label"]
        c.equal(f"{label} ur_num", a.n, r["ur_num"])
        c.near(f"{label} ur_mean", a.mean, r["ur_mean"])
        c.near(f"{label} ur_var", a.var, r["ur_var"])
        c.near(f"{label} ur_autocorr", a.autocorr, r["ur_autocorr"])
        c.equal(f"{label} ur_q", a.q, r["ur_q"])
        c.near(f"{label} ur_ci_width", a.ci_width, r["ur_ci_width"])
        c.equal(f"{label} ur_required_sample_size", a.required, r["ur_required_sample_size"])
    print(f"{filename}: {c.count} checks compared, {c.count - len(c.failures)} passed")
    assert not c.failures, "\n".join(c.failures)
    assert c.count == SESSION_CHECKS


@pytest.mark.parametrize("filename", SESSION_FILES)
def test_edm_warm_up_of_long_rounds(filename):
    """Every long EDM round keeps exactly Pilot's dominant segment: its recorded warm-up length to the end."""
    compared = 0
    for r in rows(filename):
        if r["warm_up_method"] != "EDM":
            continue
        for urs, duration, rd in replay(r):
            if duration < r["short_round_threshold_s"] * SECOND_NS:
                assert rd["warm_up_len"] == rd["num_urs"]  # rejected whole, as Pilot does
                continue
            assert edm.dominant_segment(urs) == (rd["warm_up_len"], rd["num_urs"])
            compared += 1
    assert compared == 3
