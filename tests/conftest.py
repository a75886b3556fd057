"""Makes tests/ importable (shared_paths) for every test directory; marks tests by where they live;
sweeps process groups an earlier, killed test run left behind (tests/process_groups.py)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import process_groups  # noqa: E402  (tests/ is on sys.path from here on)

# Whole modules that run real language runners (tests/runners/ is marked as a directory): the
# interpreters, compilers and JDKs scripts/setup --for-tests installs.
REAL_RUNNER_MODULES = {
    "integration/test_languages.py", "integration/test_krun_import_end_to_end.py",
    "integration/test_wheel_install.py", "integration/test_demo_run.py", "integration/test_pair_demo.py",
    "integration/test_pair_unsynchronised.py", "integration/test_screen_demo.py",
}
# Where a module's tests start first under xdist: the longest ones (a guest boot, a crash loop) go
# first, so they do not make the tail of the run while the other workers sit idle.
LONG_FIRST = ("vm/", "integration/test_crash_resume.py", "integration/test_run_length_crash.py",
              "integration/test_pair_crash.py", "integration/test_wheel_install.py",
              "integration/test_languages.py", "runners/")


def _where(item) -> str:
    try:
        return Path(item.fspath).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return ""


def _shares_a_module_fixture(item) -> bool:
    """Tests sharing a module-scoped fixture (a built venv, compiled C tests, a computed summary) run on
    one xdist worker, which builds it once; every other test is scheduled on its own."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(defs[-1].scope in ("module", "package", "class")
                                    for defs in info.name2fixturedefs.values() if defs)


def pytest_collection_modifyitems(config, items):
    grouping = config.pluginmanager.hasplugin("xdist")
    for item in items:
        where = _where(item)
        if where.startswith("vm/"):
            item.add_marker(pytest.mark.vm)
            item.add_marker(pytest.mark.slow)
        elif where.startswith("integration/"):
            item.add_marker(pytest.mark.slow)
        if where.startswith("runners/") or where in REAL_RUNNER_MODULES:
            item.add_marker(pytest.mark.real_runner)
        if any("root" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.root)
        if grouping and _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(where))

    def rank(item) -> int:
        where = _where(item)
        return next((i for i, prefix in enumerate(LONG_FIRST) if where.startswith(prefix)), len(LONG_FIRST))

    items.sort(key=rank)   # stable: the order within each rank is pytest's


def pytest_sessionstart(session):
    process_groups.sweep_orphans()
    process_groups.install_exit_nets()
