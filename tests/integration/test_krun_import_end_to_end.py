"""Bringing a Krun experiment over, as a user would: `coldrun import-krun` on a config in Krun's form,
`coldrun check`, then `coldrun start --simulate-reboots` for real and the native export.

The Java benchmark is Krun's (``class KrunEntry implements BaseKrunEntry``, target ``KrunEntry``),
compiled with the documented `coldrun build-java DIR`; the external suite is a Krun
ExternalSuiteVMDef script, unmodified.  A Python 2 benchmark stops the experiment at its first execution
with a line naming Python 2, the interpreter and the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coldrun_helpers import coldrun, run_and_export
from real_parts import missing_real_part, python27_interpreter
from root_runs import runs_as_invoker  # tests/root_runs.py: as root, benchmarks run as you

SYSTEM_PYTHON = "/usr/bin/python3"
PARAM = 3000
ITERATIONS = 4

KRUN_JAVA = {
    "KrunEntry.java": "class KrunEntry implements BaseKrunEntry {\n"
                      "  public void run_iter(int param) { SumSq.runIter(param); }\n}\n",
    "SumSq.java": "class SumSq {\n  static long sink;\n  static void runIter(int n) {\n"
                  "    long s = 0; for (int i = 0; i < n; i++) s += (long) i * i; sink = s;\n  }\n}\n",
}
# Krun's examples/ext_script.py, plus a check that it gets the benchmark's name (Krun's argument).
EXT_SCRIPT = f"""#!{SYSTEM_PYTHON}
import json, sys
_, benchmark, iters, param, debug = sys.argv
iters = int(iters)
if benchmark != "sumsq":
    sys.exit("expected the benchmark's name, got %r" % benchmark)
sys.stdout.write("%s\\n" % json.dumps({{
    "wallclock_times": [int(param) / 1e6 + i / 1e3 for i in range(iters)],
    "core_cycle_counts": [], "aperf_counts": [], "mperf_counts": []}}))
"""


def krun_config(java: str, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        import os
        from krun.vm_defs import (PythonVMDef, JavaVMDef, NativeCodeVMDef, ExternalSuiteVMDef)
        from krun import EntryPoint
        from krun.util import fatal
        from distutils.spawn import find_executable

        JAVA_BIN = find_executable({java!r})
        if JAVA_BIN is None:
            fatal("Java binary not found in path")
        DIR = os.getcwd()

        MAIL_TO = []
        HEAP_LIMIT = 2097152  # KiB
        STACK_LIMIT = 8192  # KiB

        VARIANTS = {{
            "default-java": EntryPoint("KrunEntry", subdir="java"),
            "default-python": EntryPoint("bench.py", subdir="python"),
            "default-c": EntryPoint("bench.so", subdir="c"),
            "default-ext": None,
        }}

        ITERATIONS_ALL_VMS = {ITERATIONS}

        VMS = {{
            'Java': {{'vm_def': JavaVMDef(JAVA_BIN), 'variants': ['default-java'],
                      'n_iterations': ITERATIONS_ALL_VMS}},
            'CPython': {{'vm_def': PythonVMDef({SYSTEM_PYTHON!r}, env={{"BENCH_MODE": "krun"}}),
                         'variants': ['default-python'], 'n_iterations': ITERATIONS_ALL_VMS}},
            'C': {{'vm_def': NativeCodeVMDef(), 'variants': ['default-c'], 'n_iterations': ITERATIONS_ALL_VMS}},
            'Ext': {{'vm_def': ExternalSuiteVMDef(os.path.join(DIR, "ext_script.py")),
                     'variants': ['default-ext'], 'n_iterations': ITERATIONS_ALL_VMS}},
        }}

        BENCHMARKS = {{'sumsq': {PARAM}}}
        SKIP = ["nosuch:*:*"]
        N_EXECUTIONS = 2
        TEMP_READ_PAUSE = 0
        EXECUTION_TIMEOUT = 120
        ENABLE_PINNING = False
        AMPERF_RATIO_BOUNDS = 0.995, 1.005
        AMPERF_BUSY_THRESHOLD = 5 * 10 ** 8
        PRE_EXECUTION_CMDS = ["echo pre >> " + os.path.join(DIR, "hooks.log")]
        POST_EXECUTION_CMDS = ["echo post >> " + os.path.join(DIR, "hooks.log")]
        """) + extra


