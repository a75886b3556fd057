"""Runner krun-external in the supervisor: the adapter's argv (the benchmark's name, no file), and the
benchmark user's access to the Krun script it runs."""

from __future__ import annotations

import sys

import pytest

from iteration_runners import RUNNERS_DIR
from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.launch.runner_access import EXECUTE, READ, needed_files
from supervisor.launch.runner_command import runner_launch

EXPERIMENT = """
name = "ext"
executions = 1
[benchmarks]
nbody = 15
[variants.default-ext]
[vms.Ext]
runner = "krun-external"
executable = "{script}"
args = ["--suite", "x"]
iterations = 7
variants = ["default-ext"]
"""


def test_the_adapter_runs_the_script_with_the_benchmark_name(tmp_path):
    script = tmp_path / "ext_script.py"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    exp = parse_experiment(EXPERIMENT.format(script=script).encode(), "exp.toml")
    # No benchmarks/ directory exists at all: Krun's external suites have no benchmark files.
    launch = runner_launch(exp, tmp_path, "exp.toml", "nbody", "Ext", "default-ext", home="/nonexistent",
                           debug=True)
    adapter = str(RUNNERS_DIR / "krun_external.py")
    assert launch.argv == [sys.executable, "-I", adapter, str(script), "--suite", "x", "nbody", "7", "15", "1"]
    assert launch.env["COLDRUN_RESULTS_FD"] == "3"
    needed = needed_files(launch, None)
    assert (adapter, READ, False) in needed and (str(script), EXECUTE, False) in needed
    assert needed[0] == (sys.executable, EXECUTE, False)


def test_a_variant_without_target_is_only_for_krun_external():
    text = EXPERIMENT.format(script="/bin/true").replace('runner = "krun-external"', 'runner = "external"')
    with pytest.raises(ColdrunError) as e:
        parse_experiment(text.encode(), "exp.toml")
    assert str(e.value) == ("exp.toml: variants.default-ext.target: required: vms.Ext (runner 'external') runs "
                            "a benchmark file; only runner 'krun-external' takes a variant without one")
