"""Every language runner through the whole supervisor: a tiny experiment per language, run with
`coldrun start --simulate-reboots` for real, exported as a native bundle and checked record by record.

A missing interpreter skips its language, naming the Debian package to install.  Also one startup-time
run (CPython) and one instrumented run (PyPy) through the supervisor.
"""

from __future__ import annotations

import bz2
import json
import os
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from coldrun_helpers import NO_WAITS, REPO, coldrun, run_and_export
from real_parts import missing_real_part
from root_runs import runs_as_invoker  # tests/root_runs.py: as root, benchmarks run as you

EXECUTIONS = 2
ITERATIONS = 5
PARAM = 2000


@dataclass(frozen=True)
class Lang:
    runner: str
    tool: str            # interpreter (or compiler, for c) that must be on PATH
    package: str         # Debian package that provides it
    target: str          # benchmark file name the runner expects
    source: str          # the benchmark, one run_iter(param)


LANGS = {
    "python": Lang("python", "python3", "python3", "bench.py",
                   "def run_iter(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"),
    "c": Lang("c", "cc", "gcc", "bench.so",
              "volatile long sink;\nvoid run_iter(int n) {\n  long s = 0;\n"
              "  for (int i = 0; i < n; i++) s += (long)i * i;\n  sink = s;\n}\n"),
    "pypy": Lang("pypy", "pypy3", "pypy3", "bench.py",
                 "def run_iter(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"),
    "lua": Lang("lua", "luajit", "luajit", "bench.lua",
                "function run_iter(n)\n  local s = 0\n  for i = 1, n do s = s + i * i end\n  return s\nend\n"),
    "javascript": Lang("javascript", "node", "nodejs", "bench.js",
                       "function run_iter(n) {\n  var s = 0;\n  for (var i = 0; i < n; i++) s += i * i;\n"
                       "  return s;\n}\n"),
    "java": Lang("java", "java", "openjdk-17-jdk-headless", "KrunEntry.class",
                 "class KrunEntry implements BaseKrunEntry {\n  static long sink;\n"
                 "  public void run_iter(int n) { long s = 0; for (int i = 0; i < n; i++) s += (long) i * i; "
                 "sink = s; }\n}\n"),
    "ruby": Lang("ruby", "ruby", "ruby", "bench.rb",
                 "def run_iter(n)\n  s = 0\n  n.times { |i| s += i * i }\n  s\nend\n"),
    "php": Lang("php", "php", "php-cli", "bench.php",
                "<?php\nfunction run_iter($n) {\n  $s = 0;\n  for ($i = 0; $i < $n; $i++) { $s += $i * $i; }\n"
                "  return $s;\n}\n"),
}


def require(lang: Lang) -> None:
    if shutil.which(lang.tool) is None:
        missing_real_part(f"{lang.tool} is not installed (apt-get install {lang.package})")
    if lang.runner == "java" and shutil.which("javac") is None:
        missing_real_part("javac is not installed (apt-get install openjdk-17-jdk-headless)")
    if lang.runner == "javascript" and not Path(os.environ.get("COLDRUN_NODE_INCLUDE",
                                                               "/usr/include/node"), "node_api.h").is_file():
        missing_real_part("Node.js headers are missing for the runner's addon (apt-get install libnode-dev)")
    if lang.runner == "c" and not (REPO / "iteration_runners" / "c" / "iterations_runner").is_file():
        missing_real_part("the C iteration runner is not built (python setup.py build_ext --inplace)")


def write_benchmark(lang: Lang, bench_dir: Path) -> None:
    bench_dir.mkdir(parents=True)
    if lang.runner == "c":
        src = bench_dir / "bench.c"
        src.write_text(lang.source)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(bench_dir / "bench.so"), str(src)],
                       check=True, capture_output=True)
    elif lang.runner == "java":
        from iteration_runners import languages
        classes, _ = languages.build_java()       # benchmarks compile against the runner's BaseKrunEntry
        src = bench_dir / "KrunEntry.java"
        src.write_text(lang.source)
        subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", str(classes), "-d", str(bench_dir),
                        str(src)], check=True, capture_output=True)
    else:
        (bench_dir / lang.target).write_text(lang.source)


