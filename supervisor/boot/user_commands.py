"""Pre- and post-execution commands: argv lists (a shell only for {shell = "..."}); a failure is fatal."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from supervisor.experiment.model import Command, Experiment, ShellCommand, command_argv


class HookFailed(Exception):
    pass


def run_hooks(kind: str, commands: list[Command], extra_env: dict[str, str], log: Any,
              timeout: float = 3600.0) -> None:
    env = dict(os.environ)
    env.update(extra_env)
    for cmd in commands:
        argv = command_argv(cmd)
        try:
            p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL, check=False)
        except FileNotFoundError:
            raise HookFailed(f"{kind} command {argv[0]!r} not found")
        except subprocess.TimeoutExpired:
            raise HookFailed(f"{kind} command {argv} did not finish within {timeout:.0f}s")
        log.info(f"{kind} command ran", argv=argv, returncode=p.returncode,
                 stdout=p.stdout[-500:], stderr=p.stderr[-500:])
        if p.returncode != 0:
            raise HookFailed(f"{kind} command {argv} exited with status {p.returncode}: "
                             f"{(p.stderr or p.stdout).strip()[-200:]}")


def command_problems(exp: Experiment, exp_path: str) -> list[str]:
    """One line per pre/post command that could not run: a program that is not there or not executable
    (looked up on this PATH, as the boot's run does), or shell text /bin/sh cannot parse (sh -n)."""
    problems = []
    for kind, commands in (("pre_execution", exp.pre_execution), ("post_execution", exp.post_execution)):
        for i, cmd in enumerate(commands):
            where = f"{exp_path}: {kind}[{i}]"
            program = command_argv(cmd)[0]
            found = (program if os.path.isfile(program) and os.access(program, os.X_OK) else None) if "/" in program \
                else shutil.which(program)
            if found is None:
                problems.append(f"{where}: {program!r} " + ("does not exist or is not executable" if "/" in program
                                                             else "is not found on PATH") +
                                "; give an installed program's absolute path")
            elif isinstance(cmd, ShellCommand):
                p = subprocess.run([found, "-n", "-c", cmd.shell], capture_output=True, text=True,
                                   stdin=subprocess.DEVNULL, check=False)
                if p.returncode != 0:
                    said = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
                    problems.append(f"{where}: /bin/sh cannot parse {cmd.shell!r}: {said}")
    return problems
