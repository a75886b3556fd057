"""The persisted undo log (undo.json: under /var/lib/coldrun/experiments/ in hardware mode, so a state dir
that is lost or wiped cannot take it along; platforms/active_marker.py ``undo_log`` says where).

Before coldrun changes any system setting it appends the way back (the
original value and where it lives) and makes that durable: temp file,
fsync, rename, fsync(dir).  Restoring replays the entries newest first and
is safe to repeat after a crash part-way, because each entry is removed
only once it has been undone.  Entries are plain data, so a later coldrun
(even one started with a different experiment) can restore them without
knowing the control that wrote them.

Entry kinds ("action"):
  write  {"path": system path, "value": original text}   write it back
  run    {"argv": [...]}                                   run a command (wrmsr, apm, rcctl)
  rmdir  {"path": system path, "files": [names]}           remove a directory coldrun created
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from supervisor.errors import PlatformError
from supervisor.durable import write_atomic
from supervisor.state import layout

UNDO_FILE = layout.UNDO


class UndoLog:
    def __init__(self, directory: Path, state_dir: Path | None = None):
        """The log in ``directory``: the state dir, or (hardware mode) the machine's own copy of what the
        experiment in ``state_dir`` changed (platforms/active_marker.py ``undo_log``)."""
        self.path = Path(directory) / UNDO_FILE
        self.state_dir = state_dir

    def entries(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        try:
            data = json.loads(text)
            entries = data["entries"]
            assert isinstance(entries, list)
        except (ValueError, KeyError, AssertionError, TypeError):
            raise PlatformError(
                f"{self.path}: undo log is corrupt; restore the settings it names by hand, then delete it") from None
        return entries

    def _save(self, entries: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc: dict[str, Any] = {"version": 1, "entries": entries}
        if self.state_dir is not None:
            doc["state_dir"] = str(self.state_dir)     # whose changes these are, for someone reading the file
        write_atomic(self.path, json.dumps(doc, indent=1).encode())

    def record(self, control: str, key: str, entry: dict[str, Any]) -> bool:
        """Persist how to undo a change before making it.

        ``key`` names the setting (a path, "msr:0x1a0:cpu3", ...).  Only the
        first original of a key is kept: after a reboot sysfs holds the boot
        default again, and re-applying must not overwrite the true original
        with a value coldrun itself set.  Returns False when already recorded.
        """
        entries = self.entries()
        if any(e.get("key") == key for e in entries):
            return False
        entries.append({"control": control, "key": key, **entry})
        self._save(entries)
        return True

    def replay(self, undo_one: Callable[[dict[str, Any]], None],
               control: str | None = None) -> list[str]:
        """Undo entries newest first (only ``control``'s when given).

        Each entry is dropped from the file after it was undone; a failure
        is collected and the entry kept, so a later restore can try again.
        Returns one line per failure.
        """
        failures: list[str] = []
        entries = self.entries()
        for entry in reversed(list(entries)):
            if control is not None and entry.get("control") != control:
                continue
            try:
                undo_one(entry)
            except Exception as e:  # keep going: restore as much as possible
                failures.append(f"{entry.get('control')}: could not restore {entry.get('key')}: {e}")
                continue
            entries = [e for e in entries if e is not entry]
            self._save(entries)
        if not entries and self.path.exists():
            self.path.unlink()
            if self.state_dir is not None:   # the machine's directory for this experiment: nothing left to keep
                for d in (self.path.parent, self.path.parent.parent):
                    try:
                        d.rmdir()
                    except OSError:          # not empty (another experiment's), or already gone
                        break
        return failures

    def pending(self) -> bool:
        return bool(self.entries())
