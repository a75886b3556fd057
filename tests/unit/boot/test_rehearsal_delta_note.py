"""`coldrun check --rehearse` notes a key whose iterations are too short for the paper's 1 ms delta (issue 39)."""

from __future__ import annotations

from analysis import classify
from supervisor.boot.rehearsal import PAPER_DELTA_SECONDS, RESOLVABLE_SHARE, delta_note


def test_the_copies_match_the_analysis():
    assert PAPER_DELTA_SECONDS == float(classify.PAPER_DELTA)
    assert RESOLVABLE_SHARE == classify.RESOLVABLE_SHARE


def test_a_fast_key_gets_the_note_and_a_slow_one_not():
    assert delta_note(0.0007) == ("    note: under what warmup_stats' --delta 0.001 s can resolve (changes below "
                                  "~140% go unseen); coldrun-analyze's default relative rule sees them, or raise "
                                  "the param")
    assert delta_note(0.1) is None and delta_note(2.0) is None
    assert delta_note(None) is None and delta_note(0.0) is None
