"""How many of coldrun's own modules three flows run through (issue 22's "Done when").

    .venv/bin/python bench/flow_modules.py [--list] [--flow NAME ...] [--root TREE]

A module counts when at least one of its lines runs during the flow (coverage.py,
source = supervisor/, contracts/, analysis/, iteration_runners/ of TREE: no tests, no
third-party code); the second column counts those where a line inside a function
or method ran, which leaves out modules only imported (but not those whose helpers
a class or module body calls at import, e.g. a pydantic validator factory).  The flows:

  record     experiment file -> first record: a one-key, one-execution Python
             experiment on configs/demo's benchmarks, `coldrun start
             --simulate-reboots` and the boots up to the one that writes the first
             execution record (the finishing boot is not counted).
  table      one iteration's time -> the table: a one-key experiment run to its end
             (not counted; its external runner writes fixed times, so the table
             takes the same path every run), then `coldrun export --format krun`
             and `coldrun-analyze table` on the export.
  screening  a screening level -> the report: the [screening] example under
             configs/ as it is (12 executions, in-process boots: seconds), start to
             end, `coldrun export --format native` and `coldrun-analyze screen`.

How it measures, so that it works on any tree: each flow runs in a fresh child
interpreter (so every flow pays its own imports) that only calls the command
entry points `supervisor.cli.main` and `analysis.cli.main`.  The simulated
reboot re-executes `python -P -m supervisor resume DIR`; the child replaces
os.exec* for that one argv (in its own pid only: runners are forked and exec'd
as usual) by a note that a reboot was asked for, and calls
`supervisor.cli.main(["resume", DIR])` itself, in-process, as the tests' boot
loops do.  The Python iteration runner, a process of its own, runs under
`python -m coverage run` (the experiment's `args` for its VM) and is counted too.
The child is pinned to one CPU, so the analysis runs serially (forked workers
would run the same modules, unmeasured).  "seconds" is each child's wall time,
the table flow's unmeasured setup run included.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

# As root, a simulated run makes a fresh benchmark user: run benchmarks as the invoker, as the tests do.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from root_runs import runs_as_invoker as as_invoker  # noqa: E402

PACKAGES = ("supervisor", "contracts", "analysis", "iteration_runners")
FLOWS = {
    "record": "experiment file -> first record",
    "table": "one iteration's time -> the table",
    "screening": "a screening level -> the report",
}
MAX_BOOTS = 100

ONE_KEY_EXPERIMENT = """\
name = "flow-modules"
executions = 1
benchmarks_dir = {benchmarks}
execution_timeout = "1min"

[waits]
boot_settle = "0s"
sync = "0s"
baseline_pause = "0s"

[benchmarks]
fib = 20

{runner}
"""
PYTHON_RUNNER = """\
[variants.default-python]
target = "bench.py"
subdir = "python"

[vms.python]
runner = "python"
executable = "@python"
iterations = 30
variants = ["default-python"]
"""
# The table flow starts from a record in a state dir; made from fixed times, its table takes the same
# path on every run (a measured series is sometimes classified "no steady state", which skips the bootstrap).
FIXED_RUNNER_TABLES = """\
[variants.fixed]
target = "fixed.txt"

[vms.fixed]
runner = "external"
executable = {python}
args = [{script}]
iterations = 30
variants = ["fixed"]
"""
FIXED_RUNNER = """\
import json, os, sys
n = int(sys.argv[2])
doc = {"protocol_version": 1, "wallclock_times": [0.01 + (i % 5) * 1e-6 for i in range(n)],
       "core_cycle_counts": [], "aperf_counts": [], "mperf_counts": [],
       "counters": {"available": False, "reason": "fixed times"}}
with os.fdopen(int(os.environ.get("COLDRUN_RESULTS_FD", "3")), "w") as results:
    json.dump(doc, results)
"""


class FlowError(Exception):
    pass


# ---------------------------------------------------------------- experiment files

def toml_string(value: str) -> str:
    return json.dumps(value)   # a JSON string is a valid TOML basic string


def one_key_experiment(root: Path) -> str:
    """fib on configs/demo's Python benchmark, once."""
    return ONE_KEY_EXPERIMENT.format(benchmarks=toml_string(str(root / "configs" / "demo" / "benchmarks")),
                                     runner=PYTHON_RUNNER)


def fixed_times_experiment(work: Path) -> str:
    """One key whose runner writes a document of fixed times without running anything."""
    (work / "benchmarks" / "fib").mkdir(parents=True)
    (work / "benchmarks" / "fib" / "fixed.txt").write_text("fixed times\n")
    (work / "fixed_runner.py").write_text(FIXED_RUNNER)
    runner = FIXED_RUNNER_TABLES.format(python=toml_string(sys.executable),
                                        script=toml_string(str(work / "fixed_runner.py")))
    return ONE_KEY_EXPERIMENT.format(benchmarks=toml_string(str(work / "benchmarks")), runner=runner)


