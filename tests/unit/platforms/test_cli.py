import argparse
import io
import os

import pytest

from supervisor.cli import add_platform_commands
from supervisor.platform_cli import problems, show
from supervisor.experiment.platform_policy import PlatformPolicy

from platform_helpers import EXPERIMENT, ROOTS, tree_digest

def parser():
    p = argparse.ArgumentParser()
    add_platform_commands(p.add_subparsers(dest="command"))
    return p

def run(argv, capsys):
    args = parser().parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo"), reason="needs a Linux /proc to read")
def test_show_on_this_real_machine_reads_only_and_says_what_is_missing():
    """Against the real / (read only): no root errors, states virtual-or-not and the unavailable controls."""
    out = io.StringIO()
    reports = show(PlatformPolicy(), "/", "linux", out=out)
    text = out.getvalue()
    assert text.startswith("machine: VIRTUAL (") or text.startswith("machine: bare metal (")
    names = {r.control for r in reports}
    assert {"governor", "turbo", "perf_max_sample_rate", "aslr", "tickless", "kernel_log"} <= names
    unavailable = [r.control for r in reports if r.action == "unavailable"]
    if unavailable:
        assert f"unavailable on this machine: {', '.join(unavailable)}" in text
    if text.startswith("machine: VIRTUAL") and not os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq"):
        assert "governor" in unavailable


@pytest.mark.parametrize("shape", ["intel-desktop", "amd-server", "acpi-old", "vm-nocpufreq"])
def test_show_on_fake_roots_changes_nothing(shape, capsys):
    before = tree_digest(ROOTS / shape)
    code, out = run(["platform", "show", "--root", str(ROOTS / shape), "--os", "linux"], capsys)
    assert code == 0 and "governor" in out
    assert tree_digest(ROOTS / shape) == before


def test_show_names_the_vm_and_the_unavailable_controls(capsys):
    _, out = run(["platform", "show", "--root", str(ROOTS / "vm-nocpufreq"), "--os", "linux"], capsys)
    assert out.startswith("machine: VIRTUAL (cpu flag 'hypervisor')")
    assert "unavailable on this machine: governor, energy_performance_preference, turbo" in out


def test_check_ready_and_not_ready(tmp_path, capsys):
    ready = tmp_path / "ready.toml"
    ready.write_text(EXPERIMENT.format(platform='governor = "ignore"\nturbo = "ignore"\ntickless = "ignore"\n'
                                                'benchmark_user = false'))
    code, out = run(["platform", "check", str(ready), "--root", str(ROOTS / "vm-nocpufreq"), "--os", "linux"], capsys)
    assert code == 0, out
    assert "will change perf_max_sample_rate: 100000 -> 1" in out and out.rstrip().endswith("platform ready")

    strict = tmp_path / "strict.toml"
    strict.write_text(EXPERIMENT.format(platform="benchmark_user = false"))
    code, out = run(["platform", "check", str(strict), "--root", str(ROOTS / "vm-nocpufreq"), "--os", "linux"],
                    capsys)
    assert code == 1
    lines = [ln for ln in out.splitlines() if ln.startswith("problem: ")]
    assert [ln.split(":")[1].strip() for ln in lines] == ["governor", "turbo", "tickless"]
    assert all("ignore" in ln or "CONFIG_NO_HZ_FULL" in ln for ln in lines)


def test_check_bad_experiment_is_one_line_error(tmp_path):
    from supervisor.errors import ColdrunError
    bad = tmp_path / "bad.toml"
    bad.write_text(EXPERIMENT.format(platform='turbo = "sometimes"'))
    args = parser().parse_args(["platform", "check", str(bad)])
    with pytest.raises(ColdrunError) as e:
        args.func(args)
    assert "bad.toml" in str(e.value) and "turbo" in str(e.value) and "\n" not in str(e.value)


def test_problems_on_intel_desktop_name_the_fix():
    probs, changes = problems(PlatformPolicy(benchmark_user=False), str(ROOTS / "intel-desktop"), "linux")
    assert any(p.startswith("intel_pstate: intel_pstate is driving the CPU") for p in probs)
    assert "governor: powersave -> performance" in changes
