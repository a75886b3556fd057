"""A missing real part (interpreter, pdflatex, qemu ...) skips a test locally but fails it under CI=true."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from real_parts import missing_real_part
from shared_paths import REPO


@pytest.mark.parametrize("ci", ["true", "True", "1"])
def test_ci_turns_the_skip_into_a_failure(ci, monkeypatch):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match=r"CI=true and a real part is missing: luajit .*apt-get"):
        missing_real_part("luajit is not installed (apt-get install luajit)")


@pytest.mark.parametrize("ci", [None, "false", ""])
def test_outside_ci_it_skips_with_the_reason(ci, monkeypatch):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=r"apt-get install luajit"):
        missing_real_part("luajit is not installed (apt-get install luajit)")


def test_vm_tests_fail_under_ci_when_qemu_is_missing(tmp_path):
    """tests/vm/conftest.py's guest image fixture, with no qemu on PATH: a skip locally, a failure under CI."""
    (tmp_path / "test_needs_vm.py").write_text(textwrap.dedent("""\
        def test_boots(guest_image):
            pass
        """))
    vm_dir = REPO / "tests" / "vm"
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""\
        import importlib.util, sys
        sys.path[:0] = [{str(vm_dir)!r}, {str(REPO / 'tests')!r}]
        spec = importlib.util.spec_from_file_location("vm_conftest", {str(vm_dir / 'conftest.py')!r})
        vm_conftest = sys.modules["vm_conftest"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(vm_conftest)
        guest_image = vm_conftest.guest_image
        """))
    env = {"PATH": str(tmp_path / "nothing-here"), "HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)]
    local = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert local.returncode == 0 and "1 skipped" in local.stdout and "apt-get install" in local.stdout, local.stdout
    ci = subprocess.run(argv, env={**env, "CI": "true"}, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ci.returncode != 0 and "CI=true and a real part is missing" in ci.stdout, ci.stdout
    assert "qemu" in ci.stdout and "apt-get install" in ci.stdout
