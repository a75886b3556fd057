"""Shared helpers for the language-runner tests (imported by the other
test_lang_*.py files): run a runner as the supervisor does (results on fd 3)
and validate the document against contract A.  The tests here check the
helpers themselves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from real_parts import missing_real_part
from iteration_runners import languages
from runner_helpers import RunnerOutcome, run_runner
from iteration_runners.protocol import ProtocolError, validate_document

# Interpreter and Debian package per language runner (skip reasons name the package).
TOOLS = {
    "pypy": ("pypy3", "pypy3"),
    "lua": ("luajit", "luajit"),
    "javascript": ("node", "nodejs"),
    "java": ("java", "openjdk-17-jdk-headless"),
    "ruby": ("ruby", "ruby"),
    "php": ("php", "php-cli"),
    "python": ("python3", "python3"),
}

# A fake counter source installed into libkruntime through its krun_set_source
# seam, from an LD_PRELOADed library: two cores, and per iteration every
# counter advances by exactly FAKE_STEP + 100*kind + core (kind: 0 cycles,
# 1 APERF, 2 MPERF), so each runner's document can be checked value by value.
FAKE_COUNTERS_C = r"""
#include <stdlib.h>
#include <time.h>
#include "libkruntime.h"

static uint64_t clock_reads, step;

static int fake_init(void *ctx, const char **reason, int widths[3])
{
    (void)ctx; (void)reason; (void)widths;
    step = strtoull(getenv("FAKE_STEP"), NULL, 10);
    return 2;
}

static int64_t fake_clock(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_reads++;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Two clock reads per iteration: before measure(0)'s clock read this is i,
   after measure(1)'s it is i + 1, so stop - start is exactly one step. */
static uint64_t fake_read(void *ctx, enum krun_counter_kind kind, int core)
{
    (void)ctx;
    return (clock_reads / 2) * (step + 100u * (unsigned)kind + (unsigned)core);
}

static void fake_done(void *ctx) { (void)ctx; }

static struct krun_source fake = {NULL, fake_init, fake_clock, fake_read, fake_done, "fake"};

__attribute__((constructor)) static void install_fake_source(void)
{
    krun_set_source(&fake);
}
"""


def require_libkruntime() -> Path:
    try:
        return languages.libkruntime_path()
    except languages.RunnerError as exc:
        missing_real_part(f"libkruntime shared library not available: {exc}")


def require_tool(runner: str, *, needs_ffi_glue: bool = True) -> str:
    name, package = TOOLS[runner]
    path = shutil.which(name)
    if path is None:
        missing_real_part(f"{name} is not installed (apt-get install {package})")
    if runner == "java" and shutil.which("javac") is None:
        missing_real_part("javac is not installed (apt-get install openjdk-17-jdk-headless)")
    if runner == "javascript" and needs_ffi_glue:
        include = Path(os.environ.get("COLDRUN_NODE_INCLUDE", "/usr/include/node"))
        if not (include / "node_api.h").is_file():
            missing_real_part(f"Node.js headers missing: no {include}/node_api.h (apt-get install libnode-dev)")
    return path


def build_fake_counters(out_dir: Path) -> Path:
    """Compile the fake counter source; returns the library to LD_PRELOAD."""
    lib = require_libkruntime()
    src = out_dir / "fake_counters.c"
    src.write_text(FAKE_COUNTERS_C)
    out = out_dir / "fake_counters.so"
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        missing_real_part("no C compiler to build the fake counter source (apt-get install gcc libc6-dev)")
    subprocess.run(
        [cc, "-O1", "-Wall", "-shared", "-fPIC", "-o", str(out), str(src),
         f"-I{languages.libkruntime_include_dir()}", str(lib), f"-Wl,-rpath,{lib.parent}"],
        check=True, capture_output=True,
    )
    return out


def run(argv: list[str], env: dict[str, str], extra_env: dict[str, str] | None = None) -> RunnerOutcome:
    return run_runner(argv, {**env, **(extra_env or {})}, timeout=120)


def check_document(outcome: RunnerOutcome, iterations: int) -> dict:
    """Exit 0 and a valid protocol-1 document with ``iterations`` entries."""
    assert outcome.returncode == 0, outcome.stderr
    doc = json.loads(outcome.document)
    validate_document(doc, iterations=iterations)
    return doc


def test_check_document_rejects_short_per_core_list():
    good = {"protocol_version": 1, "wallclock_times": [0.1, 0.2],
            "core_cycle_counts": [[1, 2]], "aperf_counts": [[1, 2]], "mperf_counts": [[1, 2]],
            "counters": {"available": True, "reason": None}}
    ok = RunnerOutcome(0, "", "", json.dumps(good).encode())
    assert check_document(ok, 2)["wallclock_times"] == [0.1, 0.2]
    short = RunnerOutcome(0, "", "", json.dumps(dict(good, aperf_counts=[[1]])).encode())
    with pytest.raises(ProtocolError):
        check_document(short, 2)
    with pytest.raises(AssertionError):
        check_document(RunnerOutcome(1, "", "boom", b""), 2)
