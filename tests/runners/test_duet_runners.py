"""Pair executions through the duet barrier, for every runner: two copies of
the same runner run at once and meet before each iteration; a runner whose
partner never starts fails with exit status 4 and the barrier's reason.

Side A's run_iter sleeps (or spins) param = SLOW_MS ms, side B's 1 ms, so
without the barrier B would run ahead by ~SLOW_MS per iteration."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from iteration_runners import runner_command
from iteration_runners.protocol import parse_document
from runner_helpers import RunnerOutcome, run_runner
from libkruntime import _kruntime
from test_lang_common import require_libkruntime, require_tool

ITERATIONS = 4
SLOW_MS = 100
EXIT_DUET = 4

# Each waits about n ms (LuaJIT has no sleep: it spins on CPU time).
BENCHMARKS = {
    "python": ("bench.py", "import time\ndef run_iter(n):\n    time.sleep(n / 1000.0)\n"),
    "pypy": ("bench.py", "import time\ndef run_iter(n):\n    time.sleep(n / 1000.0)\n"),
    "lua": ("bench.lua", "function run_iter(n)\n  local t = os.clock()\n"
                         "  while os.clock() - t < n / 1000 do end\nend\n"),
    "javascript": ("bench.js", "var cell = new Int32Array(new SharedArrayBuffer(4));\n"
                               "function run_iter(n) { Atomics.wait(cell, 0, 0, n); }\n"),
    "ruby": ("bench.rb", "def run_iter(n)\n  sleep(n / 1000.0)\nend\n"),
    "php": ("bench.php", "<?php\nfunction run_iter($n) { usleep($n * 1000); }\n"),
    "c": ("bench.so.c", "#include <unistd.h>\nvoid run_iter(int n) { usleep(n * 1000); }\n"),
    "java": ("KrunEntry.java", "class KrunEntry implements BaseKrunEntry {\n"
                               "  public void run_iter(int n) {\n"
                               "    try { Thread.sleep(n); } catch (InterruptedException e) {}\n"
                               "  }\n}\n"),
}
RUNNERS = list(BENCHMARKS)


def _benchmark(lang: str, directory: Path) -> str:
    name, text = BENCHMARKS[lang]
    src = directory / name
    src.write_text(text)
    if lang == "c":
        out = directory / "bench.so"
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
        return str(out)
    if lang == "java":
        from iteration_runners import languages

        classes, _ = languages.build_java()
        subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", str(classes), "-d", str(directory),
                        str(src)], check=True, capture_output=True)
        return str(directory / "KrunEntry.class")
    return str(src)


@pytest.fixture
def duet(request, tmp_path):
    """(lang, benchmark path, barrier name); the barrier exists for the test's duration."""
    lang = request.param
    if lang not in ("c", "python"):
        require_tool(lang)
    require_libkruntime()
    bench = _benchmark(lang, tmp_path)
    name = f"/coldrun-test-duet-{os.getpid()}-{lang}"
    _kruntime.krun_duet_create(name)
    yield lang, bench, name
    _kruntime.krun_duet_remove(name)


def _run(lang: str, bench: str, param: int, env: dict[str, str]) -> RunnerOutcome:
    argv, run_env = runner_command(lang, sys.executable if lang == "python" else "", [], bench,
                                   ITERATIONS, param, False)
    return run_runner(argv, {**run_env, **env}, timeout=120)


@pytest.mark.parametrize("duet", RUNNERS, indirect=True)
def test_pair_of_runners_meets_before_every_iteration(duet):
    lang, bench, name = duet
    env = {"COLDRUN_DUET_BARRIER": name, "COLDRUN_DUET_TIMEOUT": "60"}
    with ThreadPoolExecutor(2) as pool:
        slow, fast = pool.map(lambda p: _run(lang, bench, p, env), (SLOW_MS, 1))
    docs = []
    for outcome in (slow, fast):
        assert outcome.returncode == 0, outcome.stderr
        docs.append(parse_document(outcome.document, iterations=ITERATIONS, duet=True))
    a, b = docs
    # The slow side never waits long; the fast side waits out the difference each time.
    assert sum(b["barrier_wait_ns"][1:]) > sum(a["barrier_wait_ns"][1:])
    # What the barrier promises, whatever the load: neither side starts iteration i before the other
    # has ended iteration i-1 (both read one machine-wide clock, libkruntime's KRUN_CLOCK).  Without it
    # B would start its second iteration ~SLOW_MS before A ends its first.  (A bound on the start gap
    # failed on a loaded CI machine: one side was off the CPU for 64 ms after the barrier let it go.)
    for i in range(1, ITERATIONS):
        for first, second in ((a, b), (b, a)):
            assert second["iteration_start_ns"][i] >= first["iteration_end_ns"][i - 1], \
                (i, a["iteration_start_ns"], a["iteration_end_ns"], b["iteration_start_ns"], b["iteration_end_ns"])


@pytest.mark.parametrize("duet", RUNNERS, indirect=True)
def test_runner_whose_partner_never_starts_fails_with_exit_4(duet):
    lang, bench, name = duet
    outcome = _run(lang, bench, 1, {"COLDRUN_DUET_BARRIER": name, "COLDRUN_DUET_TIMEOUT": "0.5"})
    assert outcome.returncode == EXIT_DUET, outcome.stderr
    assert ("libkruntime: duet barrier abandoned at iteration 1: no partner runner arrived within 0.5 s"
            in outcome.stderr)
    assert outcome.document == b""


def test_runner_without_barrier_records_timeline_but_no_waits(tmp_path):
    outcome = _run("c", _benchmark("c", tmp_path), 1, {})
    doc = parse_document(outcome.document, iterations=ITERATIONS)
    assert "barrier_wait_ns" not in doc
    assert len(doc["iteration_start_ns"]) == ITERATIONS


def test_missing_barrier_is_a_setup_error(tmp_path):
    outcome = _run("c", _benchmark("c", tmp_path), 1, {"COLDRUN_DUET_BARRIER": "/coldrun-test-no-such-barrier"})
    assert outcome.returncode == 2
    assert "duet barrier /coldrun-test-no-such-barrier: shm_open: No such file or directory" in outcome.stderr


@pytest.mark.parametrize("duet", ["ruby"], indirect=True)
def test_ruby_uses_its_extension_and_falls_back_to_fiddle_only_without_it(duet):
    lang, bench, _ = duet
    argv, env = runner_command(lang, "", [], bench, ITERATIONS, 1, True)
    assert env["COLDRUN_KRUN_RUBY_EXT"].endswith("kruntime_ext.so")
    with_ext = run_runner(argv, env, timeout=120)
    assert with_ext.returncode == 0 and "Fiddle" not in with_ext.stderr
    parse_document(with_ext.document, iterations=ITERATIONS)
    env.pop("COLDRUN_KRUN_RUBY_EXT")
    fiddle = run_runner(argv, env, timeout=120)
    assert fiddle.returncode == 0 and "libkruntime through Fiddle" in fiddle.stderr
    parse_document(fiddle.document, iterations=ITERATIONS)
    broken = run_runner(argv, {**env, "COLDRUN_KRUN_RUBY_EXT": "/nonexistent/kruntime_ext.so"}, timeout=120)
    assert broken.returncode == 2
    assert "cannot load libkruntime (/nonexistent/kruntime_ext.so)" in broken.stderr
