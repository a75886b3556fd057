"""Krun-era Python 2 benchmarks: under Python 3 the runner says so in one line (the benchmark looks like
Python 2, which interpreter ran it, how to point the VM at another) and exits 2 (setup); under a Python
2.7 interpreter the same runner runs them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from real_parts import missing_real_part, python27_interpreter
from runner_helpers import check_success, run, write_python_benchmark

PY2_BENCHMARKS = {
    "xrange": ("def run_iter(n):\n    for i in xrange(n):\n        pass\n", r"NameError: name 'xrange' is not defined"),
    "print": ('print "loading"\ndef run_iter(n):\n    pass\n',
              r"SyntaxError: Missing parentheses in call to 'print'"),
    "iteritems": ("D = {1: 2}\ndef run_iter(n):\n    for k, v in D.iteritems():\n        pass\n",
                  r"AttributeError: 'dict' object has no attribute 'iteritems'"),
    "except-comma": ("def run_iter(n):\n    try:\n        pass\n    except ValueError, e:\n        pass\n",
                     r"SyntaxError: (multiple exception types|exception group) must be parenthesized"),
    "cPickle": ("import cPickle\ndef run_iter(n):\n    pass\n", r"ModuleNotFoundError: No module named 'cPickle'"),
}


def interpreters():
    found = [pytest.param("python", sys.executable, id="python")]
    found.append(pytest.param("pypy", shutil.which("pypy3"), id="pypy"))
    return found


@pytest.mark.parametrize("runner, interpreter", interpreters())
@pytest.mark.parametrize("kind", sorted(PY2_BENCHMARKS))
def test_python2_benchmark_under_python3_names_python2_the_interpreter_and_the_fix(tmp_path, runner,
                                                                                    interpreter, kind):
    if interpreter is None:
        missing_real_part("pypy3 is not installed (apt-get install pypy3)")
    source, evidence = PY2_BENCHMARKS[kind]
    bench = write_python_benchmark(tmp_path, source)
    outcome = run(runner, interpreter, bench, iterations=3)
    assert outcome.returncode == 2 and not outcome.document
    last = outcome.stderr.strip().splitlines()[-1]
    assert re.match(re.escape(f"iterations_runner.py: error: {bench} looks like Python 2 (") + evidence, last), last
    assert f"but {interpreter} (" in last
    if runner == "pypy":     # the paper's PyPy was PyPy 2: the pypy runner runs there too
        assert 'point the VM at a PyPy 2 (in its [vms.NAME] table: runner = "pypy", executable = ' in last
    else:
        assert ('point the VM at a Python 2.7 interpreter (in its [vms.NAME] table: runner = "python", '
                'executable = "/usr/local/bin/python2.7"; coldrun\'s python runner runs on 2.7; Debian 12 ships '
                'none: README, "Python 2")') in last
    assert "Traceback" in outcome.stderr      # the benchmark's own traceback stays above the line


def test_an_ordinary_failure_is_not_called_python2(tmp_path):
    bench = write_python_benchmark(tmp_path, "def run_iter(n):\n    return undefined_name\n")
    outcome = run("python", sys.executable, bench, iterations=2)
    assert outcome.returncode == 1 and "looks like Python 2" not in outcome.stderr
    # the traceback, then the runner's one line in Python's words
    assert outcome.stderr.strip().splitlines()[-2:] == [
        "NameError: name 'undefined_name' is not defined",
        "iterations_runner.py: error: the benchmark raised NameError: name 'undefined_name' is not defined"]


def test_the_pypy_runner_runs_on_python_2_as_pypy_2(tmp_path):
    # Before: ImportError: No module named util (the runner loaded its shared code with importlib.util),
    # so the paper's own PyPy (PyPy 2) could not run.  No PyPy 2 is packaged for Debian 12: CPython 2.7
    # with cffi (what the pypy runner needs of PyPy) stands in; COLDRUN_TEST_PY2_SITE may name a directory
    # holding cffi for it (pip install --target DIR cffi==1.15.1).
    interpreter = python27_interpreter()
    if interpreter is None:
        missing_real_part("no Python 2.7 interpreter here (python2.7 on PATH or pyenv's 2.7.18); nothing to run")
    site = os.environ.get("COLDRUN_TEST_PY2_SITE", "")
    env = dict(os.environ, PYTHONPATH=site)
    if subprocess.run([interpreter, "-c", "import cffi"], env=env, capture_output=True).returncode != 0:
        missing_real_part("Python 2.7 has no cffi: python2.7 -m pip install --target DIR cffi==1.15.1, then "
                          "COLDRUN_TEST_PY2_SITE=DIR (scripts/setup --for-tests does it)")
    bench = write_python_benchmark(tmp_path, PY2_BENCHMARKS["xrange"][0] + 'print "loaded"\n')
    outcome = run("pypy", interpreter, bench, iterations=4, extra_env={"PYTHONPATH": site})
    check_success(outcome, 4)
    assert outcome.stdout == "loaded\n"


def test_the_python_runner_runs_python2_benchmarks_under_python27(tmp_path):
    interpreter = python27_interpreter()
    if interpreter is None:
        missing_real_part("no Python 2.7 interpreter here (python2.7 on PATH or pyenv's 2.7.18); nothing to run")
    bench = write_python_benchmark(tmp_path, PY2_BENCHMARKS["xrange"][0] + 'print "loaded"\n')
    outcome = run("python", interpreter, bench, iterations=4, debug=True)
    check_success(outcome, 4)
    assert "libkruntime via ctypes" in outcome.stderr and outcome.stdout == "loaded\n"
