"""Pre- and post-execution commands: argv lists (a shell only for {shell = "..."}); a failure is fatal."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from supervisor.experiment.model import Command, command_argv


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