def screening_experiment(root: Path) -> str:
    """The first configs/*.toml with a [screening] table, its benchmarks_dir made absolute."""
    for path in sorted((root / "configs").glob("*.toml")):
        text = path.read_text()
        parsed = tomllib.loads(text)
        if "screening" not in parsed:
            continue
        bench_dir = (path.parent / parsed.get("benchmarks_dir", "benchmarks")).resolve()
        line = f"benchmarks_dir = {toml_string(str(bench_dir))}"
        text, n = re.subn(r"^benchmarks_dir\s*=.*$", lambda _: line, text, count=1, flags=re.M)
        return text if n else f"{line}\n{text}"
    raise FlowError(f"no configs/*.toml under {root} has a [screening] table")


def runners_under_coverage(text: str, rcfile: Path) -> str:
    """Every Python-runner VM without its own args runs its runner under `python -m coverage run`."""
    args = "args = " + json.dumps(["-m", "coverage", "run", f"--rcfile={rcfile}"])
    for name, vm in tomllib.loads(text).get("vms", {}).items():
        if vm.get("runner") == "python" and "args" not in vm:
            header = re.compile(rf"^\[vms\.{re.escape(name)}\]\s*$", re.M)
            text = header.sub(lambda m: f"{m.group(0)}\n{args}", text, count=1)
    return text


# ---------------------------------------------------------------- the child: one flow, measured

class Reboots:
    """os.exec* for this process's re-execution as `... supervisor resume DIR`, noted instead of done."""

    NAMES = ("execv", "execve", "execvp", "execvpe")

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.asked = 0
        for name in self.NAMES:
            setattr(os, name, self._wrap(getattr(os, name)))

    def _wrap(self, real):
        def exec_or_note(path, argv, *rest):
            argv = [str(a) for a in argv]
            if os.getpid() == self.pid and "supervisor" in argv and "resume" in argv:
                self.asked += 1
                return None
            return real(path, argv, *rest)
        return exec_or_note

    def take(self) -> bool:
        asked, self.asked = self.asked, 0
        return asked > 0


def call(main, argv: list[str]) -> None:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    if rc not in (0, None):
        raise FlowError(f"{' '.join(argv[:2])}: exit status {rc}")


def run_boots(cli_main, reboots: Reboots, experiment: Path, state: Path, done) -> int:
    """`coldrun start --simulate-reboots`, then one in-process boot per reboot asked for, until done()
    or no reboot is asked for (the experiment ended).  Returns the boots run."""
    call(cli_main, ["start", str(experiment), "--simulate-reboots", "--state-dir", str(state)])
    boots = 0
    while reboots.take() and not done():
        if boots == MAX_BOOTS:
            raise FlowError(f"still rebooting after {MAX_BOOTS} boots")
        call(cli_main, ["resume", str(state)])
        boots += 1
    return boots


def has_record(state: Path):
    records = state / "executions"
    return lambda: records.is_dir() and any(not p.name.startswith(".") for p in records.iterdir())


def child(flow: str, root: Path, work: Path) -> None:
    import coverage

    rcfile = work / "coveragerc"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    state = work / "state"
    if flow == "table":   # the state dir to export, made by the real command, unmeasured
        (work / "setup.toml").write_text(as_invoker(fixed_times_experiment(work)))
        setup = subprocess.run([sys.executable, "-P", "-m", "supervisor", "start", str(work / "setup.toml"),
                                "--simulate-reboots", "--state-dir", str(state)],
                               env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True)
        if setup.returncode != 0:
            raise FlowError(f"setting up the state dir: exit status {setup.returncode}\n{setup.stderr}")
    reboots = Reboots()   # before anything of coldrun is imported, so a `from os import execve` sees it too
    sys.path.insert(0, str(root))
    cov = coverage.Coverage(config_file=str(rcfile))
    cov.start()
    try:
        from supervisor.cli import main as coldrun   # measured from its first import on
        if flow == "record":
            exp = work / "exp.toml"
            exp.write_text(runners_under_coverage(as_invoker(one_key_experiment(root)), rcfile))
            boots = run_boots(coldrun, reboots, exp, state, has_record(state))
            if not has_record(state)():
                raise FlowError(f"no execution record in {state / 'executions'} after start and {boots} boots "
                                "(does the simulated reboot still re-execute `... supervisor resume DIR`?)")
        elif flow == "table":
            results = work / "results.json.bz2"
            call(coldrun, ["export", str(state), "--format", "krun", "-o", str(results)])
            from analysis.cli import main as analyze
            call(analyze, ["table", str(results), "--format", "text"])
        else:
            exp = work / "exp.toml"
            exp.write_text(runners_under_coverage(as_invoker(screening_experiment(root)), rcfile))
            run_boots(coldrun, reboots, exp, state, lambda: False)
            results = work / "results.json.bz2"
            call(coldrun, ["export", str(state), "--format", "native", "-o", str(results)])
            from analysis.cli import main as analyze
            call(analyze, ["screen", str(results)])
    finally:
        cov.stop()
        cov.save()
    (work / "done").touch()   # a re-execution that was not caught would end the child without this


