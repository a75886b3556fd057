"""Compile a LaTeX report as a paper would: one pdflatex pass, at the page the
report's preamble sets (a paper's text width), and nothing may run off it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from real_parts import missing_real_part


def compile_once(tex: str, directory: Path, name: str = "report") -> str:
    """pdflatex once; returns the log. Fails on an error, an overfull box or a request to rerun."""
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        missing_real_part("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended; "
                          "scripts/setup --for-tests)")
    (directory / f"{name}.tex").write_text(tex)
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
                          cwd=directory, capture_output=True, text=True, timeout=120)
    log = (directory / f"{name}.log").read_text(errors="replace")
    assert proc.returncode == 0, proc.stdout[-2000:]
    overfull = re.findall(r"^Overfull \\hbox.*$", log, re.M)
    assert not overfull, f"{name}.tex runs off the page: {overfull}"
    assert "Rerun" not in log, f"{name}.tex needs a second pdflatex pass"
    assert (directory / f"{name}.pdf").stat().st_size > 1000
    return log
