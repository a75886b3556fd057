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


# -- issue 10 §6: bounds, every problem on its own line ------------------------------------------------

def err_lines(text: str) -> list[str]:
    """All problem lines of a refused file; each names the file."""
    with pytest.raises(ColdrunError) as e:
        parse_experiment(text.encode(), "exp.toml")
    lines = str(e.value).split("\n")
    assert all(ln.startswith("exp.toml: ") for ln in lines), lines
    return lines


TOP = "executions = 2"


@pytest.mark.parametrize("old,new,field,fragment", [
    (TOP, "executions = 9223372036854775807", "executions:", "more than 100,000"),
    (TOP, "executions = 10000000", "executions:", "more than 100,000"),
    (TOP, "executions = true", "executions:", "integer"),
    (TOP, "executions = 2.0", "executions:", "integer"),
    (TOP, TOP + "\nexecution_timeout = nan", "execution_timeout:", "not nan"),
    (TOP, TOP + "\nexecution_timeout = inf", "execution_timeout:", "at most 30 days"),
    (TOP, TOP + "\nexecution_timeout = -inf", "execution_timeout:", "negative"),
    (TOP, TOP + "\nexecution_timeout = 0", "execution_timeout:", "at least 1s"),
    (TOP, TOP + '\nexecution_timeout = "500ms"', "execution_timeout:", "at least 1s"),
    (TOP, TOP + "\nexecution_timeout = " + "9" * 400, "execution_timeout:", "at most 30 days"),
    (TOP, TOP + '\nexecution_timeout = "' + "9" * 400 + 's"', "execution_timeout:", "at most 30 days"),
    (TOP, TOP + '\nheap_limit = "1KiB"', "heap_limit:", "at least 64MiB"),
    (TOP, TOP + '\nheap_limit = "' + "9" * 400 + 'TiB"', "heap_limit:", "more than 1EiB"),
    (TOP, TOP + '\nstack_limit = "0B"', "stack_limit:", "at least 1MiB"),
    (TOP, TOP + '\nskip = ["*:*:*"]', "skip:", "nothing to run"),
    (TOP, TOP + '\nskip = ["fib:cpython:*", "nope:*:*"]', "skip:", "nothing to run"),
    (TOP, TOP + "\nseed = -1", "seed:", ""),
    (TOP, TOP + "\n[waits]\ntemperature_tolerance = nan", "waits.temperature_tolerance:", "finite"),
    (TOP, TOP + "\n[waits]\nboot_settle = inf", "waits.boot_settle:", "30 days"),
    (TOP, TOP + "\n[mail]\nquota = true", "mail.quota:", "integer"),
    ("iterations = 5", "iterations = 9223372036854775807", "vms.cpython.iterations:", "more than 100,000"),
    ("iterations = 5", "iterations = 1e9", "vms.cpython.iterations:", "integer"),
    ("iterations = 5", "iterations = 1000000000", "vms.cpython.iterations:", "more than 100,000"),
    ("iterations = 5", "iterations = true", "vms.cpython.iterations:", "integer"),
    ("fib = 10", "fib = 4294967296", "benchmarks.fib:", "2147483647"),
    ("fib = 10", "fib = false", "benchmarks.fib:", "integer"),
    ('target = "bench.py"', 'target = "be\\u0000nch.py"', "variants.py.target:", "NUL"),
    ('executable = "python3"', 'executable = "python3"\nenv = {"A\\u0000" = "x"}', r'vms.cpython.env."A\x00"', "NUL"),
])
def test_run_time_failures_are_refused_up_front(old, new, field, fragment):
    """Each value the issue saw crash or fail at run time is one line naming the field."""
    assert old in BASE
    lines = err_lines(BASE.replace(old, new, 1))
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"exp.toml: {field}"), lines
    assert fragment in lines[0], lines


def test_bounds_accept_their_edges():
    text = BASE.replace("iterations = 5", "iterations = 100000").replace(
        TOP, 'executions = 100000\nheap_limit = "64MiB"\nstack_limit = "1MiB"\nexecution_timeout = "1s"\n'
             'skip = ["nope:*:*"]\nseed = 9223372036854775807').replace("fib = 10", "fib = -2147483648")
    exp = parse_experiment(text.encode(), "exp.toml")
    assert (exp.executions, exp.vms["cpython"].iterations) == (100000, 100000)
    assert (exp.heap_limit, exp.stack_limit, exp.execution_timeout) == (64 << 20, 1 << 20, 1.0)


