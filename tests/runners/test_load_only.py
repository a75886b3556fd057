"""Load-only mode (PROTOCOL.md) in all eight runners, on real broken benchmarks (tests/broken_benchmarks.py):
a benchmark that cannot load fails the load with the language's own error as the runner's last line; one
that loads but fails at its first iteration passes the load and fails the run, said in the language's words.
"""

from __future__ import annotations

import pytest

from broken_benchmarks import BROKEN, LOAD, missing_tools, write_suite
from iteration_runners.protocol import ENV_LOAD_ONLY, ProtocolError, parse_load_document
from real_parts import missing_real_part
from runner_helpers import run_runner
from supervisor.experiment.model import load_experiment
from supervisor.launch.process import error_line
from supervisor.launch.runner_command import runner_launch


def _launch(tmp_path, name: str, *, load_only: bool):
    lang = BROKEN[name].lang
    if lang in missing_tools():
        missing_real_part(missing_tools()[lang])
    exp_file = write_suite(tmp_path, [name])
    exp, _ = load_experiment(str(exp_file))
    return runner_launch(exp, tmp_path, str(exp_file), name, lang, lang, home=str(tmp_path), load_only=load_only)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_load_finds_what_loading_can_and_only_that(tmp_path, name):
    broken = BROKEN[name]
    launch = _launch(tmp_path, name, load_only=True)
    assert launch.env[ENV_LOAD_ONLY] == "1"
    out = run_runner(launch.argv, launch.env, timeout=120)
    if broken.caught_by == LOAD:
        assert out.returncode in (1, 2) and out.document == b"", out.stderr
        said = error_line(out.stderr)
        assert said is not None and broken.says in said and ": error: " in said, out.stderr
        assert broken.fix in said, said
    else:
        assert out.returncode == 0, out.stderr
        parse_load_document(out.document)      # the runner's word that the benchmark loaded


@pytest.mark.parametrize("name", sorted(n for n, b in BROKEN.items() if b.caught_by != LOAD))
def test_a_first_iteration_failure_is_said_in_the_language_s_words(tmp_path, name):
    launch = _launch(tmp_path, name, load_only=False)
    out = run_runner(launch.argv, launch.env, timeout=120)
    assert out.returncode != 0 and out.document == b""
    said = error_line(out.stderr)
    if BROKEN[name].lang == "c":          # a crash has no words: the signal is the reason (checked by check)
        assert out.returncode == -6
    else:
        assert said is not None and BROKEN[name].says in said and ": error: " in said, out.stderr
        assert "0x" not in said            # never a pointer ("[C]: at 0x...")


@pytest.mark.parametrize("raw, why", [
    (b"", "no load-only document"),
    (b'{"protocol_version": 1, "load_only": 1}', "expected"),
    (b'{"protocol_version": true, "load_only": true}', "expected"),
    (b'{"protocol_version": 1, "load_only": true, "x": 0}', "expected"),
    (b'{"protocol_version": 1, "wallclock_times": [0.1]}', "expected"),
    (b"{nope", "not valid JSON"),
])
def test_the_validator_takes_only_the_load_only_document(raw, why):
    with pytest.raises(ProtocolError, match=why):
        parse_load_document(raw)
    parse_load_document(b'{"protocol_version": 1, "load_only": true}')
