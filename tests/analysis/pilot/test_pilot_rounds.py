"""Pilot's unit-reading session: next work amounts and final statistics against Pilot's own runs."""

from __future__ import annotations

import pytest

from analysis.pilot import rounds as R
from analysis.pilot import subsession as ss
from pilot_golden import Checks, rows, session_mock

SESSION_FILES = ("golden_session_original.jsonl", "golden_session_fork.jsonl")
WARM_UP = {"EDM": "edm", "none": "none", "fixed": "fixed"}
# Per file: 11 rounds (work amount, duration, URs each) + 5 "done" checks + 5 scenarios x 7 results.
SESSION_CHECKS = 11 * 3 + 5 + 5 * 7


def test_unit_test_session_duration():
    """Pilot's CalculatingOptimalSessionDuration: limit 50, 1 UR per unit, 15 required -> {1, 5, 10}."""
    settings = R.SessionSettings(max_work_amount=50, short_round_ns=0, warm_up="none")
    rounds: list[R.Round] = []
    urs: list[float] = []
    work = R.next_work_amount(rounds, urs, settings, required=lambda kept: 15)
    chosen = []
    while work is not None:
        chosen.append(work)
        rounds.append(R.Round(work, 1000, work, 0))
        urs += [42.42] * work
        work = R.next_work_amount(rounds, urs, settings, required=lambda kept: 15)
    assert chosen == [1, 5, 10]


def _settings(r: dict) -> R.SessionSettings:
    return R.SessionSettings(
        max_work_amount=r["max_work_amount"],
        init_work_amount=r["init_work_amount"],
        short_round_ns=int(r["short_round_threshold_s"] * R.DEFAULT_SHORT_ROUND_NS),
        warm_up=WARM_UP[r["warm_up_method"]],
        fixed_fraction=r["fixed_percentage"] or R.DEFAULT_FIXED_FRACTION,
        ci_percent=r["ci_perc"],
        min_samples=r["min_sample_size"],
    )


def replay(c: Checks, r: dict) -> list[float]:
    """Run the scenario's rounds through our schedule; return the kept URs."""
    settings, mock = _settings(r), session_mock().Mock()
    done: list[R.Round] = []
    kept: list[float] = []
    work = R.next_work_amount(done, kept, settings)
    for i, rd in enumerate(r["rounds"]):
        where = f"{r['label']} round {i}"
        c.equal(f"{where} work amount", work, rd["work_amount"])
        urs, _reading, duration = mock.round(rd["work_amount"])
        c.equal(f"{where} duration", duration, rd["duration_ns"])
        c.equal(f"{where} URs", len(urs), rd["num_urs"])
        kept += urs[rd["warm_up_len"]:]
        done.append(R.Round(rd["work_amount"], duration, rd["num_urs"], rd["warm_up_len"]))
        work = R.next_work_amount(done, kept, settings)
    c.equal(f"{r['label']} done after the last round", work, None)
    return kept


@pytest.mark.parametrize("filename", SESSION_FILES)
def test_session_goldens(filename):
    c = Checks()
    scenarios = rows(filename)
    assert len(scenarios) == 5
    for r in scenarios:
        kept = replay(c, r)
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
def test_session_warm_up_removal(filename):
    """kept_range gives every round's recorded warm-up length (EDM, none, fixed; short rounds rejected)."""
    compared = 0
    for r in rows(filename):
        settings, mock = _settings(r), session_mock().Mock()
        for rd in r["rounds"]:
            urs, _reading, duration = mock.round(rd["work_amount"])
            assert R.kept_range(urs, duration, settings) == (rd["warm_up_len"], rd["num_urs"])
            compared += 1
    assert compared == 11


def test_short_rounds_double_until_one_is_long():
    settings = R.SessionSettings(max_work_amount=1000, init_work_amount=100, short_round_ns=10, warm_up="none")
    assert R.next_work_amount([], [], settings) == 100
    short = [R.Round(100, 5, 100, 100)]
    assert R.next_work_amount(short, [], settings) == 200
    big = [R.Round(600, 5, 600, 600)]  # over half the max: straight to the max, then the soft limit (5 x 600)
    assert R.next_work_amount(big, [], settings) == 1000


def test_strict_done_rule_and_soft_limit():
    settings = R.SessionSettings(max_work_amount=10_000, short_round_ns=0, warm_up="none")
    one = [R.Round(10, 1, 10, 0)]
    assert R.next_work_amount(one, [1.0] * 10, settings, required=lambda kept: 9) is None
    # req == total is not enough (Pilot's strict `req < total`): need 0 more, floor 10.
    assert R.next_work_amount(one, [1.0] * 10, settings, required=lambda kept: 10) == 10
    # need 990 -> int(1.2 * 990) = 1188, but the soft limit is 5 x 10.
    assert R.next_work_amount(one, [1.0] * 10, settings, required=lambda kept: 1000) == 50
    # Unknown requirement: double the data.
    assert R.next_work_amount(one, [1.0] * 10, settings, required=lambda kept: None) == 12


def test_work_per_unit_counts_every_reported_reading():
    """Two URs per unit, half of them dropped as warm-up: the ratio is work / reported URs."""
    settings = R.SessionSettings(max_work_amount=10_000, short_round_ns=0, warm_up="none")
    done = [R.Round(100, 1, 200, 100)]
    # need 300 more: int(1.2 * 300 * (100 / 200)) = 180; with kept URs only it would be 360.
    assert R.next_work_amount(done, [1.0] * 100, settings, required=lambda kept: 400) == 180
    assert R.soft_limit([100, 50], 10_000) == 375
