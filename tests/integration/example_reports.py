"""Every HTML report of the four example experiments (configs/: demo, adaptive, duet, screening), made as a
user makes them: `coldrun start --simulate-reboots`, `coldrun export`, then each `coldrun-analyze` command
that writes HTML. The adaptive example is reduced as test_run_length.py reduces it (C VM only, at most 4
executions of at most 200 iterations) so it ends in minutes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from coldrun_helpers import REPO, coldrun, config_as_invoker
from root_runs import runs_as_invoker

EXAMPLES = ("demo", "adaptive", "duet", "screening")


def _experiment(name: str, work: Path) -> str:
    if name != "adaptive":
        return config_as_invoker(work, f"{name}.toml")
    shutil.copytree(REPO / "configs" / "demo", work / "demo", symlinks=True, dirs_exist_ok=True)
    text = (REPO / "configs" / "adaptive.toml").read_text()
    text = re.sub(r"(?ms)^\[vms\.python\].*?(?=^\[vms\.c\])", "", text)
    text = text.replace("max_executions = 10", "max_executions = 4").replace("max_iterations = 400",
                                                                            "max_iterations = 200")
    (work / "adaptive.toml").write_text(runs_as_invoker(text))
    return str(work / "adaptive.toml")


def run_example(name: str, work: Path) -> tuple[Path, Path]:
    """Runs configs/NAME.toml in `work`; its (native, Krun) exports."""
    work.mkdir(parents=True, exist_ok=True)
    state = work / "state"
    r = coldrun("start", _experiment(name, work), "--simulate-reboots", "--state-dir", str(state), timeout=1800)
    assert r.returncode in (0, 9), r.stderr[-3000:]   # 9: a [stop] key did not converge, which reports show
    native, krun = work / "native.json", work / "krun.json.bz2"
    for fmt, out in (("native", native), ("krun", krun)):
        e = coldrun("export", str(state), "--format", fmt, "-o", str(out))
        assert e.returncode == 0, e.stderr
    return native, krun


def analyze(*args: str) -> None:
    a = subprocess.run([sys.executable, "-m", "analysis.cli", *args], capture_output=True, text=True,
                       cwd=str(REPO), timeout=1800)
    assert a.returncode == 0, (args, a.stderr[-3000:])


def html_reports(name: str, native: Path, krun: Path, out: Path) -> list[Path]:
    """Every HTML report of one example's exports, written under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    made = [out / f"{name}-table.html", out / f"{name}-table-krun.html"]
    analyze("table", str(native), "--format", "html", "-o", str(made[0]))
    analyze("table", str(krun), "--format", "html", "--no-pilot", "-o", str(made[1]))
    if name in ("demo", "adaptive"):
        made.append(out / f"{name}-pilot.html")
        analyze("pilot", str(native), "--format", "html", "-o", str(made[-1]))
        made.append(out / f"{name}-compare.html")
        analyze("compare", "--method", "welch", str(native), str(native), "--format", "html", "-o", str(made[-1]))
        made.append(out / f"{name}-compare-ratio.html")
        analyze("compare", str(native), str(krun), "--format", "html", "-o", str(made[-1]))
        summary = out / f"{name}-summary.json"
        analyze("summary", str(krun), "-o", str(summary), "--quality", "low")
        made.append(out / f"{name}-diff.html")
        analyze("diff", str(summary), str(summary), "--format", "html", "-o", str(made[-1]))
    if name == "duet":
        made.append(out / "duet-duet.html")
        analyze("duet", str(native), "--resamples", "2000", "--html", str(made[-1]))
    return made
