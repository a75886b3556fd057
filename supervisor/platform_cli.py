"""`coldrun platform show [--root DIR]` and `coldrun platform check EXPERIMENT [--root DIR]`.

Both only read.  With --root pointing at a copy of a machine's /sys, /proc,
/boot, /etc, external commands (rdmsr, id, dpkg-query) are not run, since
they would describe this machine instead of the copy; controls that need
them show as unavailable.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence, TextIO

from supervisor.platforms.controls import ControlReport
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import CommandResult, RealClock, RealCommands, SystemRoot


class NoCommands:
    """Commands seam for --root: answers every command with "not run"."""

    def run(self, argv: Sequence[str], *, input: str | None = None, timeout: float | None = None) -> CommandResult:
        return CommandResult(tuple(argv), 127, "", "not run: --root describes another machine")


class _QuietLog:
    def __getattr__(self, name):
        return lambda *a, **k: None


def _platform(policy: PlatformPolicy, root_dir: str, os_name: str | None):
    from supervisor.platforms import detect_platform_name, make_platform
    name = os_name or detect_platform_name()
    commands = RealCommands() if root_dir == "/" else NoCommands()
    return make_platform(name, policy, Path("/nonexistent-coldrun-state"), root=SystemRoot(root_dir),
                         commands=commands, clock=RealClock(), log=_QuietLog())


def machine_summary(platform) -> list[str]:
    virtual, why = platform.is_virtual()
    lines = [f"machine: {'VIRTUAL' if virtual else 'bare metal'} ({why})"]
    if platform.name == "linux":
        from supervisor.platforms import linux_facts as facts
        root = platform.root
        lines.append(f"kernel: {facts.kernel_release(root)}; cpus online: {len(platform.cpus())}; "
                     f"model: {facts.cpu_model(root)}")
        lines.append(f"scaling driver: {facts.scaling_driver(root).describe()}")
        from supervisor.platforms.linux_controls import read_counter_facts
        lines.append(f"hardware counters: {read_counter_facts(root, platform.cpus()).describe()}")
    temps = platform.read_temperatures()
    lines.append(f"temperature sensors: {len(temps)}" +
                 (" (" + ", ".join(f"{k}={v:.1f}°C" for k, v in sorted(temps.items())[:8]) +
                  (", ..." if len(temps) > 8 else "") + ")" if temps else ""))
    return lines


def _change(r: ControlReport) -> str:
    if r.action == "would change":
        return f"set {r.wanted}"
    if r.action in ("fix needed", "unavailable") and r.fix:
        return f"cannot: {r.fix}"
    return "-" if r.action != "report" else "(recorded only)"


def show(policy: PlatformPolicy, root_dir: str = "/", os_name: str | None = None,
         out: TextIO | None = None) -> list[ControlReport]:
    """Print every control: now, wanted, what would change.  Changes nothing."""
    out = out or sys.stdout
    platform = _platform(policy, root_dir, os_name)
    for line in machine_summary(platform):
        print(line, file=out)
    reports = platform.inspect()
    w = max(len(r.control) for r in reports)
    print(f"\n{'control':{w}}  {'now':34}  {'policy wants':28}  change", file=out)
    for r in reports:
        print(f"{r.control:{w}}  {r.found[:34]:34}  {r.wanted[:28]:28}  {_change(r)}", file=out)
    unavailable = [r.control for r in reports if r.action == "unavailable"]
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
        probs.append(f"not root: coldrun start must run as root to change {', '.join(c.split(':')[0] for c in changes)}")
    return probs, changes


def _load_policy(path: str) -> PlatformPolicy:
    from supervisor.experiment.model import load_experiment
    exp, _ = load_experiment(path)
    return exp.platform


def _cmd_show(args: argparse.Namespace) -> int:
    show(PlatformPolicy(), args.root, args.os)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
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


def add_platform_commands(subparsers) -> None:
    p = subparsers.add_parser("platform", help="show or check the machine's benchmark settings (read only)")
    sub = p.add_subparsers(dest="platform_command", required=True)
    s = sub.add_parser("show", help="every control: current value, what the policy wants, what would change")
    s.add_argument("--root", default="/", help="a copy of a machine's /sys, /proc, /boot, /etc (default /)")
    s.add_argument("--os", choices=("linux", "openbsd"), default=None, help="default: this machine's OS")
    s.set_defaults(func=_cmd_show)
    c = sub.add_parser("check", help="exit 0 when the machine is ready for EXPERIMENT, else list each problem")
    c.add_argument("experiment")
    c.add_argument("--root", default="/", help="a copy of a machine's /sys, /proc, /boot, /etc (default /)")
    c.add_argument("--os", choices=("linux", "openbsd"), default=None, help="default: this machine's OS")
    c.set_defaults(func=_cmd_check)
