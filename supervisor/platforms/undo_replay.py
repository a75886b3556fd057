"""Undoing what an undo log recorded: each entry's executor, and replaying another experiment's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from supervisor.platforms.kept_state import undo_log
from supervisor.system import Commands, SystemRoot


def undo_entry(root: SystemRoot, commands: Commands) -> Callable[[dict[str, Any]], None]:
    """The executor that undoes one undo-log entry (see supervisor/state/undo.py)."""

    def run(entry: dict[str, Any]) -> None:
        action = entry.get("action")
        if action == "write":
            root.write_text(entry["path"], entry["value"])
        elif action == "run":
            r = commands.run(entry["argv"])
            if not r.ok:
                raise OSError(f"{' '.join(entry['argv'])} failed: {r.stderr.strip() or r.returncode}")
        elif action == "rmdir":
            p = root.path(entry["path"])
            if not p.exists():
                return
            try:
                p.rmdir()
            except OSError:
                # A plain directory (fake root) keeps the files we wrote; cgroupfs never does.
                for name in entry.get("files", []):
                    (p / name).unlink(missing_ok=True)
                p.rmdir()
        else:
            raise OSError(f"unknown undo action {action!r}")

    return run


def restore_undo_log(state_dir: Path, *, root: SystemRoot, commands: Commands, log) -> list[str]:
    """Replay another (e.g. crashed) experiment's undo log; returns failures, one line each."""
    undo = undo_log(root, Path(state_dir))
    if not undo.pending():
        return []
    log.info("restoring settings left by an earlier experiment", undo_log=str(undo.path))
    failures = undo.replay(undo_entry(root, commands))
    for line in failures:
        log.error("restore failed", problem=line)
    return failures
