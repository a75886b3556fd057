"""Overlap pairing for runs without a barrier: methods.md §2.4's check cases."""

from __future__ import annotations

import pytest

from analysis.duet.overlap import overlap_pairs, overlapping

CASES = [  # (A, B, candidates with overlap > 0 (the stated counts), kept by the 0.4 rule)
    ([(1, 2)], [(1, 2)], 1, [(0, 0)]),
    ([(0, 4), (6, 10)], [(2, 6), (8, 12)], 2, [(0, 0), (1, 1)]),
    # A[4,8]/B[0,5] overlaps by 1 < 0.4 x 4: a candidate, not a pair
    ([(0, 4), (4, 8)], [(0, 5), (5, 10)], 3, [(0, 0), (1, 1)]),
]


@pytest.mark.parametrize("a, b, candidates, kept", CASES)
def test_check_cases(a, b, candidates, kept):
    assert len(overlapping(a, b)) == candidates
    assert overlap_pairs(a, b) == kept
    # the sides are symmetric
    assert len(overlapping(b, a)) == candidates
    assert overlap_pairs(b, a) == [(j, i) for i, j in kept]


def test_two_runs_of_the_last_case_give_six():
    a, b, _, _ = CASES[2]
    assert sum(len(overlapping(a, b)) for _run in range(2)) == 6


def test_touching_intervals_do_not_overlap():
    assert overlapping([(0, 4), (6, 10)], [(2, 6)]) == [(0, 0, 2)]


def test_the_share_must_be_exceeded_for_both_sides():
    # overlap 2: exactly 0.4 of B's 5 -> dropped; more than 0.4 of A's 2
    assert overlap_pairs([(3, 5)], [(0, 5)]) == []
    assert overlap_pairs([(3, 5)], [(0, 5)], share=0.39) == [(0, 0)]
    # overlap 3: 0.6 of B's 5 and 1.0 of A's 3
    assert overlap_pairs([(2, 5)], [(0, 5)]) == [(0, 0)]


@pytest.mark.parametrize("a, message", [([(2, 1)], "not after"), ([(0, 4), (3, 6)], "sequential")])
def test_bad_intervals(a, message):
    with pytest.raises(ValueError, match=message):
        overlapping(a, [(0, 1)])
