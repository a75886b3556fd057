"""Controls: one small class per setting (and per mechanism of a setting), all
with the same steps.

    read()      current value as text, or None when the machine lacks it
    satisfied() does the value match the policy?
    apply()     change it, recording the original in the undo log first
    verify      enforce() reads back and compares
    restore()   replay this control's undo entries

A platform's controls come from a declarative list of classes
(``LINUX_CONTROLS`` in linux.py, ``OPENBSD_CONTROLS`` in openbsd.py), in
the order they are applied and shown; the comments there say why each
stands where it does.  ``chosen(policy)`` says whether the experiment's
[platform] table asks for a control, ``build(machine)`` makes it.
Restore replays the undo log newest first, so it undoes in reverse list
order.

Check-only controls (a kernel built tickless, a boot parameter, a BIOS
switch) cannot apply; their ``fix`` says exactly what the user must change
and where.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from supervisor.errors import PlatformError
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import Commands, SystemRoot
from supervisor.state.undo import UndoLog


@dataclass
class ControlReport:
    control: str
    wanted: str
    found: str | None    # None: not read (a simulated platform)
    ok: bool
    action: str          # "none", "would change", "changed", "unavailable", "report", "fix needed"
    fix: str | None = None
    fatal: bool = False  # stops the experiment (and fails `platform check`)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ControlSeams:
    """What every control is built from: the seams, the policy and the CPUs."""

    root: SystemRoot
    commands: Commands
    policy: PlatformPolicy
    cpus: list[int] = field(default_factory=list)            # online CPUs (Linux)
    benchmark_cpus: set[int] = field(default_factory=set)    # the cores benchmarks run on (Linux)


class Control(ABC):
    name: str = "control"
    # Missing on this machine: is that a problem (needs a fix) or just reported?
    required: bool = True
    # Not required and missing: passed (a setting the machine does not have, like EPP), or
    # not passed though not fatal (a fact coldrun could not learn, like the active timers).
    missing_passes: bool = True
    can_apply: bool = True
    # What the report's fix says; None: the generic "set it, or ignore it" lines below.
    fix_text: str | None = None
    unavailable_text: str | None = None
    # The [platform] field that chooses this control (None: the control's name), and
    # the values of it that leave the control out.
    policy_field: str | None = None
    left_out_by: tuple[Any, ...] = ("ignore",)

    def __init__(self, m: ControlSeams):
        self.root = m.root
        self.commands = m.commands
        self.policy = m.policy

    @classmethod
    def setting(cls, policy: PlatformPolicy) -> Any:
        return getattr(policy, cls.policy_field or cls.name)

    @classmethod
    def chosen(cls, policy: PlatformPolicy) -> bool:
        """Does the [platform] table ask for this control?"""
        return cls.setting(policy) not in cls.left_out_by

    @classmethod
    def build(cls, m: ControlSeams) -> Control:
        control = cls(m)
        # Only smt, swap, transparent_hugepages and overcommit_memory accept "report":
        # then the value is recorded and never enforced.
        if cls.setting(m.policy) == "report":
            return ReportControl(cls.name, control.observe)
        return control

    def wanted(self) -> str:
        """By default the [platform] field's value, as text."""
        return str(self.setting(self.policy))

    @abstractmethod
    def read(self) -> str | None: ...

    def observe(self) -> str | None:
        """The value as "report" records it (None: unavailable)."""
        return self.read()

    def satisfied(self, found: str | None) -> bool:
        return found == self.wanted()

    def fix(self, found: str | None) -> str:
        """What the user must do when apply cannot help."""
        return self.fix_text or f"set {self.name} to {self.wanted()} or set {self.name} = \"ignore\" in [platform]"

    def unavailable_fix(self) -> str:
        return (self.unavailable_text or
                f"{self.name} is not available on this machine; set {self.name} = \"ignore\" in [platform]")

    def apply(self, undo: UndoLog) -> None:
        raise PlatformError(f"{self.name}: cannot be changed by coldrun")

    def inspect(self) -> ControlReport:
        """Read and compare; changes nothing."""
        found = self.read()
        if found is None:
            return ControlReport(self.name, self.wanted(), "unavailable", not self.required and self.missing_passes,
                                 "unavailable", self.unavailable_fix() if self.required or not self.missing_passes
                                 else None, fatal=self.required)
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


def select(entries: Sequence[type[Control]], m: ControlSeams) -> list[Control]:
    """The controls of a platform's list that the policy asks for, in the list's order."""
    return [entry.build(m) for entry in entries if entry.chosen(m.policy)]


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

    def satisfied(self, found: str | None) -> bool:
        return found is not None and self.ok(found)

    def ok(self, found: str) -> bool:
        return found == self.wanted()


def combine(values: dict[str, str]) -> str:
    """One value when all agree, else "cpu0=a cpu1=b" so the report shows which differ."""
    distinct = set(values.values())
    if len(distinct) == 1:
        return distinct.pop()
    return " ".join(f"{k}={v}" for k, v in values.items())


def label(path: str) -> str:
    """The per-core part of a path ("cpu3", "policy3"), else the path."""
    for part in path.split("/"):
        if part.startswith(("cpu", "policy")) and part[-1:].isdigit():
            return part
    return path


class SysfsControl(Control):
    """A value in one or more files under /sys or /proc (one per core when per-core).

    Subclasses set ``paths``; ``parse`` turns file text into the value (e.g.
    THP's "always [madvise] never" -> "madvise"); writes put the plain value back.
    """

    paths: list[str]

    def parse(self, text: str) -> str:
        return text.strip()

    def values(self) -> dict[str, str] | None:
        if not self.paths:
            return None
        out: dict[str, str] = {}
        for p in self.paths:
            try:
                out[label(p)] = self.parse(self.root.read_text(p))
            except FileNotFoundError:
                return None
            except OSError as e:
                out[label(p)] = f"unreadable ({e.strerror})"
        return out

    def read(self) -> str | None:
        values = self.values()
        return None if values is None else combine(values)

    def apply(self, undo: UndoLog) -> None:
        for p in self.paths:
            write_setting(self.root, undo, self.name, p, self.wanted(), self.parse)


def write_setting(root: SystemRoot, undo: UndoLog, control: str, path: str, value: str,
                  parse: Callable[[str], str] = str.strip) -> None:
    """Write ``value`` to a /sys or /proc file unless it holds it already, recording the
    original in the undo log first."""
    raw = root.read_text(path)
    current = parse(raw)
    if current == value:
        return
    undo.record(control, path, {"action": "write", "path": path, "value": restorable(raw, current)})
    root.write_text(path, value + "\n")


def restorable(raw: str, value: str) -> str:
    """What to write back: the value, keeping the file's trailing newline (sysfs ignores it)."""
    return value + "\n" if raw.endswith("\n") else value


def bracketed(text: str) -> str:
    """"always [madvise] never" -> "madvise" (sysfs multiple-choice files)."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip()
