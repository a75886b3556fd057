"""Whether a benchmark user can reach this checkout: as root, tests run benchmarks as `nobody` or a fresh
`coldrunbench-…` user, who must search every directory above the runners. A clone made under a mode-700
directory (`mktemp -d`) makes each such test fail on its own; the suite says why once (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path


def closed_ancestor(path: Path) -> Path | None:
    """The first directory from ``path`` up that other users cannot search (no o+x), if any."""
    for d in [path, *path.parents]:
        try:
            if not os.stat(d).st_mode & 0o001:
                return d
        except OSError:
            return d
    return None


def closed_checkout_line(checkout: Path) -> str | None:
    """The warning for a checkout a benchmark user cannot reach, when running as root; None otherwise."""
    if os.geteuid() != 0:
        return None
    closed = closed_ancestor(checkout)
    if closed is None:
        return None
    return (f"{closed} is mode {os.stat(closed).st_mode & 0o777:o}: the tests that run a benchmark as an "
            f"unprivileged user cannot reach this checkout, and fail for it; clone into a directory others can "
            f"search, or chmod o+x {closed}")
