"""Sison-Glaz simultaneous multinomial intervals (analysis.multinomial_ci)."""

from pathlib import Path

import numpy as np
import pytest

from analysis.multinomial_ci import coverage, sison_glaz

# Sison & Glaz's 7-cell example (n = 467) at 95%, as tabulated by
# Sangeetha, Subbiah & Srinivasan (2013, Table 2) to three decimals.
PUBLISHED_COUNTS = [56, 72, 73, 59, 62, 87, 58]
# R's MultinomialCI::multinomialCI (what warmup_stats' diff calls) on a spread of counts; README beside it.
R_VALUES = Path(__file__).parents[1] / "fixtures" / "multinomial_ci" / "r_multinomialci.txt"


def _r_cases() -> list[tuple[float, list[int], list[tuple[float, float]]]]:
    cases = []
    for line in R_VALUES.read_text().splitlines():
        alpha, counts, bounds = line.split()
        values = [float(v) for v in bounds.split(",")]
        cases.append((float(alpha), [int(c) for c in counts.split(",")], list(zip(values[::2], values[1::2]))))
    return cases


@pytest.mark.parametrize("alpha,counts,r_intervals", _r_cases(), ids=lambda v: str(v)[:30])
def test_matches_r_multinomialci(alpha, counts, r_intervals):
    got = sison_glaz(counts, alpha)
    assert len(got) == len(r_intervals)
    for (lo, hi), (r_lo, r_hi) in zip(got, r_intervals):
        # 1e-7: R's ppois and scipy's Poisson cdf differ in the last digits far in the tails ([100, 0, 0, 0]).
        assert lo == pytest.approx(r_lo, abs=1e-7) and hi == pytest.approx(r_hi, abs=1e-7)


def test_r_cases_cover_the_diff_shapes():
    cases = _r_cases()
    assert {alpha for alpha, _, _ in cases} == {0.01, 0.05}
    assert any(counts == [10, 0, 0, 0] for _, counts, _ in cases)
    assert min(sum(c) for _, c, _ in cases) <= 3 and max(sum(c) for _, c, _ in cases) >= 1000


PUBLISHED_SG_95 = [(0.079, 0.164), (0.114, 0.199), (0.116, 0.201), (0.086, 0.171),
                   (0.092, 0.177), (0.146, 0.231), (0.084, 0.169)]


def test_published_sison_glaz_example():
    got = sison_glaz(PUBLISHED_COUNTS, alpha=0.05)
    for (lo, hi), (plo, phi) in zip(got, PUBLISHED_SG_95):
        # 0.0011: the table's second row prints 0.114 for 72/467 - 19/467 = 0.11349.
        assert abs(lo - plo) <= 0.0011
        assert abs(hi - phi) <= 0.0006


def test_interval_structure_matches_multinomialci():
    """All intervals share the half-widths c/n below and (c + 2 delta)/n above."""
    counts = PUBLISHED_COUNTS
    n = sum(counts)
    got = sison_glaz(counts, alpha=0.05)
    below = {round(x / n - lo, 12) for x, (lo, _) in zip(counts, got)}
    above = {round(hi - x / n, 12) for x, (_, hi) in zip(counts, got)}
    assert len(below) == 1 and len(above) == 1
    c = below.pop() * n
    assert abs(c - round(c)) < 1e-9  # c is an integer count
    delta = (above.pop() * n - c) / 2
    assert 0.0 <= delta <= 1.0


@pytest.mark.parametrize("counts", [[4, 0, 4, 0], [0, 0, 8, 0], [3, 3, 0, 2], [30, 0, 0, 0], [10, 7, 8, 5]])
def test_intervals_contain_estimate_and_stay_in_unit_range(counts):
    n = sum(counts)
    for x, (lo, hi) in zip(counts, sison_glaz(counts, 0.01)):
        assert 0.0 <= lo <= x / n <= hi <= 1.0


def test_lower_alpha_gives_wider_intervals():
    counts = [12, 5, 9, 4]
    wide = sison_glaz(counts, 0.01)
    narrow = sison_glaz(counts, 0.10)
    assert all(w[0] <= m[0] and w[1] >= m[1] for w, m in zip(wide, narrow))
    assert any(w[1] - w[0] > m[1] - m[0] for w, m in zip(wide, narrow))


def test_more_observations_give_narrower_intervals():
    small = sison_glaz([4, 2, 2], 0.05)
    large = sison_glaz([40, 20, 20], 0.05)
    assert all((l[1] - l[0]) < (s[1] - s[0]) for s, l in zip(small, large))


def test_coverage_grows_with_c():
    counts = [10, 7, 8, 5]
    values = [coverage(c, counts) for c in range(1, 12)]
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:]))
    assert values[-1] > 0.99


def test_simultaneous_coverage_by_simulation():
    rng = np.random.default_rng(12345)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    alpha, trials, covered = 0.10, 300, 0
    for _ in range(trials):
        counts = rng.multinomial(60, p)
        cis = sison_glaz(list(counts), alpha)
        covered += all(lo <= pi <= hi for pi, (lo, hi) in zip(p, cis))
    # Nominal 90%; allow for simulation noise (sd ~ 1.7%).
    assert covered / trials >= 0.85


def test_diverging_classes_do_not_overlap_at_alpha_001():
    """The case diff relies on: 8 warmup vs 8 no-steady-state executions."""
    before = sison_glaz([8, 0, 0, 0], 0.01)
    after = sison_glaz([0, 0, 0, 8], 0.01)
    assert before[0][0] > after[0][1]
    assert after[3][0] > before[3][1]


@pytest.mark.parametrize("counts,alpha", [([], 0.01), ([1, -1], 0.01), ([0, 0], 0.01), ([3, 4], 1.5)])
def test_bad_arguments_raise(counts, alpha):
    with pytest.raises(ValueError):
        sison_glaz(counts, alpha)
