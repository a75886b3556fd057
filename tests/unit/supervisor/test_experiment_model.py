import json

import pytest

from supervisor.errors import ColdrunError
from supervisor.experiment.model import command_argv, json_schema, parse_experiment

BASE = '''
name = "x"
executions = 2
[benchmarks]
fib = 10
[variants.py]
target = "bench.py"
[vms.cpython]
runner = "python"
executable = "python3"
iterations = 5
variants = ["py"]
'''


def err(text: str) -> str:
    with pytest.raises(ColdrunError) as e:
        parse_experiment(text.encode(), "exp.toml")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("exp.toml: ")
    return msg


def test_defaults_are_krun_values():
    exp = parse_experiment(BASE.encode(), "exp.toml")
    assert exp.heap_limit == 2 << 30 and exp.stack_limit == 8 << 20
    assert exp.waits.boot_settle == 120 and exp.waits.sync == 30 and exp.waits.temperature_tolerance == 3
    assert exp.mail.quota == 5 and exp.order == "round-robin" and exp.execution_timeout is None


def test_human_units_and_commands():
    text = BASE.replace("[benchmarks]", 'execution_timeout = "3min"\nheap_limit = "512MiB"\n'
                        'pre_execution = [["sync"], {shell = "echo hi"}]\n[benchmarks]', 1)
    exp = parse_experiment(text.encode(), "exp.toml")
    assert exp.execution_timeout == 180 and exp.heap_limit == 512 << 20
    assert command_argv(exp.pre_execution[0]) == ["sync"]
    assert command_argv(exp.pre_execution[1]) == ["/bin/sh", "-c", "echo hi"]


def test_unknown_keys_suggest_nearest():
    assert "vms.cpython.iteration: unknown key; did you mean 'iterations'" in err(
        BASE.replace("iterations = 5", "iterations = 5\niteration = 4"))
    assert "did you mean 'executions'" in err(BASE.replace("executions = 2", "executions = 2\nexecution = 1"))
    assert "platform.governer" in err(BASE + '[platform]\ngoverner = "performance"\n')


def test_type_errors_name_the_field():
    assert "vms.cpython.iterations" in err(BASE.replace("iterations = 5", 'iterations = "many"'))
    assert "executions" in err(BASE.replace("executions = 2", "executions = 0"))


def test_variant_must_exist_and_names_are_checked():
    assert "not under [variants]" in err(BASE.replace('variants = ["py"]', 'variants = ["pypy"]'))
    assert "no spaces or ':'" in err(BASE.replace("fib = 10", '"fi b" = 10'))


def test_skip_pattern_shape():
    assert "bench:vm:variant" in err(BASE.replace("executions = 2", 'executions = 2\nskip = ["fib:*"]'))


def test_malformed_toml_is_one_line():
    assert "malformed TOML" in err("name = [")


def test_schema_is_json_and_forbids_extra():
    schema = json_schema()
    json.dumps(schema)
    assert schema["additionalProperties"] is False
    assert {"vms", "benchmarks", "variants", "platform", "rerun"} <= set(schema["properties"])
