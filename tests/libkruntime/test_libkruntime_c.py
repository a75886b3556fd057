"""libkruntime's C unit tests (injected clock/counter source), compiled and run for real."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from real_parts import missing_real_part

LIBKRUNTIME = Path(__file__).resolve().parents[2] / "libkruntime"
LIBKRUNTIME_SOURCES = [str(LIBKRUNTIME / name) for name in ("libkruntime.c", "sources.c", "duet.c")]


def compile_c_test(test_source: str, out: Path, defines: tuple[str, ...] = ()) -> Path:
    """Build one of libkruntime/tests/*.c with the library's sources, warnings as errors.

    defines: e.g. ("-DKRUN_DUET_FUTEX",) to build duet.c's OpenBSD (futex) path on Linux.
    """
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        missing_real_part("no C compiler (cc/gcc) on PATH to build libkruntime's C tests (apt-get install gcc)")
    subprocess.run(
        [cc, "-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11", *defines, f"-I{LIBKRUNTIME}", "-o", str(out),
         str(LIBKRUNTIME / "tests" / test_source), *LIBKRUNTIME_SOURCES],
        check=True, capture_output=True, text=True,
    )
    return out


@pytest.fixture(scope="module")
def test_binary(tmp_path_factory) -> Path:
    return compile_c_test("test_libkruntime.c", tmp_path_factory.mktemp("ctest") / "test_libkruntime")


def check_report(proc: subprocess.CompletedProcess, at_least: int) -> None:
    """The C tests end with "<passed> passed, <failed> failed"."""
    assert proc.returncode == 0, proc.stderr
    passed, failed = (int(w) for w in proc.stdout.split()[0:3:2])
    assert failed == 0 and passed >= at_least, proc.stdout


def test_duet_barrier_c_checks_pass(tmp_path):
    """Forked runners meeting, timing out, a killed partner, a partner giving up, bad names."""
    out = compile_c_test("test_duet.c", tmp_path / "test_duet")
    check_report(subprocess.run([str(out)], capture_output=True, text=True, timeout=60), 40)


def test_all_c_checks_pass(test_binary):
    check_report(subprocess.run([str(test_binary)], capture_output=True, text=True, timeout=60), 35)


@pytest.mark.parametrize(
    "mode, message",
    [
        ("counter_backwards", "counter went backwards on core 0 (500 -> 499)"),
        ("wallclock_backwards", "wall clock went backwards"),
        ("precision_loss", "loss of precision converting 9007199254740993"),
        ("precision_loss_getter", "loss of precision converting 18446744073709551615"),
        ("bad_mdata_idx", "mdata index 2 is not 0"),
        ("core_out_of_range", "core 2 out of range 0..1"),
        ("core_unavailable", "per-core counters are unavailable: no PMU here"),
        ("get_before_measure", "krun_measure(1) has not been called"),
        ("measure_before_init", "called before krun_init"),
        ("init_twice", "krun_init called twice"),
        ("timeline_overflow", "more iterations than the 1 reserved"),
    ],
)
def test_fatal_errors_exit_1_with_one_line(test_binary, mode, message):
    proc = subprocess.run([str(test_binary), mode], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert message in proc.stderr
    assert proc.stderr.startswith("libkruntime: ") and proc.stderr.count("\n") == 1
