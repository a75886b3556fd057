"""Pre- and post-execution commands: argv lists (a shell only for {shell = "..."}); a failure is fatal.

Each runs as a runner does (launch/process.py): in a cgroup of its own (else its process group), waited
for by its exit, not its pipes' end, so a background child (`sleep 20 &`) neither holds the boot nor
outlives the command; whatever it left running is killed, and only bounded tails of its output are kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from supervisor.experiment.model import Command, Experiment, ShellCommand, command_argv
from supervisor.launch.process import run_process

HOOK_TAIL_BYTES = 64 * 1024    # of each of stdout and stderr, as a runner's


class HookFailed(Exception):
    pass


def run_hooks(kind: str, commands: list[Command], extra_env: dict[str, str], log: Any,
              timeout: float = 3600.0) -> None:
    env = dict(os.environ)
    env.update(extra_env)
    for cmd in commands:
        argv = command_argv(cmd)
        p = run_process(argv, env, cwd=os.getcwd(), heap_limit=None, stack_limit=None, timeout=timeout,
                        tail_bytes=HOOK_TAIL_BYTES, results_limit=0)
        if p.launch_error:
            raise HookFailed(f"{kind} command {argv[0]!r} not found" if "FileNotFoundError" in p.launch_error
                             else f"{kind} command {argv} could not start: {p.launch_error}")
        stdout, stderr = p.stdout.text(), p.stderr.text()
        log.info(f"{kind} command ran", argv=argv, returncode=p.exit_code, signal=p.signal,
                 stdout=stdout[-500:], stderr=stderr[-500:], stdout_bytes=p.stdout.total,
                 stderr_bytes=p.stderr.total, containment=p.containment)
        if p.leftover_processes:
            log.warning(f"{kind} command left processes running: killed", argv=argv, count=p.leftover_processes)
        if p.timed_out:
            raise HookFailed(f"{kind} command {argv} did not finish within {timeout:.0f}s; it and its "
                             f"processes were killed")
        if p.exit_code != 0:
            ended = f"was killed by signal {p.signal}" if p.signal is not None else f"exited with status {p.exit_code}"
            raise HookFailed(f"{kind} command {argv} {ended}: {(stderr or stdout).strip()[-200:]}")


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
