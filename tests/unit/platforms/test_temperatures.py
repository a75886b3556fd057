import pytest

from supervisor.errors import PlatformError
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.platforms.temperatures import linux_sensor_paths, read_linux_temperatures, wait_for_baselines
from supervisor.system import SystemRoot
from doubles import FakeClock

from platform_helpers import MemoryLog, make_linux


def test_every_hwmon_chip_is_found_even_past_hwmon9(machine):
    root = SystemRoot(machine("amd-server"))
    sensors = linux_sensor_paths(root)
    # 12 chips; two k10temp chips keep both, told apart by index
    assert "hwmon/k10temp[0]/temp1_input" in sensors and "hwmon/k10temp[1]/temp1_input" in sensors
    assert "hwmon/bmc_fan8/temp1_input" in sensors  # hwmon11
    assert len(sensors) == 2 + 3 + 9
    temps = read_linux_temperatures(root)
    assert temps["hwmon/nvme/temp2_input"] == pytest.approx(51.85)


def test_thermal_zones_are_sensors_too(machine):
    temps = read_linux_temperatures(SystemRoot(machine("acpi-old")))
    assert temps["thermal/acpitz[0]"] == 27.8 and temps["thermal/acpitz[1]"] == 29.8
    assert temps["hwmon/coretemp/temp1_input"] == 36.0


class Sensors:
    """Readings that move a fixed step per poll (cooling) or per heat() call (warming)."""

    def __init__(self, clock, start, cool_per_s=0.0, heat_step=0.0, cooling=None):
        self.clock, self.start, self.cool, self.heat_step = clock, dict(start), cool_per_s, heat_step
        self.cooling = set(start) if cooling is None else cooling
        self.t0 = clock.monotonic()
        self.heated = 0

    def read(self):
        dt = self.clock.monotonic() - self.t0
        return {k: v - (self.cool * dt if k in self.cooling else 0) + self.heat_step * self.heated
                for k, v in self.start.items()}

    def heat(self):
        self.heated += 1


def test_within_tolerance_returns_at_once():
    clock = FakeClock()
    s = Sensors(clock, {"a": 40.0, "b": 52.0})
    waited = wait_for_baselines(s.read, {"a": 41.0, "b": 50.0}, tolerance=3, deadline_seconds=3600,
                                clock=clock, log=MemoryLog(), heat=s.heat)
    assert waited == 0 and clock.slept == []


def test_too_hot_waits_until_cooled_and_logs_who_and_how_much():
    clock, log = FakeClock(), MemoryLog()
    s = Sensors(clock, {"cpu": 50.0, "nvme": 40.0}, cool_per_s=0.1, cooling={"cpu"})  # only cpu is out
    waited = wait_for_baselines(s.read, {"cpu": 40.0, "nvme": 40.0}, tolerance=3, deadline_seconds=3600,
                                clock=clock, log=log, heat=s.heat)
    assert waited == pytest.approx(71, abs=1)  # 50 - 0.1 t <= 43
    first = log.named("waiting for temperatures")[0]["out_of_range"]
    assert "cpu 50.0 °C is 10.0 °C above baseline 40.0" in first and "nvme" not in first
    assert s.heated == 0


def test_too_cold_runs_the_heater():
    clock = FakeClock()
    s = Sensors(clock, {"cpu": 30.0}, heat_step=2.0)
    wait_for_baselines(s.read, {"cpu": 40.0}, tolerance=3, deadline_seconds=3600, clock=clock,
                       log=MemoryLog(), heat=s.heat)
    assert s.heated == 4  # 30 + 2*4 = 38 >= 37


def test_deadline_stops_with_the_sensor_and_the_amount():
    clock = FakeClock()
    s = Sensors(clock, {"hwmon/coretemp/temp1_input": 60.0})
    with pytest.raises(PlatformError) as e:
        wait_for_baselines(s.read, {"hwmon/coretemp/temp1_input": 40.0}, tolerance=3, deadline_seconds=3600,
                           clock=clock, log=MemoryLog(), heat=None)
    assert "after 3600 s" in str(e.value) and "coretemp/temp1_input 60.0 °C is 20.0 °C above" in str(e.value)
    assert clock.now - 1000.0 == pytest.approx(3600, abs=1)


def test_platform_baselines_then_wait(machine, tmp_path):
    root = machine("intel-desktop")
    clock = FakeClock()
    p = make_linux(root, tmp_path / "s", PlatformPolicy(intel_pstate="allow"), clock=clock)
    base = p.take_baselines()
    # the CPU's sensors only: coretemp's five and x86_pkg_temp, not ACPI's board sensor (acpitz)
    assert clock.slept == [60.0] and base["hwmon/coretemp/temp1_input"] == 41.0 and len(base) == 6
    assert "hwmon/acpitz/temp1_input" not in base and "thermal/x86_pkg_temp" in base
    (tmp_path / "s").mkdir()
    p.wait_until_ready(base)          # the first boot takes the baselines every later boot waits for
    (root / "sys/class/hwmon/hwmon1/temp1_input").write_text("52000\n")
    p.waits.temperature_deadline = 10
    with pytest.raises(PlatformError, match="coretemp/temp1_input 52.0 °C is 11.0 °C above"):
        p.wait_until_ready(base)
    assert ("sync",) in p.commands.calls


def test_baselines_are_those_of_the_first_idle_boot_not_of_start(machine, tmp_path):
    """At `start` someone is still working: the CPU is warm.  The first boot, idle, sets the baselines."""
    root = machine("intel-desktop")
    sensor = root / "sys/class/hwmon/hwmon1/temp1_input"
    clock, log = FakeClock(), MemoryLog()
    (tmp_path / "s").mkdir()
    p = make_linux(root, tmp_path / "s", PlatformPolicy(intel_pstate="allow"), clock=clock, log=log)
    sensor.write_text("70000\n")
    at_start = p.take_baselines()
    assert at_start["hwmon/coretemp/temp1_input"] == 70.0
    sensor.write_text("41000\n")
    p.wait_until_ready(at_start)                   # first boot: idle at 41 °C, no wait for 70
    assert clock.slept.count(1.0) == 0
    assert log.named("temperature baselines taken at the first boot (those at start: recorded only)")
    sensor.write_text("52000\n")                  # a later boot: too hot for the idle baseline
    p.waits.temperature_deadline = 5
    with pytest.raises(PlatformError, match="52.0 °C is 11.0 °C above baseline 41.0"):
        p.wait_until_ready(at_start)
