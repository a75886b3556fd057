"""Start a runner with its results channel on fd 3, and read the document back.

Used by the runner tests and the overhead benchmark; the supervisor may use
it or do the same itself.  Two pitfalls it avoids:

- ``pass_fds=(fd,)`` keeps the fd's own number in the child, and fd 3 in the
  parent is usually taken (by a pipe end, a log file ...); so the channel is
  moved onto 3 in the child only, just before exec.
- a pipe holds 64 KiB; a runner blocked writing a large document to a pipe
  nobody reads would hang.  The channel is a temporary file instead.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass

from iteration_runners import RESULTS_FD


@dataclass(frozen=True)
class RunnerOutcome:
    returncode: int
    stdout: str
    stderr: str
    document: bytes  # what the runner wrote to fd 3 (empty if nothing)


def run_runner(
    argv: list[str],
    env: dict[str, str],
    *,
    timeout: float | None = None,
    base_env: dict[str, str] | None = None,
) -> RunnerOutcome:
    """Run ``argv`` with ``base_env`` (default: a minimal PATH) plus ``env``, channel on fd 3."""
    full_env = dict(base_env if base_env is not None else {"PATH": "/usr/bin:/bin"})
    full_env.update(env)
    with tempfile.TemporaryFile() as channel:
        channel_fd = channel.fileno()

        def put_channel_on_fd3() -> None:
            if channel_fd == RESULTS_FD:  # dup2 onto itself would keep close-on-exec
                os.set_inheritable(RESULTS_FD, True)
            else:
                os.dup2(channel_fd, RESULTS_FD)  # the copy on fd 3 is inheritable

        proc = subprocess.run(
            argv,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            close_fds=False,  # close_fds would close fd 3 again after preexec_fn
            preexec_fn=put_channel_on_fd3,
        )
        channel.seek(0)
        document = channel.read()
    return RunnerOutcome(proc.returncode, proc.stdout, proc.stderr, document)
