"""Duet (pair) experiments for the supervisor's tests: the real Python runner, so both sides really meet
at libkruntime's barrier; each variant of benchmark ``b`` behaves one way from iteration ``FAIL_AT``.

  ok      a few microseconds of arithmetic per iteration
  slow    the same work twice
  crash   SIGSEGV in iteration FAIL_AT
  hang    sleeps in iteration FAIL_AT (the partner's barrier wait times out)
  early   exits 0 in iteration FAIL_AT, without a results document
  atexit  completes every iteration and writes its document, then dies by SIGSEGV on the way out
  widen   widens its own CPU affinity to every CPU this process may use in iteration FAIL_AT, then goes on
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from root_runs import runs_as_invoker

FAIL_AT = 3
_COMMON = textwrap.dedent("""\
    import os, signal, sys, time
    calls = 0
    def work(n):
        return sum(i * i for i in range(200 * n))
    """)
BEHAVIOURS = {
    "ok": "def run_iter(n):\n    work(n)\n",
    "slow": "def run_iter(n):\n    work(n); work(n)\n",
    "crash": f"def run_iter(n):\n    global calls\n    calls += 1\n    if calls == {FAIL_AT}:\n"
             f"        os.kill(os.getpid(), signal.SIGSEGV)\n    work(n)\n",
    "hang": f"def run_iter(n):\n    global calls\n    calls += 1\n    if calls == {FAIL_AT}:\n"
            f"        time.sleep(600)\n    work(n)\n",
    "early": f"def run_iter(n):\n    global calls\n    calls += 1\n    if calls == {FAIL_AT}:\n"
             f"        sys.stdout.flush(); os._exit(0)\n    work(n)\n",
    "widen": f"def run_iter(n):\n    global calls\n    calls += 1\n    if calls == {FAIL_AT}:\n"
             f"        os.sched_setaffinity(0, range(os.cpu_count()))\n    work(n)\n",
    "atexit": "import atexit\natexit.register(lambda: os.kill(os.getpid(), signal.SIGSEGV))\n"
              "def run_iter(n):\n    work(n)\n",
}


def pair_experiment(tmp: Path, pairs: list[tuple[str, str]], *, executions: int = 1, iterations: int = 5,
                    extra: str = "", duet_extra: str = "", timeout: str = "20s",
                    py2_iterations: int | None = None) -> Path:
    """An experiment of ``pairs`` of variants (e.g. ("ok", "crash")) of benchmark b on VM ``py`` (a side may
    name its key in full, "b:py2:ok": ``py2_iterations`` adds that VM, the same runner)."""
    d = tmp / "benchmarks" / "b"
    d.mkdir(parents=True, exist_ok=True)
    for name, body in BEHAVIOURS.items():
        (d / f"{name}.py").write_text(_COMMON + body)
    variants = "\n".join(f'[variants.{v}]\ntarget = "{v}.py"\n' for v in BEHAVIOURS)
    full = lambda side: side if ":" in side else f"b:py:{side}"    # noqa: E731
    pair_lines = ",\n".join(f'    {{ a = "{full(a)}", b = "{full(b)}" }}' for a, b in pairs)
    vm = (f'runner = "python"\nexecutable = "{sys.executable}"\n'
          f'variants = [{", ".join(chr(34) + v + chr(34) for v in BEHAVIOURS)}]\n')
    text = (f'name = "pairs"\nexecutions = {executions}\nexecution_timeout = "{timeout}"\n{extra}\n'
            f'[duet]\npairs = [\n{pair_lines}\n]\n{duet_extra}\n'
            f'[waits]\nboot_settle = 0\nsync = 0\nbaseline_pause = 0\n'
            f'[benchmarks]\nb = 1\n{variants}\n'
            f'[vms.py]\n{vm}iterations = {iterations}\n'
            + ("" if py2_iterations is None else f'[vms.py2]\n{vm}iterations = {py2_iterations}\n'))
    path = tmp / "pairs.toml"
    path.write_text(runs_as_invoker(text))
    return path
