"""The PHP runner's compiled binding (issue 29): built by `coldrun build-runners php`, loaded by the runner
command, FFI only as the fallback; its timed region costs what Krun's runner's did, and the runner's own
loop does not change what a benchmark measures.

Krun's PHP runner called functions a patched PHP exposed; ``KRUN_LOOP`` is that runner's loop (krun's
iterations_runners/iterations_runner.php: ``$BM_iters`` left a string, ``krun_measure(0); run_iter($BM_param);
krun_measure(1);``), reimplemented here over the same compiled functions, as Krun's patched PHP had them.
Times are medians of per-iteration times, the minimum over interleaved process executions: the shared
machine's load only ever adds time.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

from iteration_runners import languages
from real_parts import missing_real_part
from test_lang_common import check_document, require_libkruntime, require_tool, run

EMPTY = "<?php\nfunction run_iter($n) { }\n"
ADDITIONS = "<?php\nfunction run_iter($n) {\n  $s = 0;\n  for ($i = 0; $i < $n; $i++) { $s += $i; }\n  return $s;\n}\n"
KRUN_LOOP = """<?php
include($argv[1]);
krun_init();
$BM_iters = $argv[2];
$BM_param = (int) $argv[3];
$BM_times = array_fill(0, $BM_iters, 0);
for ($BM_i = 0; $BM_i < $BM_iters; $BM_i++) {
    krun_measure(0);
    run_iter($BM_param);
    krun_measure(1);
    $BM_times[$BM_i] = krun_wallclock_delta_ns();
}
krun_done();
echo json_encode($BM_times);
"""
ITERATIONS = 20000
ROUNDS = 3


@pytest.fixture(scope="module")
def extension() -> Path:
    require_tool("php")
    require_libkruntime()
    if shutil.which("php-config") is None:
        missing_real_part("php-config is missing: the compiled binding needs php-dev (apt-get install php-dev)")
    assert languages.report_build(["php"]) == 0
    return languages.PHP_EXT.find()


def bench(tmp_path: Path, source: str) -> Path:
    p = tmp_path / "bench.php"
    p.write_text(source)
    return p


def runner_argv(benchmark: Path, iterations: int, param: int, *, compiled: bool, debug: bool = False):
    argv, env = languages.language_runner_command("php", "", [], str(benchmark), iterations, param, debug)
    if not compiled:            # the FFI fallback: the command without the extension
        i = argv.index("-d")
        argv = argv[:i] + argv[i + 2:]
    return argv, env


def median_ns(times_s: list[float]) -> float:
    return statistics.median(times_s[len(times_s) // 10:]) * 1e9       # warm-up left out


def coldrun_median(benchmark: Path, param: int, compiled: bool, prefix: list[str] | None = None) -> float:
    argv, env = runner_argv(benchmark, ITERATIONS, param, compiled=compiled)
    doc = check_document(run([*(prefix or []), *argv], env), ITERATIONS)
    return median_ns(doc["wallclock_times"])


def krun_median(tmp_path: Path, extension: Path, benchmark: Path, param: int) -> float:
    script = tmp_path / "krun_loop.php"
    script.write_text(KRUN_LOOP)
    out = subprocess.run(["php", "-d", f"extension={extension}", str(script), str(benchmark), str(ITERATIONS),
                          str(param)], capture_output=True, text=True, timeout=120, check=True)
    return median_ns([t / 1e9 for t in json.loads(out.stdout)])


def test_the_command_loads_the_compiled_binding_and_ffi_is_the_fallback(tmp_path, extension):
    b = bench(tmp_path, ADDITIONS)
    for compiled, says in ((True, "libkruntime via the compiled binding (kruntime_php.so)"),
                           (False, "libkruntime via FFI")):
        argv, env = runner_argv(b, 3, 100, compiled=compiled, debug=True)
        assert (f"extension={extension}" in argv) is compiled
        outcome = run(argv, env)
        check_document(outcome, 3)
        assert f"[iterations_runner.php] {says}" in outcome.stderr.splitlines()


def test_the_timed_region_costs_less_than_ffi_and_no_more_than_krun_s(tmp_path, extension):
    # Before: FFI only, ~2.4x Krun's timed region around an empty benchmark.
    b = bench(tmp_path, EMPTY)
    compiled, ffi, krun = [], [], []
    for _ in range(ROUNDS):       # interleaved, so a change in the machine's load hits all three alike
        compiled.append(coldrun_median(b, 0, True))
        ffi.append(coldrun_median(b, 0, False))
        krun.append(krun_median(tmp_path, extension, b, 0))
    print(f"empty benchmark, ns per iteration: compiled {compiled}, FFI {ffi}, Krun's loop {krun}")
    assert min(compiled) < min(ffi)
    assert min(compiled) <= 1.25 * min(krun)      # the same calls; the margin is the shared machine's noise


def test_the_runner_s_loop_bound_type_does_not_change_what_a_benchmark_measures(tmp_path, extension):
    # The issue saw a 1000-addition benchmark measure 17% more under coldrun's runner than Krun's, flipping
    # with the runner's (int) cast of its loop bound.  Measured here (PHP 8.2, 2 shared vCPUs, load 5-12):
    # each process runs the benchmark in one of two modes, ~5.3 or ~8.4 us per iteration, steady within
    # the process and drawn anew per process, with ASLR on or off, whichever the bound's type; shifting the
    # benchmark's frame on PHP's VM stack in 16-byte steps over 4 KiB (ASLR off) never made the mode
    # follow the shift.  The bound is compared outside the timed region, so the cast is not the cause: a
    # handful of executions samples the two modes unevenly.  So: the fastest execution of each variant,
    # over enough executions to meet the fast mode, must agree.
    setarch = shutil.which("setarch")
    if setarch is None:
        pytest.skip("setarch (util-linux) is needed to run PHP without ASLR")
    runner = Path(languages.RUNNERS_DIR / "php" / "iterations_runner.php").read_text()
    cast = "$BM_iters = (int) $argv[2];"
    assert cast in runner
    as_string = tmp_path / "iterations_runner_string_bound.php"
    as_string.write_text(runner.replace(cast, "$BM_iters = $argv[2];"))
    b = bench(tmp_path, ADDITIONS)
    prefix = [setarch, "-R"]
    ints, strings = [], []
    for _ in range(2 * ROUNDS):
        ints.append(coldrun_median(b, 1000, True, prefix))
        argv, env = runner_argv(b, ITERATIONS, 1000, compiled=True)
        argv[argv.index(str(languages.RUNNERS_DIR / "php" / "iterations_runner.php"))] = str(as_string)
        strings.append(median_ns(check_document(run([*prefix, *argv], env), ITERATIONS)["wallclock_times"]))
    print(f"1000 additions, ns per iteration, ASLR off: (int) bound {ints}, string bound {strings}")
    assert abs(min(ints) - min(strings)) <= 0.15 * min(ints + strings)
