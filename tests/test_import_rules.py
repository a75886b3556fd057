"""The import rules of .importlinter hold (layers of the supervisor, stand-alone runners and analysis, no cycles)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from shared_paths import REPO


def test_import_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    assert lint.exists() or shutil.which("lint-imports"), \
        "lint-imports is missing: pip install -e '.[test]' installs import-linter"
    res = subprocess.run([str(lint if lint.exists() else "lint-imports"), "--no-cache"], cwd=REPO,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert " 0 broken." in res.stdout, res.stdout
