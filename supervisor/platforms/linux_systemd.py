"""What systemd does to a benchmark machine: timers that fire at night, slices that share CPUs.

Through `systemctl` (the Commands seam) only, and only where systemd is PID 1
(/run/systemd/system, sd_booted(3)).  Each change is undone from the undo log.
"""

from __future__ import annotations

from supervisor.cpulist import format_cpulist, parse_cpulist
from supervisor.errors import PlatformError
from supervisor.platforms.controls import Control, ControlSeams
from supervisor.state.undo import UndoLog
from supervisor.system import Commands, SystemRoot

HOUSEKEEPING_SLICES = ("system.slice", "user.slice")


def systemd_booted(root: SystemRoot) -> bool:
    return root.exists("/run/systemd/system")


def _systemctl(commands: Commands, *args: str) -> str | None:
    r = commands.run(["systemctl", *args])
    return r.stdout if r.ok else None


def active_timers(commands: Commands) -> list[str] | None:
    out = _systemctl(commands, "list-units", "--type=timer", "--state=active", "--plain", "--no-legend",
                     "--no-pager")
    if out is None:
        return None
    names = [w for line in out.splitlines() for w in line.split()[:2] if w.endswith(".timer")]
    return sorted(dict.fromkeys(names))


class TimersControl(Control):
    """Every active systemd timer masked and stopped for the experiment's duration.

    Masked, not only stopped: a stopped timer starts again at the next boot, and one with
    Persistent=true (apt-daily, man-db, logrotate, fstrim) then fires at once to catch up.
    The undo log unmasks and starts each again.  What was active is the report's "found".
    """

    name = "timers"
    required = False   # no systemd (or a copy of a machine): nothing coldrun can stop, but not passed
    missing_passes = False
    unavailable_text = ("cannot list systemd timers (systemctl list-units --type=timer failed, or no systemd): "
                        "stop cron, anacron and other schedulers yourself, or set timers = \"ignore\" in [platform]")

    def wanted(self) -> str:
        return "none active"

    def read(self) -> str | None:
        if not systemd_booted(self.root):
            return None
        timers = active_timers(self.commands)
        if timers is None:
            return None
        return " ".join(timers) or "none active"

    def apply(self, undo: UndoLog) -> None:
        for timer in active_timers(self.commands) or []:
            # Replayed newest first: unmask, then start.
            undo.record(self.name, f"timer:{timer}:start", {"action": "run", "argv": ["systemctl", "start", timer]})
            undo.record(self.name, f"timer:{timer}:unmask", {"action": "run", "argv": ["systemctl", "unmask", timer]})
            r = self.commands.run(["systemctl", "mask", "--now", timer])
            if not r.ok:   # a unit file of the admin's own in /etc cannot be masked there: until reboot then
                r = self.commands.run(["systemctl", "mask", "--runtime", "--now", timer])
            if not r.ok:
                raise PlatformError(f"timers: systemctl mask --now {timer} failed: {r.stderr.strip() or r.returncode}; "
                                    "set timers = \"report\" in [platform] to leave timers running")

    def fix(self, found: str | None) -> str:
        return (f"timers still active after masking: {found}; something starts them again (check "
                "systemctl list-dependencies timers.target), or set timers = \"report\" in [platform]")


class HousekeepingSlices(Control):
    """system.slice and user.slice held to the housekeeping CPUs (AllowedCPUs=, --runtime).

    So a unit in them needs cpuset, and systemd keeps the cpuset controller on at the root
    when it re-realises the root slice (a daemon-reload, a unit starting); otherwise it writes
    "-cpuset" there and the benchmark partition dissolves (systemd.resource-control(5),
    AllowedCPUs=; cg_enable_everywhere in src/basic/cgroup-util.c writes "+" for the controllers its
    units need and "-" for every other one).
    """

    name = "housekeeping_slices"
    required = False
    missing_passes = False
    policy_field = "pinning"
    left_out_by = (False,)
    unavailable_text = ("cannot read the slices' AllowedCPUs (systemctl show failed, or no systemd): systemd may "
                        "switch cpuset off and dissolve the partition; coldrun re-makes it before each execution and "
                        "flags an execution that lost it")

    def __init__(self, m: ControlSeams):
        super().__init__(m)
        self.cpus = set(m.cpus) - set(m.benchmark_cpus)

    def wanted(self) -> str:
        return " ".join(f"{s}={format_cpulist(self.cpus)}" for s in HOUSEKEEPING_SLICES)

    def _allowed(self) -> dict[str, str] | None:
        if not systemd_booted(self.root) or not self.cpus:
            return None
        allowed = {}
        for slice_name in HOUSEKEEPING_SLICES:   # one at a time: several units' values come blank-line separated
            out = _systemctl(self.commands, "show", "--property=AllowedCPUs", "--value", slice_name)
            if out is None:
                return None
            allowed[slice_name] = out.strip()
        return allowed

    def read(self) -> str | None:
        allowed = self._allowed()
        if allowed is None:
            return None
        return " ".join(f"{s}={format_cpulist(parse_cpulist(v)) if v else '(all)'}" for s, v in allowed.items())

    def apply(self, undo: UndoLog) -> None:
        for slice_name, old in (self._allowed() or {}).items():
            undo.record(self.name, f"slice:{slice_name}",
                        {"action": "run", "argv": ["systemctl", "set-property", "--runtime", slice_name,
                                                   f"AllowedCPUs={old}"]})
            argv = ["systemctl", "set-property", "--runtime", slice_name, f"AllowedCPUs={format_cpulist(self.cpus)}"]
            r = self.commands.run(argv)
            if not r.ok:
                raise PlatformError(f"housekeeping_slices: {' '.join(argv)} failed: {r.stderr.strip() or r.returncode}")


def units_started(commands: Commands, since_us: int, until_us: int, own_unit: str = "coldrun") -> list[str] | None:
    """Services started and timers fired between two CLOCK_MONOTONIC instants (microseconds):
    systemd's *TimestampMonotonic properties count on the same clock."""
    out = _systemctl(commands, "show", "*.service", "*.timer", "--property=Id",
                     "--property=ExecMainStartTimestampMonotonic", "--property=LastTriggerUSecMonotonic")
    if out is None:
        return None
    ran: list[str] = []
    for block in out.split("\n\n"):   # one block per unit, its properties in systemd's order
        props = dict(line.partition("=")[::2] for line in block.splitlines())
        unit = props.get("Id", "")
        stamps = [props.get(k, "") for k in ("ExecMainStartTimestampMonotonic", "LastTriggerUSecMonotonic")]
        if unit and not unit.startswith(own_unit) and any(
                s.isdigit() and since_us <= int(s) <= until_us for s in stamps):
            ran.append(unit)
    return sorted(ran)
