"""The language runners as the supervisor starts them: as a fresh
unprivileged user (here nobody), who can read the tree and the benchmark but
nothing under root's home, with a minimal PATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from iteration_runners import languages
from runner_helpers import run_runner
from iteration_runners.protocol import validate_document
from test_lang_common import require_libkruntime, require_tool

NOBODY = "65534"
BENCHMARKS = {
    "pypy": ("bench.py", "def run_iter(n):\n    return n * 2\n"),
    "lua": ("bench.lua", "function run_iter(n) return n * 2 end\n"),
    "javascript": ("bench.js", "function run_iter(n) { return n * 2; }\n"),
    "ruby": ("bench.rb", "def run_iter(n)\n  n * 2\nend\n"),
    "php": ("bench.php", "<?php\nfunction run_iter($n) { return $n * 2; }\n"),
    "java": ("KrunEntry.java", "class KrunEntry implements BaseKrunEntry {\n  public void run_iter(int n) {}\n}\n"),
}


@pytest.fixture
def shared_dir():
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) not installed")
    with tempfile.TemporaryDirectory(prefix="coldrun-lang-") as d:
        os.chmod(d, 0o755)
        yield Path(d)


@pytest.mark.parametrize("lang", sorted(BENCHMARKS))
def test_language_runner_as_nobody(lang, shared_dir):
    require_tool(lang)
    require_libkruntime()
    name, text = BENCHMARKS[lang]
    bench = shared_dir / name
    bench.write_text(text)
    bench.chmod(0o644)
    if lang == "java":
        classes, _ = languages.build_java()
        subprocess.run(["javac", "-nowarn", "--release", "8", "-cp", str(classes), "-d", str(shared_dir), str(bench)],
                       check=True, capture_output=True)
        (shared_dir / "KrunEntry.class").chmod(0o644)
        bench = shared_dir / "KrunEntry.class"
    argv, env = languages.language_runner_command(lang, "", [], str(bench), 3, 5, False)
    outcome = run_runner(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv],
                         env, base_env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}, timeout=120)
    assert outcome.returncode == 0, outcome.stderr
    doc = json.loads(outcome.document)
    validate_document(doc)
    assert len(doc["wallclock_times"]) == 3
