"""duet.c's three builds: Linux (robust process-shared mutexes), futex(2) (OpenBSD's path,
built here with -DKRUN_DUET_FUTEX and Linux's futex syscall) and neither (refused with one line).

OpenBSD's pthread.h declares none of the robust or process-shared calls (issue 24), so they
must never reach the compiler outside the Linux path: checked on the preprocessed sources.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from real_parts import missing_real_part
from test_libkruntime_c import LIBKRUNTIME, check_report, compile_c_test

ROBUST_OR_SHARED = re.compile(
    r"\b(pthread_mutexattr_setpshared|pthread_mutexattr_setrobust|pthread_mutex_consistent|"
    r"pthread_condattr_setpshared|PTHREAD_MUTEX_ROBUST|PTHREAD_PROCESS_SHARED|EOWNERDEAD)\b")
LINE_MARKER = re.compile(r'^# \d+ "([^"]+)"')


def own_preprocessed_lines(source: str, defines: tuple[str, ...]) -> list[str]:
    """The lines of `cc -E` that come from libkruntime's own files (not the system headers)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        missing_real_part("no C compiler (cc/gcc) on PATH (apt-get install gcc)")
    out = subprocess.run([cc, "-E", "-std=gnu11", *defines, f"-I{LIBKRUNTIME}", str(LIBKRUNTIME / source)],
                         check=True, capture_output=True, text=True).stdout
    own, lines = False, []
    for line in out.splitlines():
        m = LINE_MARKER.match(line)
        if m:
            own = m.group(1).startswith(str(LIBKRUNTIME))
        elif own:
            lines.append(line)
    return lines


@pytest.mark.parametrize("defines", [("-DKRUN_DUET_FUTEX",), ("-DKRUN_DUET_NONE",)])
@pytest.mark.parametrize("source", ["duet.c", "libkruntime.c", "sources.c"])
def test_no_robust_or_process_shared_api_outside_the_linux_path(source, defines):
    used = [line.strip() for line in own_preprocessed_lines(source, defines) if ROBUST_OR_SHARED.search(line)]
    assert used == [], f"{source} with {defines} uses pthread robust/process-shared API: {used}"


def test_the_check_sees_the_linux_path():
    """The scan above can fail: the Linux build of duet.c does use them."""
    assert any(ROBUST_OR_SHARED.search(line) for line in own_preprocessed_lines("duet.c", ()))


@pytest.mark.parametrize("defines", [("-DKRUN_DUET_FUTEX",),
                                     ("-U__linux__", "-DKRUN_DUET_FUTEX")])   # sources.c's non-Linux path too
def test_futex_path_passes_every_duet_scenario(tmp_path, defines):
    """The same forked-runner scenarios as the Linux path (meet, timeouts, killed partner, giving up)."""
    out = compile_c_test("test_duet.c", tmp_path / "test_duet_futex", defines)
    check_report(subprocess.run([str(out)], capture_output=True, text=True, timeout=60), 40)


def test_without_primitives_duet_is_refused_with_one_line(tmp_path):
    out = compile_c_test("test_duet_refused.c", tmp_path / "test_duet_refused", ("-DKRUN_DUET_NONE",))
    check_report(subprocess.run([str(out)], capture_output=True, text=True, timeout=60), 7)
