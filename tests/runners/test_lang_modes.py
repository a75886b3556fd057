"""Integration tests for the two non-production modes: instrumentation
(PyPy's GC/JIT log, the JVM's compilation and GC beans, per iteration) and
startup time (the C wrapper plus each language's dummy runner)."""

from __future__ import annotations

import glob
import os
import subprocess
import tempfile
from decimal import Decimal

import pytest

from iteration_runners import languages
from test_lang_common import check_document, require_libkruntime, require_tool, run


def test_pypy_instrumentation_splits_gc_events_per_iteration(tmp_path):
    require_tool("pypy")
    require_libkruntime()
    bench = tmp_path / "bench.py"
    # A full collection in every iteration, whatever nursery size PyPy chose from this CPU's cache.
    bench.write_text("import gc\ndef run_iter(n):\n    gc.collect()\n    return n\n")
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    argv, env = languages.language_runner_command("pypy", "", [], str(bench), 4, 1000, False, instrument=True,
                                                  log_dir=str(home))
    assert env["COLDRUN_INSTRUMENT"] == "1" and "%d" in env["PYPYLOG"]
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "coldrun-pypylog-*")))
    doc = check_document(run(argv, env), 4)
    inst = doc["instrumentation"]
    assert inst["vm"] == "pypy"
    assert len(inst["raw_vm_events"]) == len(inst["gc_times"]) == len(inst["jit_times"]) == 4
    assert all(t > 0 for t in inst["gc_times"])
    for events in inst["raw_vm_events"]:
        for name, start, stop, children in events:
            assert start <= stop
    assert any(e[0] == "gc-minor" for events in inst["raw_vm_events"] for e in events)
    # The log file is the runner's to remove.
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "coldrun-pypylog-*"))) <= before
    assert list(home.iterdir()) == []


def test_jvm_instrumentation_records_gc_and_jit_per_iteration(tmp_path):
    require_tool("java")
    require_libkruntime()
    classes, _ = languages.build_java()
    (tmp_path / "GcEach.java").write_text(
        "class GcEach implements BaseKrunEntry {\n  static Object keep;\n"
        "  public void run_iter(int n) { keep = new byte[n]; System.gc(); }\n}\n")
    subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", str(classes), "-d", str(tmp_path),
                    str(tmp_path / "GcEach.java")], check=True, capture_output=True)
    argv, env = languages.language_runner_command(
        "java", "", [], str(tmp_path / "GcEach.class"), 3, 1000, False, instrument=True)
    doc = check_document(run(argv, env), 3)
    inst = doc["instrumentation"]
    assert inst["vm"] == "jvm"
    comp = inst["cumulative_compilation_time_ms"]
    assert len(comp) == 3 and comp == sorted(comp)
    assert inst["collectors"], "the JVM reports at least one garbage collector"
    totals = [sum(c["cumulative_collection_count"][i] for c in inst["collectors"]) for i in range(3)]
    # System.gc() in every iteration: the cumulative count rises every iteration.
    assert totals[0] >= 1 and totals[0] < totals[1] < totals[2]


def test_instrumentation_is_refused_where_there_is_none():
    with pytest.raises(ValueError, match="pypy and java"):
        languages.language_runner_command("lua", "luajit", [], "b.lua", 1, 1, False, instrument=True)


STARTUP_LANGS = ["python", "pypy", "lua", "javascript", "java", "ruby", "php"]


@pytest.mark.parametrize("lang", STARTUP_LANGS)
def test_startup_mode_reports_wrapper_and_runner_clocks(lang, tmp_path):
    require_tool(lang, needs_ffi_glue=False)  # dummy runners need no libkruntime
    argv, env = languages.language_runner_command(
        lang, "", [], str(tmp_path / "unused"), 1, 0, False, startup=True)
    assert argv[0].endswith("startup_wrapper")
    doc = check_document(run(argv, env), 1)
    st = doc["startup"]
    assert set(st) == {"clock", "wrapper_time", "runner_time", "seconds"}
    assert st["clock"] in ("CLOCK_MONOTONIC_RAW", "CLOCK_MONOTONIC")
    assert doc["wallclock_times"] == [st["seconds"]]
    difference = Decimal(st["runner_time"]) - Decimal(st["wrapper_time"])
    assert 0 < difference < 60
    assert abs(float(difference) - st["seconds"]) < 1e-9
    assert doc["counters"]["available"] is False


def test_startup_dummy_runner_refuses_to_run_without_the_wrapper(tmp_path):
    argv, env = languages.language_runner_command(
        "python", "", [], str(tmp_path / "unused"), 1, 0, False, startup=True)
    outcome = run(argv[1:], env)  # the VM directly, no wrapper
    assert outcome.returncode == 1
    assert outcome.document == b""
    assert "startup_wrapper" in outcome.stderr


def test_startup_mode_needs_exactly_one_iteration():
    with pytest.raises(ValueError, match="iterations must be 1"):
        languages.language_runner_command("lua", "", [], "b.lua", 5, 0, False, startup=True)
