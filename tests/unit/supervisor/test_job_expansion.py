from supervisor.experiment.model import parse_experiment
from supervisor.experiment.plan import expand, should_skip

EXP = '''
name = "x"
executions = 2
skip = ["b:*:v2"]
[benchmarks]
a = 1
b = 2
[variants.v1]
target = "t"
[variants.v2]
target = "t"
[vms.m1]
runner = "python"
executable = "python3"
iterations = 5
variants = ["v1", "v2"]
[vms.m2]
runner = "c"
iterations = 5
variants = ["v1"]
'''


def test_round_robin_is_krun_order():
    exp = parse_experiment(EXP.encode(), "e")
    jobs = expand(exp, 0)
    first_round = ["a:m1:v1", "a:m1:v2", "b:m1:v1", "b:m1:v2", "a:m2:v1", "b:m2:v1"]
    assert [j.key for j in jobs] == first_round * 2
    assert [j.pexec for j in jobs] == [0] * 6 + [1] * 6
    assert [j.key for j in jobs if j.skipped] == ["b:m1:v2", "b:m1:v2"]


def test_random_order_is_seeded_and_renumbers_pexecs():
    exp = parse_experiment(EXP.replace('executions = 2', 'executions = 3\norder = "random"').encode(), "e")
    a, b, c = expand(exp, 7), expand(exp, 7), expand(exp, 8)
    assert a == b and a != c
    assert sorted(j.key for j in a) == sorted(j.key for j in expand(exp.model_copy(update={"order": "round-robin"}), 0))
    for key in {j.key for j in a}:
        assert [j.pexec for j in a if j.key == key] == [0, 1, 2]


def test_skip_wildcards():
    assert should_skip("nbody:pypy:default", ["*:pypy:*"])
    assert not should_skip("nbody:pypy:default", ["*:cpython:*"])
    assert should_skip("nbody:pypy:default", ["nbody:pypy:default"])
    assert should_skip("fannkuch_redux:c:x", ["fann*:*:*"])
