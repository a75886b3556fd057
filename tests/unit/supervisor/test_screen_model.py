"""[screening] in the experiment file: each bad input is one line naming the field and the fix."""

import pytest

from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.kinds.screening.table import level_text

BASE = '''
name = "x"
executions = 2
[benchmarks]
fib = 10
[variants.plain]
target = "bench.so"
[variants.fp]
target = "bench-fp.so"
[vms.c]
runner = "c"
iterations = 5
variants = ["plain", "fp"]
[screening]
'''


def parse(screening: str, base: str = BASE):
    return parse_experiment((base + screening).encode(), "exp.toml")


def err(screening: str, base: str = BASE) -> str:
    with pytest.raises(ColdrunError) as e:
        parse(screening, base)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("exp.toml: "), msg
    return msg


BUILD = '[screening.factors.build]\nkind = "variant"\nlevels = ["plain", "fp"]\n'


def test_a_valid_table_parses_with_level_texts():
    exp = parse(BUILD + '[screening.factors.aslr]\nkind = "control"\ncontrol = "aslr"\nlevels = [true, false]\n'
                '[screening.factors.rate]\nkind = "control"\ncontrol = "perf_max_sample_rate"\nlevels = [1, 1000]\n')
    assert exp.screening.factors["aslr"].texts() == ["true", "false"]
    assert exp.screening.factors["rate"].texts() == ["1", "1000"]
    assert exp.screening.design == "full" and level_text(False) == "false"


def test_unknown_control_names_the_controls_that_exist():
    msg = err(BUILD + '[screening.factors.x]\nkind = "control"\ncontrol = "turbo_boost"\nlevels = ["on", "off"]\n')
    assert "screening.factors.x" in msg and "'turbo_boost' is not a [platform] control" in msg and "aslr" in msg


def test_check_only_control_points_to_a_kernel_cmdline_factor():
    msg = err(BUILD + '[screening.factors.s]\nkind = "control"\ncontrol = "smt"\nlevels = ["report", "require_off"]\n')
    assert "only checked" in msg and "nosmt" in msg


def test_one_level_is_refused():
    msg = err('[screening.factors.build]\nkind = "variant"\nlevels = ["plain"]\n')
    assert "screening.factors.build" in msg and "at least two levels, got 1" in msg


def test_a_level_the_control_cannot_take_is_refused():
    msg = err(BUILD + '[screening.factors.thp]\nkind = "control"\ncontrol = "transparent_hugepages"\n'
                      'levels = ["always", "sometimes"]\n')
    assert "'sometimes' is not a value of [platform] transparent_hugepages" in msg


def test_a_level_or_value_of_no_form_is_one_line_naming_the_forms():
    msg = err(BUILD.replace('["plain", "fp"]', '["plain", 1.5]'))
    assert msg == "exp.toml: screening.factors.build.levels.1: must be true, false, an integer or a string"
    msg = err('[screening.factors.a]\nkind = "argument"\nlevels = ["x", "y"]\nvalues = {x = 3}\n')
    assert msg == "exp.toml: screening.factors.a.values.x: must be an array, a string or a table"


def test_a_control_level_of_the_wrong_form_names_the_control_s_forms():
    msg = err(BUILD + '[screening.factors.aslr]\nkind = "control"\ncontrol = "aslr"\nlevels = [true, "yes"]\n')
    assert "'yes' is not a value of [platform] aslr: must be true, false or \"ignore\"" in msg


def test_ignore_is_no_level():
    msg = err(BUILD + '[screening.factors.g]\nkind = "control"\ncontrol = "governor"\n'
                      'levels = ["performance", "ignore"]\n')
    assert "'ignore' leaves the control alone" in msg


def test_unknown_factor_in_an_exclusion_and_in_the_boot_check():
    msg = err('exclude = [{buld = "fp"}]\n' + BUILD)
    assert "screening.exclude.0" in msg and "unknown factor 'buld'" in msg
    msg = err('[screening.boot_check]\nfactor = "os"\nboots_per_level = 2\nsamples_per_boot = 5\n' + BUILD)
    assert "screening.boot_check.factor" in msg and "unknown factor 'os'" in msg


def test_an_unknown_level_in_an_exclusion():
    msg = err('exclude = [{build = "O3"}]\n' + BUILD)
    assert "build has no level 'O3'" in msg


def test_variant_levels_must_be_variants_of_the_vm():
    msg = err('[screening.factors.build]\nkind = "variant"\nlevels = ["plain", "O3"]\n')
    assert "variant 'O3', which is not in vms.c.variants" in msg


def test_fractional_designs_take_two_level_factors_and_one_option():
    three = '[screening.factors.e]\nkind = "env"\nvariable = "E"\nlevels = ["a", "b", "c"]\n'
    assert "2-level factors only; e has more levels" in err('design = "plackett-burman"\n' + BUILD + three)
    assert "exactly one of resolution or generators" in err('design = "fractional"\n' + BUILD)


def test_kind_specific_fields():
    assert 'needs variable = "..."' in err('[screening.factors.e]\nkind = "env"\nlevels = ["a", "b"]\n')
    assert "needs switch" in err('[screening.factors.k]\nkind = "kernel_cmdline"\nparameter = "mitigations"\n'
                                 'levels = ["auto", "off"]\n')
    assert "variable is not used" in err('[screening.factors.b]\nkind = "variant"\nvariable = "X"\n'
                                         'levels = ["plain", "fp"]\n')


def test_stop_and_skip_do_not_mix_with_screening():
    base = BASE.replace("executions = 2\n", "").replace("[screening]", "[stop]\nci_percent = 0.05\n[screening]")
    assert "stop: [screening] runs each treatment a fixed number of times" in err(BUILD, base)
    msg = err(BUILD, BASE.replace("executions = 2\n", 'executions = 2\nskip = ["fib:c:fp"]\n'))
    assert "skip: with [screening], leave out treatments with screening.exclude" in msg


def test_two_vms_need_a_vm_factor():
    two = BASE.replace("[screening]", '[vms.d]\nrunner = "c"\niterations = 5\nvariants = ["plain", "fp"]\n'
                                      '[screening]')
    msg = err(BUILD, two)
    assert 'add a factor with kind = "vm"' in msg


def test_screening_with_duet_is_one_line():
    duet = '\n[duet]\npairs = [{a = "fib:c:plain", b = "fib:c:fp"}]\n'
    msg = err(BUILD, base=BASE.replace("[screening]\n", "") + duet + "[screening]\n")
    assert "[screening] and [duet] cannot be combined" in msg
