"""`coldrun platform show [--root DIR]` and `coldrun platform check EXPERIMENT [--root DIR]`.

Both only read.  With --root pointing at a copy of a machine's /sys, /proc,
/boot, /etc, external commands (rdmsr, id, dpkg-query) are not run, since
they would describe this machine instead of the copy; controls that need
them show as unavailable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from typing import Any, Sequence, TextIO

from supervisor.experiment.model import load_experiment
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.errors import PlatformError
from supervisor.platforms import linux_facts, linux_topology
from supervisor.platforms.controls import ControlReport
from supervisor.platforms.factory import NO_STATE_DIR, QuietLog, detect_platform_name, make_platform
from supervisor.platforms.linux_controls import read_counter_facts
from supervisor.system import CommandResult, RealClock, RealCommands, SystemRoot


class NoCommands:
    """Commands seam for --root: answers every command with "not run"."""

    def run(self, argv: Sequence[str], *, input: str | None = None, timeout: float | None = None) -> CommandResult:
        return CommandResult(tuple(argv), 127, "", "not run: --root describes another machine")


def _platform(policy: PlatformPolicy, root_dir: str, os_name: str | None):
    name = os_name or detect_platform_name()
    commands = RealCommands() if root_dir == "/" else NoCommands()
    return make_platform(name, policy, NO_STATE_DIR, root=SystemRoot(root_dir),
                         commands=commands, clock=RealClock(), log=QuietLog())


def machine_facts(platform) -> dict[str, Any]:
    """What `platform show` says about the machine, as data (its --json) and as lines."""
    virtual, why = platform.is_virtual()
    facts: dict[str, Any] = {"virtual": virtual, "virtual_reason": why}
    if platform.name == "linux":
        root = platform.root
        kinds = linux_topology.core_kinds(root)
        try:
            bench: Any = linux_topology.format_cpulist(platform.benchmark_cpus())
        except PlatformError as e:
            bench = f"unknown: {e}"
        facts.update(kernel=linux_facts.kernel_release(root), cpus_online=len(platform.cpus()),
                     cpus=linux_topology.format_cpulist(platform.cpus()),
                     model=linux_facts.cpu_model(root), scaling_driver=linux_facts.scaling_driver(root).describe(),
                     core_kinds={k.name: k.as_dict() for k in kinds}, benchmark_cpus=bench,
                     smt=linux_topology.smt(root).describe(), clocksource=linux_facts.clocksource(root).describe(),
                     hardware_counters=read_counter_facts(root, platform.cpus()).describe())
    facts["temperatures"] = dict(sorted(platform.read_temperatures().items()))
    return facts


def machine_summary(facts: dict[str, Any]) -> list[str]:
    kind = {True: "VIRTUAL", False: "bare metal", None: "unknown whether virtual"}[facts["virtual"]]
    lines = [f"machine: {kind} ({facts['virtual_reason']})"]
    if "kernel" in facts:
        lines.append(f"kernel: {facts['kernel']}; cpus online: {facts['cpus_online']}; model: {facts['model']}")
        lines.append(f"cpus: {facts['cpus']}; benchmark cpus: {facts['benchmark_cpus']}; smt: {facts['smt']}")
        for name, kind in facts["core_kinds"].items():
            nominal = (f"{kind['nominal_hz'] / 1e9:g} GHz" if kind["nominal_hz"] else
                       "unknown (APERF/MPERF then use the fastest MPERF rate; amperf_nominal_hz sets it)")
            lines.append(f"core kind {name}: cpus {kind['cpus']}, nominal {nominal} ({kind['evidence']})")
        lines.append(f"scaling driver: {facts['scaling_driver']}; clock source: {facts['clocksource']}")
        lines.append(f"hardware counters: {facts['hardware_counters']}")
    temps = facts["temperatures"]
    lines.append(f"temperature sensors: {len(temps)}" +
                 (" (" + ", ".join(f"{k}={v:.1f}°C" for k, v in list(temps.items())[:8]) +
                  (", ..." if len(temps) > 8 else "") + ")" if temps else ""))
    return lines


def _change(r: ControlReport) -> str:
    if r.action == "would change":
        return f"set {r.wanted}"
    if r.action in ("fix needed", "unavailable") and r.fix:
        return f"cannot: {r.fix}"
    return "-" if r.action != "report" else "(recorded only)"


NOW_WIDTH, WANTS_WIDTH = 34, 28


def table_rows(cells: list[str], widths: list[int]) -> list[str]:
    """One table row, every cell but the last wrapped to its width (continuation lines below it), so a
    long value (a kernel config and command line, a list of sensors) is shown whole, never cut."""
    wrapped = [textwrap.wrap(c, w, break_on_hyphens=False) or [""] for c, w in zip(cells, widths)]
    wrapped.append([cells[-1]])
    lines = []
    for i in range(max(len(w) for w in wrapped)):
        parts = [w[i] if i < len(w) else "" for w in wrapped]
        lines.append("  ".join(f"{p:{w}}" for p, w in zip(parts, widths)) + "  " + parts[-1])
    return [line.rstrip() for line in lines]


def show(policy: PlatformPolicy, root_dir: str = "/", os_name: str | None = None,
         out: TextIO | None = None, as_json: bool = False) -> list[ControlReport]:
    """Print every control: now, wanted, what would change.  Changes nothing."""
    out = out or sys.stdout
    platform = _platform(policy, root_dir, os_name)
    facts = machine_facts(platform)
    reports = platform.inspect()
    unavailable = [r.control for r in reports if r.action == "unavailable"]
    if as_json:
        json.dump({"machine": facts, "controls": [r.as_dict() for r in reports], "unavailable": unavailable},
                  out, indent=2, ensure_ascii=False)
        out.write("\n")
        return reports
    for line in machine_summary(facts):
        print(line, file=out)
    widths = [max(len(r.control) for r in reports), NOW_WIDTH, WANTS_WIDTH]
    print("", file=out)
    for line in table_rows(["control", "now", "policy wants", "change"], widths):
        print(line, file=out)
    for r in reports:
        for line in table_rows([r.control, r.found, r.wanted, _change(r)], widths):
            print(line, file=out)
    if unavailable:
        print(f"\nunavailable on this machine: {', '.join(unavailable)}", file=out)
    return reports


def problems(policy: PlatformPolicy, root_dir: str = "/", os_name: str | None = None) -> tuple[list[str], list[str]]:
    """(problems with their fixes, changes `coldrun start` would make)."""
    platform = _platform(policy, root_dir, os_name)
    reports = platform.inspect()
    probs = [f"{r.control}: {r.fix}" for r in reports if r.fatal]
    changes = [f"{r.control}: {r.found} -> {r.wanted}" for r in reports if r.action == "would change"]
    if changes and root_dir == "/" and os.geteuid() != 0:
        controls = ", ".join(c.split(":")[0] for c in changes)
        probs.append(f"not root: coldrun start must run as root to change {controls}")
    return probs, changes


def _load_policy(path: str) -> PlatformPolicy:
    exp, _ = load_experiment(path)
    return exp.platform


def cmd_show(args: argparse.Namespace) -> int:
    show(PlatformPolicy(), args.root, args.os, as_json=args.json)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    policy = _load_policy(args.experiment)
    probs, changes = problems(policy, args.root, args.os)
    for c in changes:
        print(f"will change {c}")
    for p in probs:
        print(f"problem: {p}")
    if probs:
        print(f"{args.experiment}: platform not ready ({len(probs)} problem{'s' if len(probs) > 1 else ''})")
        return 1
    print(f"{args.experiment}: platform ready")
    return 0