def require_tools() -> None:
    for tool, package in (("java", "openjdk-17-jdk-headless"), ("javac", "openjdk-17-jdk-headless"),
                          ("cc", "gcc")):
        if shutil.which(tool) is None:
            missing_real_part(f"{tool} is not installed (apt-get install {package})")
    if not os.path.exists(SYSTEM_PYTHON):
        missing_real_part(f"{SYSTEM_PYTHON} is missing (apt-get install python3)")


def krun_experiment(tmp: Path, *, compile_java: bool = True) -> Path:
    """Krun's layout: <dir>/<name>.krun, <dir>/benchmarks/<bench>/<subdir>/<target>, the external script."""
    bench = tmp / "benchmarks" / "sumsq"
    for sub in ("java", "python", "c"):
        (bench / sub).mkdir(parents=True)
    for name, text in KRUN_JAVA.items():
        (bench / "java" / name).write_text(text)
    (bench / "python" / "bench.py").write_text("import os\nassert os.environ['BENCH_MODE'] == 'krun'\n"
                                               "def run_iter(n):\n    return sum(i * i for i in range(n))\n")
    (bench / "c" / "bench.c").write_text("volatile long sink;\nvoid run_iter(int n) {\n  long s = 0;\n"
                                         "  for (int i = 0; i < n; i++) s += (long)i * i;\n  sink = s;\n}\n")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(bench / "c" / "bench.so"), str(bench / "c" / "bench.c")],
                   check=True, capture_output=True)
    ext = tmp / "ext_script.py"
    ext.write_text(EXT_SCRIPT)
    ext.chmod(0o755)
    if compile_java:
        r = coldrun("build-java", str(bench / "java"))
        assert r.returncode == 0, r.stderr
        assert r.stdout == f"{bench / 'java'}: built (2 .java files)\n"
    config = tmp / "sumsq.krun"
    config.write_text(krun_config("java"))
    return config


