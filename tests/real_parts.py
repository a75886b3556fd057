"""Tests that need a real part of the machine (a language implementation, a JDK, pdflatex, qemu ...)
skip with the reason and the apt-get line when it is missing, except under CI=true: CI installs every
real part (scripts/setup --for-tests), so a missing one there is a failure, never a silent skip."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def missing_real_part(reason: str) -> NoReturn:
    """Skip (locally) or fail (CI=true) a test whose real part is missing; ``reason`` names the fix."""
    if under_ci():
        pytest.fail(f"CI=true and a real part is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def python27_interpreter() -> str | None:
    """A Python 2.7 that runs (Debian no longer ships one; pyenv may have one, whose shims may not run)."""
    import shutil
    import subprocess
    from pathlib import Path

    for candidate in (str(Path.home() / ".pyenv/versions/2.7.18/bin/python2.7"), "python2.7"):
        found = shutil.which(candidate)
        if found and subprocess.run([found, "-c", "import sys; sys.exit(sys.version_info[0] != 2)"],
                                    capture_output=True).returncode == 0:
            return found
    return None