def make_experiment(tmp: Path, lang: Lang, *, executions: int = EXECUTIONS, iterations: int = ITERATIONS,
                    vm_extra: str = "", param: int = PARAM) -> Path:
    write_benchmark(lang, tmp / "benchmarks" / "sumsq")
    executable = "" if lang.runner == "c" else f'executable = "{lang.tool}"'
    text = f'name = "lang-{lang.runner}"\nexecutions = {executions}\nexecution_timeout = "2min"\n{NO_WAITS}' + \
        textwrap.dedent(f"""\
        [benchmarks]
        sumsq = {param}

        [variants.default]
        target = "{lang.target}"

        [vms.{lang.runner}]
        runner = "{lang.runner}"
        {executable}
        iterations = {iterations}
        variants = ["default"]
        """) + vm_extra
    path = tmp / "exp.toml"
    path.write_text(runs_as_invoker(text))
    return path


def check_counters(rec: dict, iterations: int) -> None:
    """counters.available agrees with the per-core lists (all or nothing, one entry per iteration)."""
    per_core = [rec[k] for k in ("core_cycle_counts", "aperf_counts", "mperf_counts")]
    if rec["counters"]["available"]:
        assert rec["counters"]["reason"] is None
        assert per_core[0] and all(len(cores) == len(per_core[0]) for cores in per_core)
        assert all(len(core) == iterations for cores in per_core for core in cores)
    else:
        assert isinstance(rec["counters"]["reason"], str) and rec["counters"]["reason"]
        assert per_core == [[], [], []]


@pytest.mark.parametrize("name", list(LANGS))
def test_language_runs_through_the_supervisor(name, tmp_path):
    lang = LANGS[name]
    require(lang)
    bundle, _ = run_and_export(tmp_path, make_experiment(tmp_path, lang))
    key = f"sumsq:{lang.runner}:default"
    assert [(j["key"], j["pexec"], j["state"], j["attempts"]) for j in bundle["jobs"]] == \
        [(key, p, "completed", 1) for p in range(EXECUTIONS)]
    recs = bundle["executions"]
    assert len(recs) == EXECUTIONS and sorted(r["pexec"] for r in recs) == list(range(EXECUTIONS))
    for rec in recs:
        assert rec["key"] == key and rec["state"] == "completed" and rec["exit_code"] == 0, rec.get("reason")
        assert rec["iterations"] == ITERATIONS and rec["param"] == PARAM and rec["mode"] == "iterations"
        times = rec["wallclock_times"]
        assert len(times) == ITERATIONS and all(t > 0 for t in times)
        check_counters(rec, ITERATIONS)
        assert "startup" not in rec and "instrumentation" not in rec
    # Each process execution ran in its own runner process, each at its own boot.
    assert len({r["runner_pid"] for r in recs}) == EXECUTIONS
    assert len({r["boot"] for r in recs}) == EXECUTIONS


def test_startup_mode_through_the_supervisor(tmp_path):
    lang = LANGS["python"]
    require(lang)
    exp = make_experiment(tmp_path, lang, executions=1, iterations=1, vm_extra='mode = "startup"\n')
    bundle, _ = run_and_export(tmp_path, exp)
    (rec,) = bundle["executions"]
    assert rec["state"] == "completed" and rec["mode"] == "startup"
    st = rec["startup"]
    assert st["seconds"] > 0 and rec["wallclock_times"] == [st["seconds"]]
    assert set(st) == {"clock", "wrapper_time", "runner_time", "seconds"}
    assert rec["argv"][0].endswith("startup_wrapper")
    # The Krun export keeps the shape of the paper's startup experiment: the two clock readings.
    state = tmp_path / "state"
    out = tmp_path / "krun.json.bz2"
    assert coldrun("export", str(state), "--format", "krun", "-o", str(out)).returncode == 0
    krun = json.loads(bz2.decompress(out.read_bytes()))
    # Krun's keys, plus execution_states (contracts/state_view.py: crashed vs errored, running vs not run).
    # startup_keys: which keys those are (contracts/state_view.py).
    assert set(krun) == {"wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts", "pexec_flags",
                         "eta_estimates", "audit", "config", "error_flag", "execution_states", "startup_keys"}
    assert krun["wallclock_times"]["sumsq:python:default"] == [[float(st["wrapper_time"]),
                                                                 float(st["runner_time"])]]
    assert krun["startup_keys"] == ["sumsq:python:default"]