def import_config(config: Path) -> Path:
    out = config.with_suffix(".toml")
    r = coldrun("import-krun", str(config), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"wrote {out}: 4 VMs, 4 keys (bench:vm:variant)"
    out.write_text(runs_as_invoker(out.read_text()))
    return out


def test_a_krun_experiment_imports_checks_and_runs(tmp_path):
    require_tools()
    exp = import_config(krun_experiment(tmp_path))
    check = coldrun("check", str(exp))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith(f"{exp}: OK, experiment 'sumsq'")

    records = run_and_export(tmp_path, exp)[0]["executions"]
    by_key: dict[str, list] = {}
    for rec in records:
        assert rec["state"] == "completed", (rec["key"], rec.get("reason"), rec.get("stderr_tail"))
        assert len(rec["wallclock_times"]) == ITERATIONS and rec["param"] == PARAM
        by_key.setdefault(rec["key"], []).append(rec)
    assert sorted(by_key) == ["sumsq:C:default-c", "sumsq:CPython:default-python", "sumsq:Ext:default-ext",
                              "sumsq:Java:default-java"]
    assert all(len(recs) == 2 for recs in by_key.values())
    # The external script's own numbers, through Krun's protocol and coldrun's.
    assert by_key["sumsq:Ext:default-ext"][0]["wallclock_times"] == [PARAM / 1e6 + i / 1e3 for i in range(ITERATIONS)]
    # PRE/POST_EXECUTION_CMDS ran around each of the 8 executions.
    assert (tmp_path / "hooks.log").read_text() == "pre\npost\n" * 8


def test_the_documented_classpath_route_compiles_for_a_makefile(tmp_path):
    require_tools()
    d = tmp_path / "java"
    d.mkdir()
    for name, text in KRUN_JAVA.items():
        (d / name).write_text(text)
    venv_bin = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run('javac -cp "$(coldrun build-java --classpath):." *.java', shell=True, cwd=d, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (d / "KrunEntry.class").is_file() and (d / "SumSq.class").is_file()
    again = coldrun("build-java", str(d))
    assert again.stdout == f"{d}: up to date (2 .java files)\n"


def test_an_uncompiled_java_benchmark_names_the_build_command(tmp_path):
    require_tools()
    exp = import_config(krun_experiment(tmp_path, compile_java=False))
    r = coldrun("check", str(exp))
    assert r.returncode == 1
    java_dir = tmp_path / "benchmarks" / "sumsq" / "java"
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("problem: ")]
    assert line.startswith(f"problem: {exp}: benchmarks.sumsq (vm Java, variant default-java): Java benchmark "
                           f"class ") and "KrunEntry.class missing: compile the 2 .java files there against " \
                                         "coldrun's runner classes with `coldrun build-java " in line
    rel = java_dir.relative_to(tmp_path)
    assert "make -C" not in line and f"{rel}/KrunEntry.class missing" in line
    assert coldrun("build-java").stderr == ("coldrun: build-java: give the directories of Java benchmark sources "
                                            "(or --classpath)\n")


PY2_BENCH = "def run_iter(n):\n    total = 0\n    for i in xrange(n):\n        total += i\n    return total\n"


def python2_experiment(tmp: Path, interpreter: str) -> Path:
    (tmp / "benchmarks" / "count" / "python").mkdir(parents=True)
    (tmp / "benchmarks" / "count" / "python" / "bench.py").write_text(PY2_BENCH)
    config = tmp / "py2.krun"
    config.write_text(textwrap.dedent(f"""\
        from krun.vm_defs import PythonVMDef
        from krun import EntryPoint
        HEAP_LIMIT = 2097152
        STACK_LIMIT = 8192
        VARIANTS = {{"default-python": EntryPoint("bench.py", subdir="python")}}
        VMS = {{"CPython": {{"vm_def": PythonVMDef({interpreter!r}), "variants": ["default-python"],
                             "n_iterations": 3}}}}
        BENCHMARKS = {{"count": 100}}
        N_EXECUTIONS = 3
        TEMP_READ_PAUSE = 0
        """))
    out = tmp / "py2.toml"
    r = coldrun("import-krun", str(config), "-o", str(out))
    assert r.returncode == 0, r.stderr
    out.write_text(runs_as_invoker(out.read_text()))
    return out


def test_a_python2_benchmark_stops_with_python2_the_interpreter_and_the_fix(tmp_path):
    if not os.path.exists(SYSTEM_PYTHON):
        missing_real_part(f"{SYSTEM_PYTHON} is missing (apt-get install python3)")
    exp = python2_experiment(tmp_path, SYSTEM_PYTHON)
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), timeout=300)
    assert r.returncode == 3, r.stderr[-3000:]       # stopped at the first execution, not 3 failed reboots
    reason = (state / "stop_reason").read_text()
    bench = tmp_path / "benchmarks" / "count" / "python" / "bench.py"
    assert reason.startswith("count:CPython:default-python: the runner cannot launch (runner exited with status 2 "
                             "(usage/setup) before any iteration: iterations_runner.py: error: ")
    assert (f"{bench} looks like Python 2 (NameError: name 'xrange' is not defined), but {SYSTEM_PYTHON} "
            f"(cpython ") in reason
    assert ('point the VM at a Python 2.7 interpreter (in its [vms.NAME] table: runner = "python", '
            'executable = "/usr/local/bin/python2.7"') in reason
    status = coldrun("status", str(state))
    assert "looks like Python 2" in status.stdout and SYSTEM_PYTHON in status.stdout
    log = (state / "log").read_text()
    assert "looks like Python 2" in log and "NameError: name 'xrange' is not defined" in log


def test_the_same_python2_benchmark_runs_under_python27(tmp_path):
    interpreter = python27_interpreter()
    if interpreter is None:
        pytest.skip("no Python 2.7 interpreter here (python2.7 or pyenv's 2.7.18); the fix cannot be shown")
    records = run_and_export(tmp_path, python2_experiment(tmp_path, interpreter))[0]["executions"]
    assert [(r["state"], len(r["wallclock_times"])) for r in records] == [("completed", 3)] * 3