def test_job_count_over_the_schedule_cap_names_executions():
    text = BASE.replace(TOP, "executions = 50001").replace("fib = 10", "fib = 10\nfact = 3")
    [line] = err_lines(text)
    assert line.startswith("exp.toml: executions: 50,001 executions x 2 ") and "100,002 jobs" in line


def test_several_problems_each_get_their_own_line():
    text = BASE.replace(TOP, 'executions = 0\nheap_limit = "1KiB"\nexecution_timeout = nan\nexecutoins = 3') \
        .replace("iterations = 5", "iterations = true").replace('target = "bench.py"', 'target = "a\\u0000"')
    lines = err_lines(text)
    joined = "\n".join(lines)
    assert "more problem" not in joined
    for field in ("executions:", "heap_limit:", "execution_timeout:", "executoins: unknown key; did you mean",
                  "vms.cpython.iterations:", "variants.py.target:"):
        assert sum(ln.startswith(f"exp.toml: {field}") for ln in lines) == 1, (field, lines)
    assert len(lines) == 6


def test_missing_variants_are_each_named():
    lines = err_lines(BASE.replace('variants = ["py"]', 'variants = ["pypy", "py", "jy"]'))
    assert lines == ["exp.toml: vms.cpython.variants.0: names 'pypy', which is not under [variants]; "
                     "add [variants.pypy] or fix the name",
                     "exp.toml: vms.cpython.variants.2: names 'jy', which is not under [variants]; "
                     "add [variants.jy] or fix the name"]


@pytest.mark.parametrize("commands,expected", [
    ('[{shel = "x"}]', ["pre_execution.0.shell: required field is missing",
                        "pre_execution.0.shel: unknown key; did you mean 'shell'?"]),
    ('["sync"]', ['pre_execution.0: a command is a list of strings like ["sync"]']),
    ("[[]]", ["pre_execution.0: List should have at least 1 item"]),
    ('[["sync", 1]]', ["pre_execution.0.1: Input should be a valid string"]),
    ("[{shell = 3}]", ["pre_execution.0.shell: Input should be a valid string"]),
])
def test_a_bad_command_is_explained_by_the_form_written(commands, expected):
    lines = err_lines(BASE.replace(TOP, f"{TOP}\npre_execution = {commands}"))
    assert len(lines) == len(expected), lines
    for line, want in zip(sorted(lines), sorted(expected)):
        assert line.startswith(f"exp.toml: {want}"), (line, want)


@pytest.mark.parametrize("nesting", ["[" * 1000 + "]" * 1000, "[" * 100000 + "]" * 100000, "[" * 100000,
                                     "{a = " * 5000 + "1" + "}" * 5000, "[{b = " * 2000 + "1"])
def test_deep_nesting_is_one_line(nesting):
    """tomllib recurses per level: its RecursionError is the one line, in far less than a second."""
    import time
    t = time.perf_counter()
    lines = err_lines(BASE.replace(TOP, f"{TOP}\npre_execution = {nesting}"))
    assert lines == ["exp.toml: arrays or tables nested too deeply; an experiment needs at most 3 levels: "
                     "check for unclosed or repeated [ or {"]
    assert time.perf_counter() - t < 1.0


def test_nesting_that_parses_is_judged_by_its_field():
    [line] = err_lines(BASE.replace(TOP, f"{TOP}\npre_execution = {'[' * 40}{']' * 40}"))
    assert line == "exp.toml: pre_execution.0.0: Input should be a valid string"


def test_brackets_in_strings_and_comments_do_not_count_as_nesting():
    deep = "[" * 40
    text = BASE.replace(TOP, f'{TOP}  # {deep}\npre_execution = [["echo", "{deep}", \'{deep}\', """{deep}"""]]')
    exp = parse_experiment(text.encode(), "exp.toml")
    assert exp.pre_execution[0][1] == deep


