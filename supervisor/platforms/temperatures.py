"""Temperature sensors and the wait for them to return to their baselines.

Linux: every temp*_input of every chip in /sys/class/hwmon (any number of
chips) and every /sys/class/thermal/thermal_zone*/temp, of which the policy's
temperature_sensors are used (by default the CPU's own: a drive, NIC or DIMM
sensor follows the room and the disks, and the busy loop cannot warm it).
Sensor names are stable across boots (hwmonN numbering is not): the chip
name, an index among chips of the same name ordered by device path, and the
input file.  A sensor that stops giving readings is reported and left out.
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Callable

from supervisor.errors import PlatformError
from supervisor.system import Clock, SystemRoot

POLL_SECONDS = 1.0          # Krun polls once a second
LOG_EVERY_SECONDS = 60.0    # say who is out of range at most once a minute
HEAT_LOOP_ITERATIONS = 10_000_000  # Krun's make_heat()


def _device_key(root: SystemRoot, chip_dir: str) -> str:
    dev = root.path(chip_dir + "/device")
    try:
        return os.path.realpath(dev) if dev.exists() else chip_dir
    except OSError:
        return chip_dir


def _read_millidegrees(root: SystemRoot, path: str) -> float | None:
    try:
        return int(root.read_text(path).strip()) / 1000.0
    except (OSError, ValueError):
        return None  # some inputs report EIO/ENODATA when the sensor is absent


def linux_sensor_paths(root: SystemRoot) -> dict[str, str]:
    """Sensor name -> system path of its millidegree reading."""
    sensors: dict[str, str] = {}
    chips: dict[str, list[tuple[str, str]]] = {}
    for chip in root.glob("/sys/class/hwmon/hwmon*"):
        try:
            name = root.read_text(chip + "/name").strip()
        except OSError:
            name = "unknown"
        chips.setdefault(name, []).append((_device_key(root, chip), chip))
    for name, members in sorted(chips.items()):
        members.sort()
        for i, (_, chip) in enumerate(members):
            label = name if len(members) == 1 else f"{name}[{i}]"
            for inp in root.glob(chip + "/temp*_input"):
                sensors[f"hwmon/{label}/{inp.rsplit('/', 1)[1]}"] = inp
    zones: dict[str, list[str]] = {}
    for zone in root.glob("/sys/class/thermal/thermal_zone*"):
        try:
            ztype = root.read_text(zone + "/type").strip()
        except OSError:
            ztype = "unknown"
        zones.setdefault(ztype, []).append(zone)
    for ztype, zone_members in sorted(zones.items()):
        zone_members.sort(key=lambda z: int(re.sub(r"\D", "", z.rsplit("/", 1)[1]) or 0))
        for i, zone in enumerate(zone_members):
            label = ztype if len(zone_members) == 1 else f"{ztype}[{i}]"
            sensors[f"thermal/{label}"] = zone + "/temp"
    return sensors


def sensor_chosen(name: str, patterns: list[str] | tuple[str, ...] | None) -> bool:
    """A pattern (fnmatch) names the chip or zone type ("k10temp", "cpu*thermal") or a whole sensor name."""
    if patterns is None:
        return True
    chip = re.sub(r"\[\d+\]$", "", name.split("/")[1])
    return any(fnmatch.fnmatchcase(chip, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def read_linux_temperatures(root: SystemRoot, patterns: list[str] | tuple[str, ...] | None = None) -> dict[str, float]:
    out = {}
    for name, path in linux_sensor_paths(root).items():
        if not sensor_chosen(name, patterns):
            continue
        t = _read_millidegrees(root, path)
        if t is not None:
            out[name] = t
    return out


def busy_loop_heat() -> None:
    """Warm the CPU a little, as Krun's make_heat() does (fixed work, no clock)."""
    x = 0
    for i in range(HEAT_LOOP_ITERATIONS):
        x ^= i
    if x == -1:  # keep the loop from being trivially dead
        print(x)


def out_of_range(temps: dict[str, float], baselines: dict[str, float],
                 tolerance: float) -> dict[str, float]:
    """Sensor -> signed difference from its baseline, for those outside tolerance.

    A sensor with a baseline but no reading now is reported as NaN.
    """
    out = {}
    for name, base in baselines.items():
        if name not in temps:
            out[name] = float("nan")
            continue
        diff = temps[name] - base
        if abs(diff) > tolerance:
            out[name] = diff
    return out


def describe(out: dict[str, float], temps: dict[str, float], baselines: dict[str, float]) -> str:
    parts = []
    for name, diff in sorted(out.items()):
        if diff != diff:
            parts.append(f"{name} gives no reading (baseline {baselines[name]:.1f} °C)")
        else:
            way = "above" if diff > 0 else "below"
            parts.append(f"{name} {temps[name]:.1f} °C is {abs(diff):.1f} °C {way} baseline {baselines[name]:.1f}")
    return "; ".join(parts)


def wait_for_baselines(read: Callable[[], dict[str, float]], baselines: dict[str, float], *,
                       tolerance: float, deadline_seconds: float, clock: Clock, log,
                       heat: Callable[[], None] | None) -> float:
    """Block until every sensor is within ``tolerance`` of its baseline.

    Too hot: sleep and poll.  Too cold (and nothing too hot): run ``heat``
    when given.  Raises PlatformError once ``deadline_seconds`` of monotonic
    time pass.  Returns the seconds waited.
    """
    start = clock.monotonic()
    last_log = None
    baselines = dict(baselines)
    while True:
        temps = read()
        for name in sorted(set(baselines) - set(temps)):
            # A failing sensor is not waited on: it would hold the boot for the whole deadline.
            log.warning("temperature sensor gives no reading; left out", sensor=name,
                        baseline_c=round(baselines.pop(name), 2))
        out = out_of_range(temps, baselines, tolerance)
        now = clock.monotonic()
        if not out:
            if last_log is not None:
                log.info("temperatures back within tolerance", waited_s=round(now - start, 1))
            return now - start
        text = describe(out, temps, baselines)
        if now - start >= deadline_seconds:
            raise PlatformError(f"temperature: sensors still outside ±{tolerance} °C of their baselines after "
                                f"{deadline_seconds:.0f} s: {text}")
        if last_log is None or now - last_log >= LOG_EVERY_SECONDS:
            log.info("waiting for temperatures", out_of_range=text, tolerance_c=tolerance,
                     gives_up_in_s=round(deadline_seconds - (now - start)))
            last_log = now
        too_cold = all(d == d and d < 0 for d in out.values())
        if too_cold and heat is not None:
            heat()
        else:
            clock.sleep(POLL_SECONDS)
