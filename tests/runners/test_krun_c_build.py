"""configs/krun-c-benchmarks.mk builds Krun-era C benchmarks that Debian's toolchain otherwise leaves
unloadable (issue 29): libm named before the sources and dropped by --as-needed, and gnu89 `inline`
functions that C99 emits no symbol for.  The sources are the broken suite's (tests/broken_benchmarks.py),
where the Krun Makefile's order makes them fail to load."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from broken_benchmarks import BROKEN
from real_parts import missing_real_part
from runner_helpers import check_success, run

MAKEFILE = Path(__file__).resolve().parents[2] / "configs" / "krun-c-benchmarks.mk"


@pytest.mark.parametrize("name", ["c_pow", "c_inline"])
def test_the_documented_build_makes_krun_style_c_benchmarks_load(tmp_path, name):
    if shutil.which("cc") is None or shutil.which("make") is None:
        missing_real_part("cc and make are not installed (apt-get install gcc make)")
    d = tmp_path / "benchmarks" / name / "c"
    d.mkdir(parents=True)
    (d / "bench.c").write_text(BROKEN[name].source)
    # -std=c99 -O0 as the broken suite builds them, and --as-needed as Debian's gcc links: the .mk's own
    # flags (libm after the sources with --no-as-needed, -fgnu89-inline) must be what makes them load.
    build = subprocess.run(["make", "-f", str(MAKEFILE), "-C", str(tmp_path), "CFLAGS=-std=c99 -O0 -Wl,--as-needed"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    check_success(run("c", "", d / "bench.so", iterations=3), 3)