def test_toml_numbers_too_long_for_python_are_one_line():
    [line] = err_lines(BASE.replace("fib = 10", "fib = " + "9" * 5000))
    assert "malformed TOML" in line


def test_check_and_start_share_the_skip_matcher():
    from supervisor.boot.kinds import plain
    from supervisor.experiment import model
    assert plain.should_skip is model.should_skip     # the kinds plan with the model's matcher
    assert model.should_skip("fib:cpython:py", ["f*:*:*"]) and not model.should_skip("fib:cpython:py", ["x:*:*"])


@pytest.mark.parametrize("setting, expected", [
    ('turbo = "sometimes"', 'platform.turbo: must be true, false, "off", "on" or "ignore"'),
    ("aslr = 2", 'platform.aslr: must be true, false or "ignore"'),
    ('perf_max_sample_rate = "5"', 'platform.perf_max_sample_rate: must be an integer or "ignore"'),
    ("overcommit_memory = [1]", 'platform.overcommit_memory: must be an integer, "report" or "ignore"'),
    ("perf_event_paranoid = 2", "platform.perf_event_paranoid: 2 would keep the benchmark user from opening"),
])
def test_other_unions_are_one_line_naming_every_form(setting, expected):
    [line] = err_lines(BASE + f"[platform]\n{setting}\n")
    assert line.startswith(f"exp.toml: {expected}"), line


def test_dict_key_problems_name_the_key_not_a_tag():
    [line] = err_lines(BASE.replace("fib = 10", '"fi b" = 10'))
    assert line.startswith('exp.toml: benchmarks."fi b": names may only use')


@pytest.mark.parametrize("table, value, field, fragment", [
    ("platform", 'governor = "turbo-please"', "platform.governor:", "is not a cpufreq governor the kernel knows"),
    ("platform", 'energy_performance_preference = "fast"', "platform.energy_performance_preference:",
     "balance_performance"),
    ("platform", 'energy_performance_preference = "256"', "platform.energy_performance_preference:", ""),
    ("platform", 'malloc_options = "cfgruxZ"', "platform.malloc_options:", "(Z)"),
    ("mail", 'to = ["-oQ/tmp/x"]', "mail.to:", 'nothing starting with "-"'),
    ("mail", 'to = ["a b@example.org"]', "mail.to:", "is not a mail address"),
    ("mail", 'to = ["x@"]', "mail.to:", "is not a mail address"),
])
def test_platform_values_and_mail_recipients_are_from_their_vocabulary(table, value, field, fragment):
    """Issue 25: checked before any machine is touched (a bad one is a start that dies at its first boot)."""
    lines = err_lines(BASE + f"\n[{table}]\n{value}\n")
    assert len(lines) == 1 and lines[0].startswith(f"exp.toml: {field}") and fragment in lines[0], lines


@pytest.mark.parametrize("value", ['governor = "schedutil"', 'governor = "ignore"',
                                   'energy_performance_preference = "balance_power"',
                                   'energy_performance_preference = "128"', 'malloc_options = "CFGJ<>"'])
def test_the_kernel_s_own_values_are_accepted(value):
    parse_experiment((BASE + f"\n[platform]\n{value}\n").encode(), "exp.toml")
    parse_experiment((BASE + '\n[mail]\nto = ["root", "lab+coldrun@example.org"]\n').encode(), "exp.toml")


def test_pre_and_post_commands_that_cannot_run_are_each_named(tmp_path):
    from supervisor.boot.user_commands import command_problems

    tool = tmp_path / "cool-down"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o644)              # there, but not executable
    exp = parse_experiment((f'pre_execution = [["{tool}"], ["sync"], {{shell = "if then fi"}}]\n'
                               'post_execution = [["no-such-command-anywhere"], {shell = "true"}]\n' + BASE).encode(),
                              "exp.toml")
    first, shell, post = command_problems(exp, "exp.toml")
    assert first == (f"exp.toml: pre_execution[0]: '{tool}' does not exist or is not executable; give an installed "
                     "program's absolute path")
    assert shell.startswith("exp.toml: pre_execution[2]: /bin/sh cannot parse 'if then fi': ")   # then sh's words
    assert post == ("exp.toml: post_execution[0]: 'no-such-command-anywhere' is not found on PATH; give an installed "
                    "program's absolute path")
