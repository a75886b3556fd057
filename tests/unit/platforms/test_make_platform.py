import sys

import pytest

from supervisor.errors import ColdrunError
from supervisor.platforms.factory import detect_platform_name, make_platform
from supervisor.platforms.base import Platform
from supervisor.platforms.linux import LinuxPlatform
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import SystemRoot
from doubles import FakeClock, RecordingCommands
from supervisor.experiment.model import Waits

from platform_helpers import MemoryLog


def build(name, tmp_path):
    return make_platform(name, PlatformPolicy(), tmp_path, root=SystemRoot(tmp_path), commands=RecordingCommands(),
                         clock=FakeClock(), log=MemoryLog())


def test_names_give_platforms(tmp_path):
    assert isinstance(build("linux", tmp_path), LinuxPlatform)
    assert build("openbsd", tmp_path).name == "openbsd"
    sim = build("simulated", tmp_path)
    assert isinstance(sim, Platform) and sim.name == "simulated"


def test_unknown_name_is_a_clear_error(tmp_path):
    with pytest.raises(ColdrunError, match="unknown platform 'windows'; expected one of simulated, linux, openbsd"):
        build("windows", tmp_path)


def test_detect_on_this_machine():
    assert detect_platform_name() == ("linux" if sys.platform.startswith("linux") else "openbsd")


def test_waits_come_from_the_experiment(tmp_path):
    w = Waits(boot_settle=1, sync=2, temperature_tolerance=0.5, temperature_deadline=60, baseline_pause=3)
    p = make_platform("linux", PlatformPolicy(), tmp_path, root=SystemRoot(tmp_path), commands=RecordingCommands(),
                      clock=FakeClock(), log=MemoryLog(), waits=w)
    assert (p.waits.boot_settle, p.waits.temperature_tolerance, p.waits.temperature_deadline) == (1, 0.5, 60)


@pytest.mark.parametrize("field,value,msg", [
    ("turbo", "maybe", "turbo"), ("governor", 3, "governor"), ("unknown_control", 1, "unknown_control"),
    ("amperf_ratio_bounds", (1.1, 1.2), "0 < low <= 1 <= high"), ("benchmark_cpus", "1-x", "bad cpu list"),
    ("kernel_log_allow", ["("], "does not compile"), ("benchmark_user_name", "Root User", "valid user name"),
])
def test_policy_rejects_bad_values(field, value, msg):
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match=msg):
        PlatformPolicy(**{field: value})


def test_policy_defaults_are_the_papers():
    p = PlatformPolicy()
    assert (p.governor, p.turbo, p.perf_max_sample_rate, p.aslr, p.tickless, p.nice) == \
        ("performance", "off", 1, True, "require", -20)
    assert PlatformPolicy(turbo=False).turbo == "off" and PlatformPolicy(turbo=True).turbo == "on"
    assert p.malloc_options == "cfgrux" and p.amperf_ratio_bounds == (0.995, 1.005)
