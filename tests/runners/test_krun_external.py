"""Runner krun-external: a Krun ExternalSuiteVMDef script, unmodified, behind coldrun's protocol."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from iteration_runners import RUNNERS_DIR
from runner_helpers import run_runner
from iteration_runners.protocol import parse_document

ADAPTER = RUNNERS_DIR / "krun_external.py"


def script(tmp_path: Path, body: str) -> Path:
    """An external-suite script as Krun's examples/ext_script.py is: argv benchmark, iters, param, debug."""
    path = tmp_path / "ext_script.py"
    path.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                    "_, benchmark, iters, param, debug = sys.argv\niters = int(iters)\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def run(ext: Path, *args: str):
    return run_runner([sys.executable, "-I", str(ADAPTER), str(ext), *args], {"COLDRUN_RESULTS_FD": "3"},
                      timeout=60)


def test_krun_json_on_stdout_becomes_a_protocol_document(tmp_path):
    ext = script(tmp_path, """
        assert not os.path.exists("/proc/self/fd/3"), "the results channel leaked to the script"
        sys.stderr.write("running %s with %s\\n" % (benchmark, param))
        print(json.dumps({"wallclock_times": [0.5] * iters, "core_cycle_counts": [],
                          "aperf_counts": [], "mperf_counts": []}))
    """)
    out = run(ext, "nbody", "4", "1000", "0")
    assert out.returncode == 0, out.stderr
    doc = parse_document(out.document, iterations=4)
    assert doc["wallclock_times"] == [0.5] * 4
    assert doc["counters"] == {"available": False,
                               "reason": "the Krun external suite reported no per-core counters"}
    assert out.stderr == "running nbody with 1000\n"     # the script gets the benchmark's name


def test_per_core_counts_are_kept(tmp_path):
    ext = script(tmp_path, """
        print(json.dumps({"wallclock_times": [0.1] * iters, "core_cycle_counts": [[7] * iters],
                          "aperf_counts": [[8] * iters], "mperf_counts": [[9] * iters]}))
    """)
    doc = parse_document(run(ext, "b", "2", "1", "0").document, iterations=2)
    assert doc["counters"] == {"available": True, "reason": None} and doc["aperf_counts"] == [[8, 8]]


@pytest.mark.parametrize("body, status, said", [
    ("sys.exit(3)", 1, "the external suite script exited with status 3"),
    ("print('not json')", 1, "the script's stdout is not Krun's JSON"),
    ("print(json.dumps({'wallclock_times': [1.0]}))", 1, "the script's output has ['wallclock_times'], not Krun's keys"),
    ("print('{\"wallclock_times\": [NaN], \"core_cycle_counts\": [], \"aperf_counts\": [], \"mperf_counts\": []}')",
     1, "the script's results are not finite numbers"),
])
def test_a_failing_script_is_one_error_line_and_no_document(tmp_path, body, status, said):
    out = run(script(tmp_path, body), "b", "1", "1", "0")
    assert out.returncode == status and not out.document
    assert out.stderr.strip().splitlines()[-1].startswith(f"krun_external.py: error: {said}")


def test_a_script_that_cannot_run_is_a_setup_error(tmp_path):
    out = run(tmp_path / "missing.py", "b", "1", "1", "0")
    assert out.returncode == 2 and "cannot run the external suite script" in out.stderr
    out = run_runner([sys.executable, "-I", str(ADAPTER), "x", "b"], {"COLDRUN_RESULTS_FD": "3"}, timeout=60)
    assert out.returncode == 2 and "expected a script and 4 arguments" in out.stderr
