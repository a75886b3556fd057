"""What an experiment keeps on the machine rather than in its state dir: the undo log.

A state dir on a file system wiped at boot is refused at start (platforms/volatile.py), but a state dir can
still be lost (deleted, its disk gone).  The settings coldrun changed must then still be restorable, by
``coldrun abort`` of that path or by the next ``coldrun start`` (the active-experiment marker names it), so
the undo log lives under /var/lib/coldrun/experiments/<digest of the state dir's path>/.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from supervisor.state import layout
from supervisor.state.undo import UndoLog
from supervisor.system import SystemRoot

KEPT = "/var/lib/coldrun/experiments"


def kept_dir(root: SystemRoot, state_dir: Path) -> Path:
    """The machine's own directory for the experiment in ``state_dir`` (named by a digest of its path)."""
    name = hashlib.sha256(str(Path(state_dir).absolute()).encode()).hexdigest()[:16]
    return root.path(f"{KEPT}/{name}")


def undo_log(root: SystemRoot, state_dir: Path) -> UndoLog:
    """The experiment's undo log, outside its state dir.  A state dir started by an earlier coldrun keeps its
    own (state_dir/undo.json) until it is replayed."""
    kept = kept_dir(root, state_dir)
    legacy = Path(state_dir) / layout.UNDO
    if not (kept / layout.UNDO).exists() and legacy.exists():
        return UndoLog(Path(state_dir))
    return UndoLog(kept, Path(state_dir).absolute())
