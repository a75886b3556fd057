"""The experiment file's [stop] table: accepted forms, one line per problem naming file and field, bounds."""

from __future__ import annotations

import pytest

from supervisor.errors import ColdrunError
from supervisor.experiment.model import json_schema, parse_experiment
from supervisor.boot.kinds import kind_for

BASE = '''
name = "x"
[benchmarks]
fib = 10
sieve = 20
[variants.py]
target = "bench.py"
[vms.cpython]
runner = "python"
executable = "python3"
iterations = 50
variants = ["py"]
'''


def parse(stop: str, base: str = BASE):
    return parse_experiment((base + stop).encode(), "exp.toml")


def problems(stop: str, base: str = BASE) -> list[str]:
    with pytest.raises(ColdrunError) as e:
        parse(stop, base)
    lines = str(e.value).split("\n")
    assert all(line.startswith("exp.toml: ") for line in lines)
    return [line[len("exp.toml: "):] for line in lines]


def test_a_target_replaces_the_count_and_each_key_starts_with_min_executions():
    exp = parse('[stop]\nci_width = "2ms"\nmin_executions = 4\nmax_executions = 9\n')
    assert exp.executions is None and exp.stop.ci_width == 0.002 and exp.stop.confidence == 0.95
    assert exp.stop.estimate == "pilot" and not exp.stop.adapt_iterations
    jobs = kind_for(exp).plan(0)
    assert len(jobs) == 8 and {j.pexec for j in jobs} == {0, 1, 2, 3}
    assert {(j.key.split(":")[0], j.iterations, j.param) for j in jobs} == {("fib", 50, 10), ("sieve", 50, 20)}


def test_wps_starts_each_key_with_one_execution_at_the_smallest_param():
    exp = parse("[stop]\nci_percent = 0.05\n[stop.wps]\nmin_param = 100\nmax_param = 5000\n")
    assert exp.stop.wps.session == 60.0
    assert [(j.pexec, j.param) for j in kind_for(exp).plan(0)] == [(0, 100), (0, 100)]


def test_adapted_iterations_need_a_ceiling_at_or_above_the_vms():
    exp = parse("[stop]\nci_percent = 0.02\nadapt_iterations = true\nmax_iterations = 4000\n")
    assert exp.stop.max_iterations == 4000
    assert problems("[stop]\nci_percent = 0.02\nadapt_iterations = true\n") == [
        "stop.max_iterations: required with adapt_iterations = true: the most in-process iterations one "
        "execution may run"]
    assert problems("[stop]\nci_percent = 0.02\nadapt_iterations = true\nmax_iterations = 10\n") == [
        "stop.max_iterations: 10 is below vms.cpython.iterations = 50, the first executions' count; raise it"]
    assert problems("[stop]\nci_percent = 0.02\nmax_iterations = 100\n")[0].startswith(
        "stop.max_iterations: only used with adapt_iterations = true")


@pytest.mark.parametrize("stop,field,says", [
    ("ci_percent = 0", "stop.ci_percent", "a zero width can never be reached"),
    ('ci_width = "0s"', "stop.ci_width", "a zero width can never be reached"),
    ("ci_width = 0", "stop.ci_width", "a zero width can never be reached"),
    ("ci_percent = -0.1", "stop.ci_percent", "a zero width can never be reached"),
    ("ci_percent = 2", "stop.ci_percent", "2 means 200 %; write e.g. 0.02 for 2 %"),
    ("ci_percent = nan", "stop.ci_percent", ""),
    ("ci_percent = 0.02\nconfidence = 1", "stop.confidence", "less than 1"),
    ("ci_percent = 0.02\nconfidence = 0.3", "stop.confidence", "0.5"),
    ("ci_percent = 0.02\nmin_executions = 1", "stop.min_executions", "2"),
    ("ci_percent = 0.02\nmin_executions = 3.0", "stop.min_executions", "integer"),
    ("ci_percent = 0.02\nmax_executions = true", "stop.max_executions", "integer"),
    ("ci_percent = 0.02\nmax_executions = 9223372036854775807", "stop.max_executions", "100000"),
    ("ci_percent = 0.02\nestimate = \"median\"", "stop.estimate", "pilot"),
    ("ci_percent = 0.02\nac_limit = 0", "stop.ac_limit", "more than 0"),
    ("ci_percent = 0.02\nci_percnt = 0.1", "stop.ci_percnt", "did you mean 'ci_percent'?"),
    ('ci_width = "fast"', "stop.ci_width", "cannot read duration"),
])
def test_each_bad_field_is_one_line_naming_it(stop, field, says):
    lines = problems("[stop]\n" + stop + "\n")
    assert len(lines) == 1 and lines[0].startswith(field + ": ") and says in lines[0], lines


@pytest.mark.parametrize("stop,line", [
    ("[stop]\nconfidence = 0.9\n", "stop: give a target: ci_percent (CI width as a fraction of the mean, e.g. "
                                   "0.02) or ci_width (e.g. \"2ms\")"),
    ("[stop]\nci_percent = 0.02\nmin_executions = 5\nmax_executions = 4\n",
     "stop.max_executions: 4 is less than min_executions = 5; raise it"),
    ("[stop]\nci_percent = 0.02\nmax_executions = 60000\n",
     "stop.max_executions: 60,000 executions x 2 bench:vm:variant keys = 120,000 jobs, more than the 100,000 a "
     "schedule holds (each job is a reboot); lower stop.max_executions or the number of keys"),
    ("[stop]\nci_percent = 0.02\n[stop.wps]\nmin_param = 10\nmax_param = 10\n",
     "stop.wps.max_param: 10 is not above min_param = 10; the schedule needs a range"),
    ("[stop]\nci_width = \"1ms\"\n[stop.wps]\nmin_param = 1\nmax_param = 10\n",
     "stop.ci_width: [stop.wps] judges v (param units per second), not a duration; use ci_percent"),
    ("[stop]\nci_percent = 0.02\n[stop.wps]\nmin_param = 0\nmax_param = 10\n",
     "stop.wps.min_param: Input should be greater than or equal to 1"),
])
def test_rules_between_fields(stop, line):
    assert problems(stop) == [line]


def test_executions_or_stop_exactly_one():
    with_count = BASE.replace('name = "x"', 'name = "x"\nexecutions = 3')
    assert problems("[stop]\nci_percent = 0.02\n", with_count) == [
        "executions: [stop] decides how many executions each key gets; remove executions (or [stop])"]
    assert problems("") == ["executions: required field is missing; add it (or a [stop] table with a CI target)"]
    # shown beside the other problems of the file
    assert problems('heap_limit = "1KiB"\n') [0].startswith("executions: required field is missing")


def test_startup_vms_cannot_be_run_to_a_target():
    startup = BASE.replace("iterations = 50", 'iterations = 1\nmode = "startup"')
    assert problems("[stop]\nci_percent = 0.02\n", startup) == [
        "vms.cpython.mode: a startup-time VM runs one iteration per execution, which [stop] cannot estimate a "
        "steady state from; use executions instead of [stop]"]


def test_schema_shows_the_table():
    schema = json_schema()
    assert "executions" not in schema.get("required", [])
    stop = schema["$defs"]["Stop"]["properties"]
    assert {"ci_percent", "ci_width", "confidence", "min_executions", "max_executions", "estimate",
            "adapt_iterations", "max_iterations", "wps"} <= set(stop)
    assert stop["estimate"]["enum"] == ["pilot", "warmup_stats"]
    assert set(schema["$defs"]["Wps"]["properties"]) == {"min_param", "max_param", "session"}