# ---------------------------------------------------------------- the driver

def module_name(root: Path, file: str) -> str | None:
    try:
        rel = Path(file).resolve().relative_to(root)
    except ValueError:
        return None
    if rel.parts[0] not in PACKAGES or rel.suffix != ".py":
        return None
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def function_body_lines(path: Path) -> set[int]:
    """Lines inside function and method bodies (not their def or decorator lines, which run at import)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            header = {node.lineno, *(d.lineno for d in node.decorator_list)}
            lines.update(set(range(node.body[0].lineno, node.end_lineno + 1)) - header)
    return lines


def write_rcfile(root: Path, work: Path) -> Path:
    rcfile = work / "coveragerc"
    sources = "".join(f"\n    {root / p}" for p in PACKAGES)
    rcfile.write_text(f"[run]\nsource ={sources}\nparallel = true\ndata_file = {work / 'cov' / 'data'}\n"
                      "disable_warnings = no-data-collected, module-not-imported, module-not-measured\n")
    (work / "cov").mkdir()
    return rcfile


def measure(flow: str, root: Path, keep: bool) -> tuple[dict[str, bool], float]:
    """{module: a line inside one of its functions ran} for one flow, and the flow's seconds."""
    import coverage

    work = Path(tempfile.mkdtemp(prefix=f"flow-modules-{flow}-"))
    try:
        rcfile = write_rcfile(root, work)
        started = time.monotonic()
        run = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", flow,
                              "--root", str(root), "--work", str(work)],
                             cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if run.returncode != 0 or not (work / "done").exists():
            tail = "\n".join((run.stdout + run.stderr).splitlines()[-30:])
            raise FlowError(f"flow {flow!r} failed (exit status {run.returncode}; work dir {work}):\n{tail}")
        cov = coverage.Coverage(config_file=str(rcfile))
        cov.combine([str(work / "cov")], keep=True)
        data = cov.get_data()
        modules: dict[str, bool] = {}
        for file in data.measured_files():
            name = module_name(root, file)
            ran = set(data.lines(file) or ())
            if name and ran:
                modules[name] = modules.get(name, False) or bool(ran & function_body_lines(Path(file)))
        if not modules:
            raise FlowError(f"flow {flow!r}: no module under {root} ran (is coldrun imported from elsewhere?)")
        return modules, seconds
    except FlowError:
        keep = True   # named in the message: the state dir's log says what went wrong
        raise
    finally:
        if keep:
            print(f"{flow}: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true", help="list each flow's modules")
    p.add_argument("--flow", action="append", choices=FLOWS, help="only this flow (repeatable; default all)")
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                   help="the coldrun tree to measure (default: this script's); run with an interpreter "
                        "that has its dependencies and coverage")
    p.add_argument("--json", action="store_true", help="print {flow: {modules, in_functions}} as JSON instead")
    p.add_argument("--keep", action="store_true", help="keep each flow's work dir (state dir, coverage data)")
    p.add_argument("--child", choices=FLOWS, help=argparse.SUPPRESS)
    p.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.child:
            child(args.child, root, args.work)
            return 0
        results = {flow: measure(flow, root, args.keep) for flow in (args.flow or FLOWS)}
    except FlowError as e:
        print(f"flow_modules: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({flow: {"modules": sorted(modules), "in_functions": sorted(m for m in modules if modules[m]),
                                 "seconds": round(seconds, 1)}
                          for flow, (modules, seconds) in results.items()}, indent=1))
        return 0
    width = max(len(FLOWS[f]) for f in results)
    print(f"{'flow':<{width}}  modules  in functions  seconds")
    for flow, (modules, seconds) in results.items():
        print(f"{FLOWS[flow]:<{width}}  {len(modules):>7}  {sum(modules.values()):>12}  {seconds:>7.1f}")
    if args.list:
        for flow, (modules, _) in results.items():
            print(f"\n{FLOWS[flow]} ({len(modules)}; '-' only imported):")
            for name in sorted(modules):
                print(f"  {' ' if modules[name] else '-'} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
