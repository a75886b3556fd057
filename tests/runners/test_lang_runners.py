"""Integration tests: each language runner runs a real tiny benchmark through
its interpreter and libkruntime, and its document is checked against
contract A.  A missing interpreter skips with the Debian package to install."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from iteration_runners import languages
from test_lang_common import build_fake_counters, check_document, require_libkruntime, require_tool, run

LANGS = ["pypy", "lua", "javascript", "java", "ruby", "php"]
BOOM = "COLDRUN_BENCH_BOOM"

# Per language: (a working benchmark, one whose run_iter raises BOOM, one without run_iter).
SOURCES = {
    "pypy": ("bench.py",
             "def run_iter(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n",
             f"def run_iter(n):\n    raise RuntimeError('{BOOM}')\n",
             "def other(n):\n    return n\n"),
    "lua": ("bench.lua",
            "function run_iter(n)\n  local s = 0\n  for i = 1, n do s = s + i * i end\n  return s\nend\n",
            f"function run_iter(n)\n  error('{BOOM}')\nend\n",
            "function other(n) return n end\n"),
    "javascript": ("bench.js",
                   "function run_iter(n) {\n  var s = 0;\n  for (var i = 0; i < n; i++) s += i * i;\n  return s;\n}\n",
                   f"function run_iter(n) {{\n  throw new Error('{BOOM}');\n}}\n",
                   "function other(n) { return n; }\n"),
    "ruby": ("bench.rb",
             "def run_iter(n)\n  s = 0\n  n.times { |i| s += i * i }\n  s\nend\n",
             f"def run_iter(n)\n  raise '{BOOM}'\nend\n",
             "def other(n)\n  n\nend\n"),
    "php": ("bench.php",
            "<?php\nfunction run_iter($n) {\n  $s = 0;\n  for ($i = 0; $i < $n; $i++) { $s += $i * $i; }\n  return $s;\n}\n",
            f"<?php\nfunction run_iter($n) {{\n  throw new RuntimeException('{BOOM}');\n}}\n",
            "<?php\nfunction other($n) { return $n; }\n"),
}

JAVA_SOURCES = {
    "KrunEntry": "class KrunEntry implements BaseKrunEntry {\n"
                 "  static long sink;\n"
                 "  public void run_iter(int n) { long s = 0; for (int i = 0; i < n; i++) s += (long) i * i; sink = s; }\n"
                 "}\n",
    "Failing": "class Failing implements BaseKrunEntry {\n"
               f"  public void run_iter(int n) {{ throw new RuntimeException(\"{BOOM}\"); }}\n"
               "}\n",
    "NoRunIter": "class NoRunIter {\n  public void other(int n) {}\n}\n",
    "GcEach": "class GcEach implements BaseKrunEntry {\n"
              "  static Object keep;\n"
              "  public void run_iter(int n) { keep = new byte[n]; System.gc(); }\n"
              "}\n",
}


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("lang_benchmarks")
    for lang, (name, good, failing, missing) in SOURCES.items():
        stem, ext = name.rsplit(".", 1)
        (d / name).write_text(good)
        (d / f"failing.{ext}").write_text(failing)
        (d / f"missing.{ext}").write_text(missing)
    return d


@pytest.fixture(scope="module")
def java_dir(tmp_path_factory) -> Path:
    """Java benchmarks compiled against the runner's BaseKrunEntry, as Krun suites are."""
    require_tool("java")
    require_libkruntime()
    classes, _ = languages.build_java()
    d = tmp_path_factory.mktemp("java_benchmarks")
    for name, text in JAVA_SOURCES.items():
        (d / f"{name}.java").write_text(text)
    subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", str(classes), "-d", str(d),
                    *[str(d / f"{n}.java") for n in JAVA_SOURCES]], check=True, capture_output=True)
    return d


@pytest.fixture(scope="module")
def fake_counters(tmp_path_factory) -> Path:
    return build_fake_counters(tmp_path_factory.mktemp("fake_counters"))


def bench_path(lang: str, kind: str, bench_dir: Path, java_dir: Path | None) -> str:
    if lang == "java":
        assert java_dir is not None
        name = {"good": "KrunEntry", "failing": "Failing", "missing": "NoRunIter"}[kind]
        return str(java_dir / f"{name}.class")
    name = SOURCES[lang][0]
    ext = name.rsplit(".", 1)[1]
    return str(bench_dir / (name if kind == "good" else f"{kind}.{ext}"))


@pytest.fixture
def setup(request, bench_dir):
    """(lang, bench_dir, java_dir) with the interpreter and libkruntime present."""
    lang = request.param
    require_tool(lang)
    require_libkruntime()
    java_dir = request.getfixturevalue("java_dir") if lang == "java" else None
    return lang, bench_dir, java_dir


