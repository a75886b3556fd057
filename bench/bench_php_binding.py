"""The PHP runner's timed region beside Krun's, and whether the runner's loop bound's type changes what a
benchmark measures (issue 29).

    .venv/bin/python bench/bench_php_binding.py [--rounds N] [--iterations N]

Krun's PHP runner called functions a patched PHP exposed; KRUN_LOOP is that runner's loop (krun's
iterations_runners/iterations_runner.php: ``$BM_iters`` left a string, ``krun_measure(0); run_iter($BM_param);
krun_measure(1);``), reimplemented here over coldrun's compiled binding, which exposes the same functions.
Each figure is a median of per-iteration times (the first tenth left out), the minimum over interleaved
process executions: the shared machine's load only ever adds time.  Prints ns per iteration and ratios.
Needs php, php-dev (the binding is built with `coldrun build-runners php`) and setarch.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests/runners")]

from iteration_runners import languages  # noqa: E402
from test_lang_common import check_document, run  # noqa: E402  (the runner tests' fd-3 launch)
from test_php_binding import ADDITIONS, runner_argv  # noqa: E402  (the runner's command, compiled or FFI)

EMPTY = "<?php\nfunction run_iter($n) { }\n"
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
RUNNER = languages.RUNNERS_DIR / "php" / "iterations_runner.php"


def median_ns(times_s: list[float]) -> float:
    return statistics.median(times_s[len(times_s) // 10:]) * 1e9


def coldrun_ns(benchmark: Path, iterations: int, param: int, *, compiled: bool = True,
               runner: Path = RUNNER, prefix: tuple[str, ...] = ()) -> float:
    argv, env = runner_argv(benchmark, iterations, param, compiled=compiled)
    argv = [str(runner) if a == str(RUNNER) else a for a in argv]
    doc = check_document(run([*prefix, *argv], env), iterations)
    return median_ns(doc["wallclock_times"])


def krun_ns(work: Path, extension: Path, benchmark: Path, iterations: int, param: int) -> float:
    script = work / "krun_loop.php"
    script.write_text(KRUN_LOOP)
    out = subprocess.run(["php", "-d", f"extension={extension}", str(script), str(benchmark), str(iterations),
                          str(param)], capture_output=True, text=True, timeout=300, check=True)
    return median_ns([t / 1e9 for t in json.loads(out.stdout)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20000)
    args = ap.parse_args()
    if languages.report_build(["php"]) != 0:
        raise SystemExit("the compiled binding did not build (php-dev?)")
    extension = languages.PHP_EXT.find()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        empty, additions = work / "empty.php", work / "additions.php"
        empty.write_text(EMPTY)
        additions.write_text(ADDITIONS)
        compiled, ffi, krun = [], [], []
        for _ in range(args.rounds):     # interleaved: a change of load hits all three alike
            compiled.append(coldrun_ns(empty, args.iterations, 0))
            ffi.append(coldrun_ns(empty, args.iterations, 0, compiled=False))
            krun.append(krun_ns(work, extension, empty, args.iterations, 0))
        c, f, k = min(compiled), min(ffi), min(krun)
        print(f"empty benchmark, ns per iteration (min of {args.rounds}): compiled {c:.0f}, FFI {f:.0f}, "
              f"Krun's loop {k:.0f}; compiled/Krun {c / k:.2f}, FFI/compiled {f / c:.2f}")
        setarch = shutil.which("setarch")
        if setarch is None:
            print("setarch missing: the loop-bound comparison needs ASLR off; skipped")
            return
        text = RUNNER.read_text()
        cast = "$BM_iters = (int) $argv[2];"
        as_string = work / "iterations_runner_string_bound.php"
        as_string.write_text(text.replace(cast, "$BM_iters = $argv[2];"))
        ints, strings = [], []
        for _ in range(2 * args.rounds):
            ints.append(coldrun_ns(additions, args.iterations, 1000, prefix=(setarch, "-R")))
            strings.append(coldrun_ns(additions, args.iterations, 1000, runner=as_string, prefix=(setarch, "-R")))
        print(f"1000 additions, ns per iteration, ASLR off: (int) bound {[round(x) for x in ints]}, "
              f"string bound {[round(x) for x in strings]}; fastest string/int {min(strings) / min(ints):.3f}")


if __name__ == "__main__":
    main()
