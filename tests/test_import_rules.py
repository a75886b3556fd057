"""The import rules of .importlinter hold (layers of the supervisor, stand-alone runners and analysis, no cycles)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp

from shared_paths import REPO


def test_import_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    assert lint.exists() or shutil.which("lint-imports"), \
        "lint-imports is missing: pip install -e '.[test]' installs import-linter"
    res = subprocess.run([str(lint if lint.exists() else "lint-imports"), "--no-cache"], cwd=REPO,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert " 0 broken." in res.stdout, res.stdout


def test_no_module_imports_itself_back():
    """No import cycle at all, package modules included: import-linter's acyclic_siblings compares a package's
    children only, so platforms/__init__ -> base -> active_marker -> platforms/__init__ slipped past it.
    Function-level imports count (grimp reads them too)."""
    graph = grimp.build_graph("supervisor", "analysis", "iteration_runners", "libkruntime", "contracts")
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                cycles.append(" -> ".join((module, *back)))
    assert not cycles, "\n".join(cycles)
