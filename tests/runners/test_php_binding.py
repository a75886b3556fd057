"""The PHP runner's compiled binding (issue 29): built by `coldrun build-runners php`, loaded by the runner
command, FFI only as the fallback.  What its timed region costs beside Krun's loop and FFI, and whether the
runner's loop bound's type changes what a benchmark measures, are timings: bench/bench_php_binding.py
prints them (side by side, interleaved), since a timed test on a shared machine fails with its load.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from iteration_runners import languages
from real_parts import missing_real_part
from test_lang_common import check_document, require_libkruntime, require_tool, run

ADDITIONS = "<?php\nfunction run_iter($n) {\n  $s = 0;\n  for ($i = 0; $i < $n; $i++) { $s += $i; }\n  return $s;\n}\n"


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


def test_the_command_loads_the_compiled_binding_and_ffi_is_the_fallback(tmp_path, extension):
    b = bench(tmp_path, ADDITIONS)
    for compiled, says in ((True, "libkruntime via the compiled binding (kruntime_php.so)"),
                           (False, "libkruntime via FFI")):
        argv, env = runner_argv(b, 3, 100, compiled=compiled, debug=True)
        assert (f"extension={extension}" in argv) is compiled
        outcome = run(argv, env)
        check_document(outcome, 3)
        assert f"[iterations_runner.php] {says}" in outcome.stderr.splitlines()
