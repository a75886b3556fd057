"""The CPython extension and the shared library, against the real clock."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import pytest

import libkruntime


def test_extension_measures_a_positive_interval():
    libkruntime.krun_init()
    try:
        libkruntime.krun_measure(0)
        sum(range(10000))
        libkruntime.krun_measure(1)
        delta = libkruntime.krun_wallclock_delta_ns()
        assert delta > 0
        assert libkruntime.krun_get_wallclock_ns(1) - libkruntime.krun_get_wallclock_ns(0) == delta
        assert abs(libkruntime.krun_get_wallclock(1) - libkruntime.krun_get_wallclock(0) - delta / 1e9) < 1e-6
    finally:
        libkruntime.krun_done()


def test_counters_are_either_all_there_or_explained():
    libkruntime.krun_init()
    try:
        n = libkruntime.krun_get_num_cores()
        reason = libkruntime.krun_counters_unavailable_reason()
        if n == 0:
            assert reason and any(k in reason for k in ("core cycles", "aperf", "mperf", "COLDRUN_COUNTERS"))
            assert libkruntime.krun_counters_source() == "none"
            with pytest.raises(ValueError, match="unavailable"):
                libkruntime.krun_core_cycles_delta(0)
        else:
            assert reason is None
            libkruntime.krun_measure(0)
            libkruntime.krun_measure(1)
            assert all(libkruntime.krun_mperf_delta(c) >= 0 for c in range(n))
    finally:
        libkruntime.krun_done()


def test_counters_off_by_environment():
    os.environ["COLDRUN_COUNTERS"] = "off"
    try:
        libkruntime.krun_init()
        assert libkruntime.krun_get_num_cores() == 0
        assert "COLDRUN_COUNTERS=off" in libkruntime.krun_counters_unavailable_reason()
    finally:
        libkruntime.krun_done()
        del os.environ["COLDRUN_COUNTERS"]


def test_python_misuse_raises_instead_of_exiting():
    with pytest.raises(RuntimeError, match="krun_init"):
        libkruntime.krun_measure(0)
    libkruntime.krun_init()
    try:
        with pytest.raises(ValueError, match="mdata index 2"):
            libkruntime.krun_measure(2)
        with pytest.raises(RuntimeError, match="twice"):
            libkruntime.krun_init()
        with pytest.raises(TypeError):
            libkruntime.krun_get_aperf(0)
    finally:
        libkruntime.krun_done()


def test_loss_of_precision_is_fatal_not_rounded():
    # The *_double getters exist for languages without 64-bit ints; libkruntime
    # exits rather than hand them a rounded count.  Checked through ctypes in a child.
    code = textwrap.dedent(f"""
        import ctypes
        lib = ctypes.CDLL({str(libkruntime.shared_library_path())!r})
        lib.krun_u64_to_double.restype = ctypes.c_double
        lib.krun_u64_to_double.argtypes = [ctypes.c_uint64]
        assert lib.krun_u64_to_double(2**53) == 2.0**53
        print("exact ok", flush=True)
        lib.krun_u64_to_double(2**53 + 1)
        print("not reached", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout == "exact ok\n"
    assert "loss of precision converting 9007199254740993" in proc.stderr


def test_shared_library_exports_the_krun_api():
    lib = ctypes.CDLL(str(libkruntime.shared_library_path()))
    for name in ("krun_init", "krun_done", "krun_measure", "krun_get_wallclock", "krun_get_core_cycles",
                 "krun_get_aperf", "krun_get_mperf", "krun_get_core_cycles_double", "krun_get_aperf_double",
                 "krun_get_mperf_double", "krun_get_num_cores", "krun_counters_unavailable_reason"):
        assert hasattr(lib, name), name
    lib.krun_get_num_cores.restype = ctypes.c_int
    lib.krun_init()
    try:
        assert lib.krun_get_num_cores() >= 0
    finally:
        lib.krun_done()


def test_paths_are_absolute_files():
    assert libkruntime.shared_library_path().is_absolute()
    assert libkruntime.extension_path().name.startswith("_kruntime")


def test_duet_barrier_create_remove_from_python():
    """The supervisor's side: a fresh barrier with the asked mode, idempotent create/remove, one-line errors."""
    name = f"/coldrun-test-py-duet-{os.getpid()}"
    shm = f"/dev/shm{name}"
    try:
        libkruntime.krun_duet_create(name, 0o640)
        assert os.stat(shm).st_mode & 0o777 == 0o640
        libkruntime.krun_duet_create(name)                 # replaces it
        assert os.stat(shm).st_mode & 0o777 == 0o600
    finally:
        libkruntime.krun_duet_remove(name)
    assert not os.path.exists(shm)
    libkruntime.krun_duet_remove(name)                     # already gone: fine
    with pytest.raises(OSError, match="duet barrier name coldrun must be one '/'"):
        libkruntime.krun_duet_create("coldrun")


def test_timeline_through_the_extension():
    libkruntime.krun_init()
    try:
        assert libkruntime.krun_duet_in_use() is False
        assert libkruntime.krun_timeline_json() == ""
        libkruntime.krun_timeline_reserve(2)
        for _ in range(2):
            libkruntime.krun_measure(0)
            libkruntime.krun_measure(1)
        timeline = json.loads("{%s}" % libkruntime.krun_timeline_json())
        assert set(timeline) == {"iteration_start_ns", "iteration_end_ns"}
        assert timeline["iteration_end_ns"][1] == libkruntime.krun_get_wallclock_ns(1)
        assert timeline["iteration_start_ns"][1] >= timeline["iteration_end_ns"][0]
        with pytest.raises(ValueError, match="cannot reserve -1 iterations"):
            libkruntime.krun_timeline_reserve(-1)
    finally:
        libkruntime.krun_done()
