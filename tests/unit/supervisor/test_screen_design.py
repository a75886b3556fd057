"""Screening designs and run order: TN 1855's Table 3 order, fractional and Plackett-Burman designs,
exclusions and their balance warning, split-plot batches, seeded replicates, the boot check, the boot limit."""

from collections import Counter

import pytest

from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.boot.kinds import kind_for
from supervisor.kinds.screening.design import build_design
from supervisor.kinds.screening.plan import balanced_not_alternating, batch_order, plan_screening
from supervisor.kinds.screening.text import alias_lines, whole_plot_lines
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
    # batches_per_level = 2 by default: 2 os levels x 2 batches, each running 3 replicates of its 6 treatments
    assert len(plan.runs) == 4 * 6 * 3 and plan.reboot_factors == ["os"]
    batches = [r.batch for r in plan.runs]
    assert batches == sorted(batches)                # one batch after the other (split plot)
    levels_of = []
    for b in range(4):
        os_levels = {r.levels["os"] for r in plan.runs if r.batch == b}
        assert len(os_levels) == 1
        levels_of += os_levels
        orders = []
        for rep in range(3):
            ts = [r.treatment for r in plan.runs if r.batch == b and r.replicate == rep]
            assert sorted(ts) == sorted({r.treatment for r in plan.runs if r.batch == b}) and len(ts) == 6
            orders.append(ts)
        assert len({tuple(o) for o in orders}) > 1    # fresh orders, not one repeated
    assert Counter(levels_of) == {"0": 2, "1": 2}
    assert all(a != b for a, b in zip(levels_of, levels_of[1:]))   # a switch between every two batches
    assert plan.switches() == 4 and plan.boots() == 72 + 4 + 1
    assert plan.whole_plots == 2 and plan.batches() == 4 and plan.whole_plot_dof() == 2
    # what is left to switch: from the last run that ended (nothing ended: one may come first)
    assert plan.switches_ahead(range(10, 72), 9) == 3 and plan.switches_ahead(range(60, 72), 59) == 0
    assert plan.switches_ahead(range(72), None) == 4 and plan.switches_ahead([], 71) == 0
    assert plan_screening(exp, seed=7).runs == plan.runs            # the seed decides the order
    assert plan_screening(exp, seed=8).runs != plan.runs
    jobs = kind_for(exp).plan(7)
    assert [j.key for j in jobs] == [r.key for r in plan.runs] and [j.pexec for j in jobs] == list(range(72))


def test_batch_orders_switch_between_every_two_batches_for_any_seed():
    import random
    combos = [("0",), ("1",), ("2",)]
    for seed in range(200):
        order = batch_order(combos, 3, random.Random(seed))
        assert Counter(order) == {c: 3 for c in combos} and all(a != b for a, b in zip(order, order[1:]))


def test_one_batch_per_level_leaves_no_whole_plot_dof_and_check_says_so():
    plan = plan_screening(exp_of("batches_per_level = 1\n" + OS + FP + PRF), seed=7)
    assert len(plan.runs) == 36 and plan.batches() == 2 and plan.whole_plot_dof() == 0
    lines = whole_plot_lines(plan)
    assert lines[0] == "whole plots: 2 batch(es) for 2 combination(s) of os: 0 degree(s) of freedom for " \
                       "batch-to-batch error"
    assert "os completely confounded with the batches" in lines[1] and "batches_per_level = 2 (4 batches)" in lines[1]
    assert whole_plot_lines(plan_screening(exp_of(OS + FP), seed=1))[0].endswith("2 degree(s) of freedom for "
                                                                                 "batch-to-batch error; os tested "
                                                                                 "against it")
    assert plan_screening(exp_of(FP + PRF), seed=1).batches() == 1     # no reboot factor: one batch, as before


def test_fractional_designs_carry_their_alias_sets():
    four = "".join(f'[screening.factors.f{i}]\nkind = "env"\nvariable = "F{i}"\nlevels = ["lo", "hi"]\n'
                   for i in range(4))
    res4 = build_design(exp_of('design = "fractional"\ngenerators = "a b c abc"\n' + four).screening)
    assert ["f0:f1", "f2:f3"] in res4.aliases and ["f0", "f1:f2:f3"] in res4.aliases and len(res4.aliases) == 7
    negative = build_design(exp_of('design = "fractional"\ngenerators = "a b c -abc"\n' + four).screening)
    assert ["f0:f1", "-f2:f3"] in negative.aliases      # pyDOE3's fracfact_aliasing shows none of these
    three = "".join(f'[screening.factors.f{i}]\nkind = "env"\nvariable = "F{i}"\nlevels = ["lo", "hi"]\n'
                    for i in range(3))
    res3 = build_design(exp_of('design = "fractional"\ngenerators = "a b ab"\n' + three).screening)
    assert res3.aliases == [["f0", "f1:f2"], ["f1", "f0:f2"], ["f2", "f0:f1"]]
    lines = alias_lines(plan_screening(exp_of('design = "fractional"\ngenerators = "a b ab"\n' + three), seed=1))
    assert lines[0].startswith("aliases (3 set(s)") and "  f2 = f0:f1" in lines
    assert build_design(exp_of(OS + FP).screening).aliases == [] and alias_lines(plan_screening(exp_of(OS + FP), 1)) == []


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
    with pytest.raises(ColdrunError, match=r"screening.max_boots: the full factorial design needs up to 77 "
                                           r"boots \(72 executions, 4 level switches, 1 to finish\), more "
                                           r"than max_boots = 30"):
        plan_screening(exp_of("max_boots = 30\n" + OS + FP + PRF), seed=1)


def test_more_level_switches_than_the_reboot_loop_guard_is_refused():
    base = BASE.replace("[screening]", "[rerun]\nmax_unexplained_boots = 1\n[screening]")
    with pytest.raises(ColdrunError, match="rerun.max_unexplained_boots = 4 or more"):
        plan_screening(exp_of(OS + FP, base), seed=1)
