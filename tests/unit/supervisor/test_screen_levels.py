"""Before a start: levels this machine (a fixture tree) cannot take, and factors a simulated run cannot verify;
reading levels back from /proc/cmdline and from what a runner was launched with."""

from __future__ import annotations

from pathlib import Path

import pytest

from doubles import FakeMachine, RecordingCommands
from supervisor.kinds.screening.levels import InForce, NotInForce, cmdline_level, launched_level
from supervisor.kinds.screening.check import level_problems
from supervisor.experiment.model import parse_experiment
from supervisor.kinds.screening.table import Factor
from supervisor.platforms.simulated import SimulatedPlatform
from supervisor.experiment.platform_policy import PlatformPolicy
from supervisor.system import SystemRoot
from screen_experiments import ONE_KEY

ROOTS = Path(__file__).resolve().parents[2] / "fixtures" / "roots"
BASE = ONE_KEY


class _Log:
    def __getattr__(self, name):
        return lambda *a, **k: None


def problems(screening: str, root: str, simulate: bool = False) -> list[str]:
    exp = parse_experiment((BASE + screening).encode(), "exp.toml")
    machine = FakeMachine(SimulatedPlatform(PlatformPolicy(), log=_Log()), root=SystemRoot(ROOTS / root),
                          commands=RecordingCommands())
    return level_problems(exp, machine, simulate=simulate)


GOVERNOR = '[screening.factors.gov]\nkind = "control"\ncontrol = "governor"\nlevels = ["performance", "{}"]\n'


def test_a_governor_the_driver_does_not_offer_is_refused():
    assert problems(GOVERNOR.format("powersave"), "intel-desktop") == []
    lines = problems(GOVERNOR.format("ondemand"), "intel-desktop")
    assert len(lines) == 1 and lines[0].startswith("screening.factors.gov.levels: governor = ondemand cannot be set")
    assert "available: performance powersave" in lines[0]


def test_a_control_the_machine_lacks_is_refused_for_every_level():
    lines = problems(GOVERNOR.format("powersave"), "vm-nocpufreq")
    assert len(lines) == 2 and all("cannot be set on this machine" in ln and "no cpufreq driver is loaded" in ln
                                   for ln in lines)


def test_simulated_runs_refuse_control_and_reboot_factors_but_take_benchmark_side_ones():
    reboot = ('[screening.factors.os]\nkind = "kernel_cmdline"\nparameter = "os"\nlevels = ["a", "b"]\n'
              'switch = ["true"]\n')
    env = '[screening.factors.e]\nkind = "env"\nvariable = "E"\nlevels = ["a", "b"]\n'
    lines = problems(GOVERNOR.format("powersave") + reboot + env, "intel-desktop", simulate=True)
    assert [ln.split(":")[0] for ln in lines] == ["screening.factors.gov", "screening.factors.os"]
    assert all("--simulate-reboots" in ln for ln in lines)
    assert problems(env, "intel-desktop", simulate=True) == []


def test_cmdline_levels_by_token_and_by_absence():
    f = Factor(kind="kernel_cmdline", parameter="mitigations", levels=["auto", "off"], switch=["true"])
    assert cmdline_level(f, "ro quiet mitigations=off") == "off"
    assert cmdline_level(f, "ro mitigations=auto quiet") == "auto"
    assert cmdline_level(f, "ro quiet") is None
    smt = Factor(kind="kernel_cmdline", parameter="nosmt", levels=["on", "off"], values={"on": "", "off": "nosmt"},
                 switch=["true"])
    assert cmdline_level(smt, "ro quiet") == "on" and cmdline_level(smt, "ro nosmt quiet") == "off"


def _launched(factor, argv, env, vm="c", variant="v"):
    """The factor's level as a run of bench:vm:variant with this argv and environment shows it."""
    return launched_level(factor, f"b:{vm}:{variant}", {"argv": argv, "environment": env})


def test_benchmark_side_levels_are_read_from_what_was_launched():
    arg = Factor(kind="argument", levels=["none", "O"], values={"none": [], "O": ["-O"]})
    assert _launched(arg, ["python3", "-O", "bench.py"], {}) == InForce("O")
    assert _launched(arg, ["python3", "bench.py"], {}) == InForce("none")
    env = Factor(kind="env", variable="PAD", levels=["small", "large"], values={"large": "xxxx"})
    assert _launched(env, [], {"PAD": "xxxx"}) == InForce("large")
    assert _launched(env, [], {"PAD": "small"}) == InForce("small")
    assert _launched(env, [], {"PAD": "zz"}) == NotInForce("PAD=zz")
    assert _launched(env, None, None) == NotInForce("the runner was not launched")
    build = Factor(kind="variant", levels=["plain", "fp"], values={"plain": {"c": "c-plain", "py": "py"},
                                                                   "fp": {"c": "c-fp"}})
    assert _launched(build, [], {}, "c", "c-fp") == InForce("fp")
    assert _launched(build, [], {}, "py", "py") == InForce("plain")


def test_boot_setting_levels_come_from_the_report_command():
    from supervisor.kinds.screening.levels import reported_level
    f = Factor(kind="boot_setting", levels=["60", "10"], switch=["true"], report=["cat", "/proc/sys/vm/swappiness"])
    commands = RecordingCommands(replies={("cat",): (0, "10\n", "")})
    machine = FakeMachine(SimulatedPlatform(PlatformPolicy(), log=_Log()), commands=commands)
    assert reported_level(f, machine) == ("10", "cat /proc/sys/vm/swappiness reports '10'")
    commands.replies[("cat",)] = (0, "30\n", "")
    assert reported_level(f, machine) == (None, "cat /proc/sys/vm/swappiness reports '30'")
    kernel = Factor(kind="boot_setting", levels=["old", "new"], values={"old": "6.1.0-9", "new": "6.1.0-13"},
                    switch=["grub-reboot", "{level}"], report=["uname", "-r"])
    commands.replies[("uname",)] = (0, "6.1.0-13\n", "")
    assert reported_level(kernel, machine)[0] == "new"
    with pytest.raises(ValueError, match="needs report"):
        Factor(kind="boot_setting", levels=["a", "b"], switch=["true"])
