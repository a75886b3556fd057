"""The system-wide "active experiment" marker (hardware mode only).

A real ``coldrun start`` writes the state dir of the experiment that is about
to change system settings to ``/var/lib/coldrun/active`` (through SystemRoot),
and finishing or aborting removes it once the undo log is empty.  If an
experiment dies without restoring (its supervisor crashed for good, the state
dir's boot service was removed by hand, ...), the next ``coldrun start`` finds
the marker, replays that experiment's undo log first, and refuses to start
when the replay fails, so settings are never stacked on unknown ones.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from supervisor.errors import ColdrunError, PlatformError
from supervisor.durable import write_atomic
from supervisor.system import Commands, SystemRoot
from supervisor.platforms.kept_state import undo_log
from supervisor.platforms.undo_replay import restore_undo_log
from supervisor.state import layout
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir

MARKER = "/var/lib/coldrun/active"


def read_marker(root: SystemRoot) -> Path | None:
    try:
        text = root.read_text(MARKER).strip()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ColdrunError(f"{root.path(MARKER)}: cannot read the active-experiment marker ({e.strerror}); "
                           f"fix its permissions or remove it") from None
    return Path(text) if text else None


def write_marker(root: SystemRoot, state_dir: Path) -> None:
    path = root.path(MARKER)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, f"{Path(state_dir).absolute()}\n".encode())
    except OSError as e:
        raise ColdrunError(f"{path}: cannot write the active-experiment marker ({e.strerror}); coldrun needs "
                           f"it to restore settings after a crash: make {path.parent} writable") from None


def clear_marker(root: SystemRoot, state_dir: Path, log: Any) -> None:
    """Remove the marker if it names ``state_dir`` and nothing is left to restore there."""
    if read_marker(root) != Path(state_dir).absolute():
        return
    try:
        pending = undo_log(root, Path(state_dir)).pending()
    except PlatformError:
        pending = True
    if pending:
        log.warning("settings not fully restored; the active-experiment marker stays so the next "
                    "coldrun start restores them", marker=str(root.path(MARKER)))
        return
    try:
        os.unlink(root.path(MARKER))
    except FileNotFoundError:
        pass


def replay_previous(root: SystemRoot, commands: Commands, log: Any, current: Path) -> None:
    """Restore what a previous experiment left changed; ColdrunError when that is impossible.

    ``current`` is the state dir being started (already locked by us): it can be the
    marked one when an earlier start in the same dir failed half-way.
    """
    old = read_marker(root)
    if old is None:
        return
    marker = root.path(MARKER)
    if not old.is_dir() and not undo_log(root, old).pending():
        log.warning("active-experiment marker names a state dir that no longer exists; ignoring it",
                    marker=str(marker), state_dir=str(old))
        return
    if old != Path(current).absolute() and old.is_dir() and StateDir(old).lock_held():
        raise ColdrunError(f"{old}: another experiment is running on this machine (its supervisor holds the "
                           f"lock); wait for it or coldrun abort {old}, then start again")
    try:
        pending = undo_log(root, old).pending()
        if not pending:
            return
        log.warning("a previous experiment died without restoring its settings; restoring them first",
                    state_dir=str(old))
        failures = restore_undo_log(old, root=root, commands=commands, log=log)
    except PlatformError as e:
        failures = [str(e)]
    if failures:
        raise ColdrunError(f"{old}: could not restore the settings a previous experiment left changed "
                           f"({failures[0]}{f'; and {len(failures) - 1} more' if len(failures) > 1 else ''}); "
                           f"nothing was started: fix it by hand (the entries are in {undo_log(root, old).path}), "
                           f"then start again")
    log.info("restored the settings of the previous experiment", state_dir=str(old))
    try:
        status = Schedule.load(old / layout.SCHEDULE).status
    except ColdrunError:
        return
    if status in ("running", "stopped"):
        log.warning(f"the previous experiment is still {status}: its boot service may resume it at the next "
                    f"boot; end it with coldrun abort {old}", state_dir=str(old))


def claim_for_continue(root: SystemRoot, state_dir: Path) -> None:
    """`resume --continue` on hardware: mark this experiment active again, unless another one is."""
    state_dir = Path(state_dir).absolute()
    other = read_marker(root)
    if other is not None and other != state_dir and other.is_dir():
        try:
            busy = undo_log(root, other).pending() or StateDir(other).lock_held()
        except PlatformError:
            busy = True
        if busy:
            raise ColdrunError(f"{other}: another experiment is active on this machine (settings changed or "
                               f"running); let it finish or coldrun abort {other}, then continue {state_dir}")
    write_marker(root, state_dir)
