"""What tells a coldrun state dir from any directory, for every command that writes a file a user names.

Only the supervisor writes into a state dir: an export, an analysis report, an
imported experiment or compiled classes there would replace or add to the
experiment's evidence (issue 34).  The supervisor's commands and
coldrun-analyze both ask ``output_problem`` before they make anything (a
temp file included), whatever the name; it lives here because analysis never
imports the supervisor.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

SCHEDULE = "schedule"            # a directory is an experiment's once it has one (supervisor/state/layout.py)
MAGIC = "coldrun-schedule"       # the schedule's first line


def _is_state_dir(d: Path) -> bool:
    # The first line, not the bare name, tells a schedule from a user's own file called "schedule" in a
    # directory above the output.  Non-blocking and plain files only: a FIFO of that name (in /tmp,
    # anyone's) must not hang the command.
    try:
        fd = os.open(d / SCHEDULE, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(MAGIC) + 1) == MAGIC.encode() + b"\n"
    except OSError:
        return False
    finally:
        os.close(fd)


def enclosing_state_dir(path: str | Path) -> Path | None:
    """The state dir a write to ``path`` would land in, or None.

    Both places a write touches are resolved, as the kernel would ('..' after symlinks): where the name
    leads (through a symlink at it, too), and its directory, where the temp file and the rename happen.
    A hard link needs no check: writes replace the name, never write through it.
    """
    name = Path(path).absolute()     # not normalised: "link/.." is the link's target's parent
    for place in dict.fromkeys((os.path.realpath(name), os.path.realpath(os.path.dirname(name)))):
        for d in (Path(place), *Path(place).parents):
            if _is_state_dir(d):
                return d
    return None


def output_problem(path: str | Path, fix: str) -> str | None:
    """One line naming ``path``, the state dir it leads into and ``fix``, when it leads into one."""
    state = enclosing_state_dir(path)
    if state is None:
        return None
    return f"{path}: leads into the state dir {state}, where only the supervisor writes; {fix}"