@pytest.mark.parametrize("setup", LANGS, indirect=True)
def test_runner_writes_valid_document_with_real_libkruntime(setup):
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "good", bench_dir, java_dir), 4, 2000, True)
    outcome = run(argv, env)
    doc = check_document(outcome, 4)
    assert all(t > 0 for t in doc["wallclock_times"])
    # debug=1: one progress line per iteration on stderr, never on the channel.
    assert sum(bool(re.search(r"iteration \d+/4", line)) for line in outcome.stderr.splitlines()) == 4
    if not doc["counters"]["available"]:
        assert doc["counters"]["reason"]


@pytest.mark.parametrize("setup", LANGS, indirect=True)
def test_runner_reports_exact_counter_deltas(setup, fake_counters):
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "good", bench_dir, java_dir), 3, 100, False)
    step = 1_000_003
    outcome = run(argv, env, {"LD_PRELOAD": str(fake_counters), "FAKE_STEP": str(step)})
    doc = check_document(outcome, 3)
    assert doc["counters"] == {"available": True, "reason": None}
    for kind, key in enumerate(("core_cycle_counts", "aperf_counts", "mperf_counts")):
        assert doc[key] == [[step + 100 * kind + core] * 3 for core in range(2)], key


# Languages whose numbers are doubles must refuse a delta that is not exact.
DOUBLE_LANGS = {"lua", "javascript"}


@pytest.mark.parametrize("setup", LANGS, indirect=True)
def test_runner_never_rounds_a_counter_delta(setup, fake_counters):
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "good", bench_dir, java_dir), 1, 10, False)
    step = 2**53 + 1  # the first integer a double cannot hold
    outcome = run(argv, env, {"LD_PRELOAD": str(fake_counters), "FAKE_STEP": str(step)})
    if lang in DOUBLE_LANGS:
        assert outcome.returncode != 0
        assert outcome.document == b""
        assert "precision" in outcome.stderr
    else:
        doc = check_document(outcome, 1)
        assert doc["core_cycle_counts"] == [[step], [step + 1]]


def test_php_refuses_a_delta_beyond_its_signed_integers(bench_dir, fake_counters):
    require_tool("php")
    argv, env = languages.language_runner_command("php", "", [], str(bench_dir / "bench.php"), 1, 10, False)
    outcome = run(argv, env, {"LD_PRELOAD": str(fake_counters), "FAKE_STEP": str(2**63)})
    assert outcome.returncode == 1
    assert outcome.document == b""
    assert "PHP_INT_MAX" in outcome.stderr


@pytest.mark.parametrize("setup", LANGS, indirect=True)
def test_benchmark_exception_exits_1_without_document(setup):
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "failing", bench_dir, java_dir), 3, 10, False)
    outcome = run(argv, env)
    assert outcome.returncode == 1, outcome.stderr
    assert outcome.document == b""
    assert BOOM in outcome.stderr


@pytest.mark.parametrize("setup", LANGS, indirect=True)
def test_benchmark_without_run_iter_is_a_setup_error(setup):
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "missing", bench_dir, java_dir), 3, 10, False)
    outcome = run(argv, env)
    assert outcome.returncode == 2, outcome.stderr
    assert outcome.document == b""
    assert "error:" in outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1  # one line, no traceback


@pytest.mark.parametrize("setup", ["pypy", "lua", "javascript", "java"], indirect=True)
def test_runner_refuses_to_start_without_the_results_channel(setup):
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "good", bench_dir, java_dir), 1, 10, False)
    proc = subprocess.run(argv, env={"PATH": "/usr/bin:/bin", **env}, capture_output=True, text=True,
                          timeout=120, close_fds=True)
    assert proc.returncode == 2
    assert "fd 3" in proc.stderr


@pytest.mark.parametrize("setup", LANGS, indirect=True)
def test_runner_reads_real_per_cpu_perf_counters_through_its_ffi(setup):
    """libkruntime's test mode puts the software cpu-clock perf event in place of
    all three counters, so the real per-CPU counter path runs without a PMU."""
    lang, bench_dir, java_dir = setup
    argv, env = languages.language_runner_command(
        lang, "", [], bench_path(lang, "good", bench_dir, java_dir), 3, 20000, False)
    doc = check_document(run(argv, env, {"COLDRUN_COUNTERS": "test-software-events"}), 3)
    if not doc["counters"]["available"]:
        pytest.skip(f"per-CPU perf events unavailable here: {doc['counters']['reason']}")
    ncores = len(doc["core_cycle_counts"])
    assert ncores >= 1
    # Reads nest (APERF outermost, then MPERF, then cycles, then the clock):
    # the same event read over nested intervals can only shrink inwards.
    for core in range(ncores):
        for i in range(3):
            assert doc["aperf_counts"][core][i] >= doc["mperf_counts"][core][i] >= doc["core_cycle_counts"][core][i]
