"""`python -m supervisor.platforms.runas USER -- ARGV...`: drop root, keep fds.

Used where setpriv is absent (OpenBSD): doas and sudo close inherited file
descriptors, but the runner's results channel is fd 3.  Sets the groups,
gid and uid of USER, HOME/USER/LOGNAME, then execs ARGV.
"""

from __future__ import annotations

import os
import pwd
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: runas USER -- ARGV...", file=sys.stderr)
        return 125
    user, cmd = argv[0], argv[2:]
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        print(f"runas: no user {user!r}", file=sys.stderr)
        return 125
    os.initgroups(user, pw.pw_gid)
    os.setgid(pw.pw_gid)
    os.setuid(pw.pw_uid)
    if os.getuid() != pw.pw_uid or os.geteuid() != pw.pw_uid:
        print(f"runas: still uid {os.geteuid()} after switching to {user}", file=sys.stderr)
        return 125
    os.environ.update(HOME=pw.pw_dir, USER=user, LOGNAME=user)
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:  # e.g. the benchmark user cannot read the interpreter's directory
        print(f"runas: cannot run {cmd[0]}: {e.strerror}", file=sys.stderr)
    return 125


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
