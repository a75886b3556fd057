"""Screening designs and run order: TN 1855's Table 3 order, fractional and Plackett-Burman designs,
exclusions and their balance warning, split-plot batches, seeded replicates, the boot check, the boot limit."""

from collections import Counter

import pytest

from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.boot.kinds import kind_for
from supervisor.experiment.screening_design import build_design
from supervisor.experiment.screening_plan import balanced_not_alternating, plan_screening
from screen_experiments import ONE_KEY


BASE = ONE_KEY
OS = ('[screening.factors.os]\nkind = "kernel_cmdline"\nparameter = "os"\nlevels = ["0", "1"]\n'
      'switch = ["true"]\n')
FP = '[screening.factors.fp]\nkind = "env"\nvariable = "FP"\nlevels = ["0", "1"]\n'
PRF = '[screening.factors.prf]\nkind = "env"\nvariable = "PRF"\nlevels = ["0", "1", "2"]\n'


def exp_of(screening: str, base: str = BASE):
    return parse_experiment((base + screening).encode(), "exp.toml")


def test_full_factorial_is_table_3_order():
    design = build_design(exp_of(OS + FP + PRF).screening)
    assert design.name == "full factorial"
    assert ["".join(map(str, r)) for r in design.rows] == [
        "000", "001", "002", "010", "011", "012", "100", "101", "102", "110", "111", "112"]
    assert design.kept == list(range(12)) and design.warnings == []


def test_fractional_and_plackett_burman_designs():
    four = "".join(f'[screening.factors.f{i}]\nkind = "env"\nvariable = "F{i}"\nlevels = ["lo", "hi"]\n'
                   for i in range(4))
    six = "".join(f'[screening.factors.f{i}]\nkind = "env"\nvariable = "F{i}"\nlevels = ["lo", "hi"]\n'
                  for i in range(6))
    by_res = build_design(exp_of('design = "fractional"\nresolution = 3\n' + six).screening)
    assert by_res.name == "fractional factorial (resolution 3)"
    assert len(by_res.rows) == 8 and all(len(r) == 6 for r in by_res.rows)
    # resolution III: main effects are orthogonal, so every pair of columns holds each combination twice
    for i in range(6):
        for j in range(i + 1, 6):
            assert set(Counter((r[i], r[j]) for r in by_res.rows).values()) == {2}
    gen = build_design(exp_of('design = "fractional"\ngenerators = "a b c abc"\n' + four).screening)
    assert len(gen.rows) == 8 and all(r[3] == (r[0] + r[1] + r[2]) % 2 for r in gen.rows)
    pb = build_design(exp_of('design = "plackett-burman"\n' + four).screening)
    assert len(pb.rows) == 8 and {tuple(sorted(Counter(r[i] for r in pb.rows).values())) for i in range(4)} == {(4, 4)}


def test_bad_generators_are_one_line():
    with pytest.raises(ColdrunError, match="screening.generators: 1 words for 2 factors"):
        build_design(exp_of('design = "fractional"\ngenerators = "a"\n' + FP +
                            FP.replace("fp", "fq").replace('"FP"', '"FQ"')).screening)


def test_exclusion_warns_about_the_balance_it_breaks():
    design = build_design(exp_of('exclude = [{fp = "0", prf = "2"}]\n' + OS + FP + PRF).screening)
    assert len(design.kept) == 10
    assert "removes 2 of 12 treatments" in design.warnings[0]
    lines = "\n".join(design.warnings[1:])
    assert "fp: treatments per level now 0: 4, 1: 6" in lines and "prf: treatments per level now 0: 4, 1: 4, 2: 2" \
        in lines and "os:" not in lines


def test_exclusion_of_every_treatment_is_refused():
    with pytest.raises(ColdrunError, match="removes all 4 treatments"):
        build_design(exp_of('exclude = [{fp = "0"}, {fp = "1"}]\n' + OS + FP).screening)


def test_order_batches_by_reboot_levels_and_replicates_every_treatment_in_fresh_orders():
    exp = exp_of(OS + FP + PRF)
    plan = plan_screening(exp, seed=7)
    assert len(plan.runs) == 12 * 3 and plan.reboot_factors == ["os"]
    batches = [r.batch for r in plan.runs]
    assert batches == sorted(batches)                # one batch after the other (split plot)
    for b in (0, 1):
        os_levels = {r.levels["os"] for r in plan.runs if r.batch == b}
        assert len(os_levels) == 1
        orders = []
        for rep in range(3):
            ts = [r.treatment for r in plan.runs if r.batch == b and r.replicate == rep]
            assert sorted(ts) == sorted({r.treatment for r in plan.runs if r.batch == b}) and len(ts) == 6
            orders.append(ts)
        assert len({tuple(o) for o in orders}) > 1    # fresh orders, not one repeated
    assert plan.switches() == 2 and plan.boots() == 36 + 2 + 1
    # what is left to switch: from the last run that ended (nothing ended: one may come first)
    assert plan.switches_ahead(range(10, 36), 9) == 1 and plan.switches_ahead(range(20, 36), 19) == 0
    assert plan.switches_ahead(range(36), None) == 2 and plan.switches_ahead([], 35) == 0
    assert plan_screening(exp, seed=7).runs == plan.runs            # the seed decides the order
    assert plan_screening(exp, seed=8).runs != plan.runs
    jobs = kind_for(exp).plan(7)
    assert [j.key for j in jobs] == [r.key for r in plan.runs] and [j.pexec for j in jobs] == list(range(36))


def test_boot_check_is_balanced_and_not_alternating():
    import random
    for seed in range(50):
        seq = balanced_not_alternating(["0", "1"], 3, random.Random(seed))
        assert Counter(seq) == {"0": 3, "1": 3} and any(a == b for a, b in zip(seq, seq[1:]))
    exp = exp_of(OS + FP + '[screening.boot_check]\nfactor = "os"\nboots_per_level = 4\nsamples_per_boot = 101\n')
    plan = plan_screening(exp, seed=1)
    check = [r for r in plan.runs if r.batch == plan.boot_check_batch]
    assert len(check) == 8 and {r.iterations for r in check} == {101}
    assert Counter(r.levels["os"] for r in check) == {"0": 4, "1": 4}
    assert all(r.levels["fp"] == "0" for r in check) and [r.replicate for r in check] == list(range(8))


def test_a_design_needing_more_boots_than_the_maximum_is_refused():
    with pytest.raises(ColdrunError, match=r"screening.max_boots: the full factorial design needs up to 39 "
                                           r"boots \(36 executions, 2 level switches, 1 to finish\), more "
                                           r"than max_boots = 30"):
        plan_screening(exp_of("max_boots = 30\n" + OS + FP + PRF), seed=1)


def test_more_level_switches_than_the_reboot_loop_guard_is_refused():
    base = BASE.replace("[screening]", "[rerun]\nmax_unexplained_boots = 1\n[screening]")
    with pytest.raises(ColdrunError, match="rerun.max_unexplained_boots = 2 or more"):
        plan_screening(exp_of(OS + FP, base), seed=1)
