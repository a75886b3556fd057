from supervisor.experiment.model import parse_experiment
from supervisor.boot.kinds import kind_for
from supervisor.experiment.model import should_skip


def expand(exp, seed):
    return kind_for(exp).plan(seed)


def records_to_write(exp, jobs):
    return kind_for(exp).records_to_write(jobs)

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


def test_records_to_write_count_the_planned_jobs_of_every_mode(tmp_path):
    from supervisor.experiment.model import load_experiment
    from pair_experiments import pair_experiment
    plain = parse_experiment(EXP.encode(), "e")
    assert records_to_write(plain, expand(plain, 0)) == 10          # 6 keys x 2, the skipped key's 2 aside
    # [screening]: treatments x replicates, though every treatment runs the same key
    from screen_experiments import ONE_KEY          # one key, executions = 3 replicates
    screening = parse_experiment((ONE_KEY + '[screening.factors.e]\nkind = "env"\nvariable = "E"\n'
                                  'levels = ["a", "b"]\n[screening.factors.f]\nkind = "env"\nvariable = "F"\n'
                                  'levels = ["a", "b"]\n').encode(), "e")
    jobs = expand(screening, 0)
    assert len({j.key for j in jobs}) == 1 and records_to_write(screening, jobs) == 4 * 3   # treatments x reps
    # [duet]: a record per side of each pair execution
    duet, _ = load_experiment(pair_experiment(tmp_path, [("ok", "ok"), ("ok", "slow")], executions=3))
    assert records_to_write(duet, expand(duet, 1)) == 2 * 3 * 2
    # [stop]: each key may grow to max_executions
    stop = parse_experiment(EXP.replace('executions = 2', '[stop]\nci_percent = 0.01\nmin_executions = 2\n'
                                        'max_executions = 7').replace('skip = ["b:*:v2"]\n', '').encode(), "e")
    assert records_to_write(stop, expand(stop, 0)) == 6 * 7
