"""Experiments for tests that run simulated experiments with the test suite's own interpreter.

As root, a simulated experiment runs each benchmark as a fresh unprivileged
user, as a real one does, and `coldrun start` refuses files that user cannot
reach.  The interpreter running the tests (and pytest's tmp dirs) may be
reachable by root only, so these experiments say ``benchmark_user = false``
when the tests run as root: benchmarks then run as the invoking user, which is
what the tests using them are about.  tests/integration/test_simulated_root.py
covers the drop to the fresh user itself.
"""

from __future__ import annotations

import os
import re


def runs_as_invoker(text: str) -> str:
    """``text`` (an experiment file) with benchmark_user = false when running as root, unless it sets it."""
    if os.geteuid() != 0 or re.search(r"^\s*benchmark_user\s*=", text, re.M):
        return text
    if re.search(r"^\[platform\]\s*$", text, re.M):
        return re.sub(r"^\[platform\]\s*$", "[platform]\nbenchmark_user = false", text, count=1, flags=re.M)
    return text.rstrip("\n") + "\n\n[platform]\nbenchmark_user = false\n"
