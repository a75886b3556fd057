"""Controls: one small object per setting, all with the same five steps.

    read()      current value as text, or None when the machine lacks it
    satisfied() does the value match the policy?
    apply()     change it, recording the original in the undo log first
    verify      apply_and_verify() reads back and compares
    restore()   replay this control's undo entries

Check-only controls (a kernel built tickless, a boot parameter, a BIOS
switch) cannot apply; their ``fix`` says exactly what the user must change
and where.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, Callable

from supervisor.errors import PlatformError
from supervisor.system import SystemRoot
from supervisor.state.undo import UndoLog


@dataclass
class ControlReport:
    control: str
    wanted: str
    found: str
    ok: bool
    action: str          # "none", "would change", "changed", "unavailable", "report", "fix needed"
    fix: str | None = None
    fatal: bool = False  # stops the experiment (and fails `platform check`)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Control(ABC):
    name: str = "control"
    # Missing on this machine: is that a problem (needs a fix) or just reported?
    required: bool = True
    can_apply: bool = True

    @abstractmethod
    def wanted(self) -> str: ...

    @abstractmethod
    def read(self) -> str | None: ...

    def satisfied(self, found: str | None) -> bool:
        return found == self.wanted()

    def fix(self, found: str | None) -> str:
        """What the user must do when apply cannot help."""
        return f"set {self.name} to {self.wanted()} or set {self.name} = \"ignore\" in [platform]"

    def unavailable_fix(self) -> str:
        return f"{self.name} is not available on this machine; set {self.name} = \"ignore\" in [platform]"

    def apply(self, undo: UndoLog) -> None:
        raise PlatformError(f"{self.name}: cannot be changed by coldrun")

    def inspect(self) -> ControlReport:
        """Read and compare; changes nothing."""
        found = self.read()
        if found is None:
            return ControlReport(self.name, self.wanted(), "unavailable", not self.required,
                                 "unavailable", self.unavailable_fix() if self.required else None,
                                 fatal=self.required)
        if self.satisfied(found):
            return ControlReport(self.name, self.wanted(), found, True, "none")
        if self.can_apply:
            return ControlReport(self.name, self.wanted(), found, False, "would change")
        return ControlReport(self.name, self.wanted(), found, False, "fix needed", self.fix(found), fatal=True)

    def enforce(self, undo: UndoLog) -> ControlReport:
        """Apply when needed, then verify by reading back."""
        report = self.inspect()
        if report.action != "would change":
            return report
        try:
            self.apply(undo)
        except PermissionError as e:
            raise PlatformError(f"{self.name}: permission denied writing {e.filename or 'a setting'}; "
                                "run coldrun as root") from None
        except OSError as e:
            raise PlatformError(f"{self.name}: could not apply {self.wanted()}: {e}") from None
        found = self.read()
        if not self.satisfied(found):
            raise PlatformError(f"{self.name}: set to {self.wanted()} but reads back {found}; "
                                + self.fix(found))
        return ControlReport(self.name, self.wanted(), found or "", True, f"changed from {report.found}")


class ReportControl(Control):
    """Only records a value (overcommit, swap, THP, SMT in "report" mode)."""

    required = False
    can_apply = False

    def __init__(self, name: str, reader: Callable[[], str | None]):
        self.name = name
        self._reader = reader

    def wanted(self) -> str:
        return "(report)"

    def read(self) -> str | None:
        return self._reader()

    def satisfied(self, found: str | None) -> bool:
        return True

    def inspect(self) -> ControlReport:
        found = self.read()
        return ControlReport(self.name, "(report)", "unavailable" if found is None else found, True, "report")


class CheckControl(Control):
    """A check coldrun cannot fix itself; ``fix_text`` says what to change."""

    can_apply = False

    def __init__(self, name: str, wanted: str, reader: Callable[[], str | None],
                 ok: Callable[[str], bool], fix_text: str | Callable[[str | None], str],
                 required: bool = True, unavailable_text: str | None = None):
        self.name = name
        self._wanted = wanted
        self._reader = reader
        self._ok = ok
        self._fix = fix_text
        self.required = required
        self._unavailable = unavailable_text

    def wanted(self) -> str:
        return self._wanted

    def read(self) -> str | None:
        return self._reader()

    def satisfied(self, found: str | None) -> bool:
        return found is not None and self._ok(found)

    def fix(self, found: str | None) -> str:
        return self._fix(found) if callable(self._fix) else self._fix

    def unavailable_fix(self) -> str:
        return self._unavailable or super().unavailable_fix()


def _combine(values: dict[str, str]) -> str:
    """One value when all agree, else "cpu0=a cpu1=b" so the report shows which differ."""
    distinct = set(values.values())
    if len(distinct) == 1:
        return distinct.pop()
    return " ".join(f"{k}={v}" for k, v in values.items())


def _label(path: str) -> str:
    for part in path.split("/"):
        if part.startswith(("cpu", "policy")) and part[-1:].isdigit():
            return part
    return path


class SysfsControl(Control):
    """A value in one or more files under /sys or /proc (one per core when per-core).

    ``parse`` turns file text into the value (e.g. THP's "always [madvise] never"
    -> "madvise"); writes always put the plain value back.
    """

    def __init__(self, name: str, root: SystemRoot, paths: list[str], wanted: str,
                 parse: Callable[[str], str] = str.strip, required: bool = True,
                 fix_text: str | None = None, unavailable_text: str | None = None):
        self.name = name
        self.root = root
        self.paths = paths
        self._wanted = wanted
        self._parse = parse
        self.required = required
        self._fix = fix_text
        self._unavailable = unavailable_text

    def wanted(self) -> str:
        return self._wanted

    def values(self) -> dict[str, str] | None:
        if not self.paths:
            return None
        out: dict[str, str] = {}
        for p in self.paths:
            try:
                out[_label(p)] = self._parse(self.root.read_text(p))
            except FileNotFoundError:
                return None
            except OSError as e:
                out[_label(p)] = f"unreadable ({e.strerror})"
        return out

    def read(self) -> str | None:
        values = self.values()
        return None if values is None else _combine(values)

    def fix(self, found: str | None) -> str:
        return self._fix or super().fix(found)

    def unavailable_fix(self) -> str:
        return self._unavailable or super().unavailable_fix()

    def apply(self, undo: UndoLog) -> None:
        for p in self.paths:
            raw = self.root.read_text(p)
            current = self._parse(raw)
            if current == self._wanted:
                continue
            undo.record(self.name, p, {"action": "write", "path": p, "value": restorable(raw, current)})
            self.root.write_text(p, self._wanted + "\n")


def restorable(raw: str, value: str) -> str:
    """What to write back: the value, keeping the file's trailing newline (sysfs ignores it)."""
    return value + "\n" if raw.endswith("\n") else value


def bracketed(text: str) -> str:
    """"always [madvise] never" -> "madvise" (sysfs multiple-choice files)."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip()