def test_instrumentation_through_the_supervisor(tmp_path):
    lang = LANGS["pypy"]
    require(lang)
    # A full collection in every iteration: allocation alone collects only when it outgrows the
    # nursery, which PyPy sizes from the CPU's cache (a 300k-list loop collected here, not on CI's CPU).
    lang = Lang("pypy", "pypy3", "pypy3", "bench.py", "import gc\ndef run_iter(n):\n    gc.collect()\n    return n\n")
    exp = make_experiment(tmp_path, lang, executions=1, iterations=3, vm_extra="instrument = true\n")
    check = coldrun("check", str(exp))
    assert check.returncode == 0 and "instrument = true perturbs the measurement" in check.stdout
    bundle, stderr = run_and_export(tmp_path, exp)
    assert "perturbs the measurement" in stderr            # logged as a warning at start
    (rec,) = bundle["executions"]
    assert rec["state"] == "completed" and rec["instrument"] is True
    inst = rec["instrumentation"]
    assert inst["vm"] == "pypy"
    assert len(inst["raw_vm_events"]) == len(inst["gc_times"]) == 3
    assert all(t > 0 for t in inst["gc_times"])
    # Issue 26 item 11: PyPy's log goes into the runner's own HOME (made by coldrun, writable by the runner's
    # user alone), never a predictable name in the shared /tmp.
    env = rec["environment"]
    log_dir = os.path.dirname(env["PYPYLOG"].split(":", 1)[1])
    assert log_dir == env["HOME"] == str(tmp_path / "state" / "home"), env
    home = os.stat(log_dir)
    assert home.st_mode & 0o022 == 0 and home.st_uid == os.geteuid()


def test_counters_available_through_the_supervisor(tmp_path):
    """The "available" branch, with libkruntime's software-event test source standing in for the PMU."""
    lang = LANGS["lua"] if shutil.which("luajit") else LANGS["python"]
    require(lang)
    exp = make_experiment(tmp_path, lang, executions=1,
                          vm_extra='env = {COLDRUN_COUNTERS = "test-software-events"}\n')
    bundle, _ = run_and_export(tmp_path, exp)
    (rec,) = bundle["executions"]
    assert rec["state"] == "completed" and rec["environment"]["COLDRUN_COUNTERS"] == "test-software-events"
    if not rec["counters"]["available"]:
        pytest.skip(f"per-CPU perf events are not permitted here: {rec['counters']['reason']}")
    check_counters(rec, ITERATIONS)


def test_debug_flag_reaches_the_runner_after_every_reexec(tmp_path):
    lang = LANGS["python"]
    require(lang)
    exp = make_experiment(tmp_path, lang)
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--debug", "--state-dir", str(state), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = tmp_path / "native.json"
    assert coldrun("export", str(state), "--format", "native", "-o", str(out)).returncode == 0
    recs = json.loads(out.read_text())["executions"]
    assert len(recs) == EXECUTIONS
    for rec in recs:     # each ran in a re-executed supervisor that got no --debug of its own
        assert rec["debug"] is True and rec["argv"][-1] == "1"
        assert f"iteration {ITERATIONS}/{ITERATIONS} took" in rec["stderr_tail"]
