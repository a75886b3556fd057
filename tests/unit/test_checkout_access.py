"""The suite says once why a checkout under a mode-700 directory makes the unprivileged tests fail."""

from __future__ import annotations

import os

import pytest

from checkout_access import closed_ancestor, closed_checkout_line


def test_the_lowest_directory_others_cannot_search_is_named(tmp_path):
    top, closed, inner = tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"
    inner.mkdir(parents=True)
    top.chmod(0o755)
    closed.chmod(0o700)
    inner.chmod(0o755)
    assert closed_ancestor(inner) == closed
    closed.chmod(0o711)    # searchable though not readable: enough to reach a file by its path
    assert closed_ancestor(inner) != closed


def test_the_warning_names_the_directory_and_the_fix(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the warning is for root runs, where tests run benchmarks as another user")
    closed = tmp_path / "closed"
    (closed / "checkout").mkdir(parents=True)
    closed.chmod(0o700)
    line = closed_checkout_line(closed / "checkout")
    assert line is not None and line.startswith(f"{closed} is mode 700") and f"chmod o+x {closed}" in line
