"""Makes tests/ importable (shared_paths) for every test directory; marks tests by where they live;
sweeps process groups an earlier, killed test run left behind (tests/process_groups.py)."""

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import process_groups  # noqa: E402  (tests/ is on sys.path from here on)
from checkout_access import closed_checkout_line  # noqa: E402

# Whole modules that run real language runners (tests/runners/ is marked as a directory): the
# interpreters, compilers and JDKs scripts/setup --for-tests installs.
REAL_RUNNER_MODULES = {
    "integration/test_languages.py", "integration/test_krun_import_end_to_end.py",
    "integration/test_wheel_install.py", "integration/test_demo_run.py", "integration/test_pair_demo.py",
    "integration/test_pair_unsynchronised.py", "integration/test_screen_demo.py",
}
# The longest tests (a guest's boots under TCG, a crash loop, a wheel built and installed), longest
# first: under xdist they start at once on separate workers (_spread_long_tests), so that none of
# them makes the tail of the run while the other workers sit idle.
LONG = ("vm/test_lab.py", "vm/test_real_reboots.py", "vm/test_screen_reboots.py", "vm/test_duet_cpuset.py",
        "vm/", "integration/test_wheel_install.py", "integration/test_statedir_fuzz.py",
        "integration/test_crash_resume.py", "integration/test_demo_run.py", "integration/test_run_length.py",
        "integration/test_pair_demo.py", "integration/test_pair_crash.py", "integration/test_bad_input.py",
        "integration/test_pair_unsynchronised.py", "fuzz/", "integration/test_run_length_crash.py",
        "integration/test_krun_import_end_to_end.py", "integration/test_languages.py")


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


def pytest_itemcollected(item):
    """Marks by where a test lives; here, not in pytest_collection_modifyitems, so that xdist's own
    modifyitems, which turns xdist_group into the test's id, sees them whatever the hook order."""
    where = _where(item)
    grouping = item.config.pluginmanager.hasplugin("xdist")
    if where.startswith("vm/"):
        item.add_marker(pytest.mark.vm)
        item.add_marker(pytest.mark.slow)
        if grouping:   # guests under TCG starve each other: at most the lab's two and three more at once
            item.add_marker(pytest.mark.xdist_group(_vm_group(where, item.name)))
    elif where.startswith("integration/"):
        item.add_marker(pytest.mark.slow)
    if where.startswith("runners/") or where in REAL_RUNNER_MODULES:
        item.add_marker(pytest.mark.real_runner)
    if any("root" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")):
        item.add_marker(pytest.mark.root)
    if grouping and not where.startswith("vm/") and _shares_a_module_fixture(item):
        item.add_marker(pytest.mark.xdist_group(where))


def _vm_group(where: str, name: str) -> str:
    """Four groups of about equal emulated CPU: the lab's two guests; the power-cut test (the most boots);
    the screening run (five boots or more); the real-reboot run and the pair's cpusets (one boot)."""
    if where == "vm/test_lab.py":
        return "vm-lab"
    if where == "vm/test_screen_reboots.py":
        return "vm-screen"
    return "vm-cuts" if name.startswith("test_power_cuts") else "vm-guest"


def pytest_collection_modifyitems(config, items):
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:   # each xdist worker collects, and all must order alike: this is deterministic
        items[:] = _spread_long_tests(items, int(workers))


def _rank(item) -> int:
    where = _where(item)
    return next((i for i, prefix in enumerate(LONG) if where.startswith(prefix)), len(LONG))


def _spread_long_tests(items: list, workers: int) -> list:
    """Order the units xdist's loadgroup schedules (a test, or the tests of one xdist_group) so that
    long ones do not queue behind each other.  It hands each worker one unit, then a second, then
    one more to a worker each time it finishes a test while holding at most two.  So the VM tests
    (_vm_group's four groups) come first, one group per worker, leaving at least two workers; every
    other long unit then comes after 2 x workers short ones, to whichever worker is free."""
    units: list[list] = []
    for item in sorted(items, key=_rank):   # stable: a group's tests (one module, or the VM tests) adjacent
        # Only a module's own group is one unit here; xdist keeps each VM group on one worker itself
        # (it writes the group into item._nodeid: applied under pytest < 9, which pyproject pins).
        group = None if _where(item).startswith("vm/") else item.get_closest_marker("xdist_group")
        if units and group is not None and units[-1][0].get_closest_marker("xdist_group") == group:
            units[-1].append(item)
        else:
            units.append([item])
    long = sorted((u for u in units if _rank(u[0]) < len(LONG)), key=lambda u: _rank(u[0]))
    short = [u for u in units if _rank(u[0]) == len(LONG)]
    vms = [u for u in long if _where(u[0]).startswith("vm/")]
    head = min(len(vms), max(workers - 2, 1))
    order = long[:head] + short[:workers]
    short = short[workers:]
    for unit in long[head:]:
        order += [unit] + short[:2 * workers]
        short = short[2 * workers:]
    order += short
    return [item for unit in order for item in unit]


def pytest_sessionfinish(session):
    """The run's controller (or a run without xdist) drops the prepared VM guest's disk (~1 GB,
    tests/vm/conftest.py) at the end: here, since xdist's controller never loads tests/vm/conftest.py."""
    factory = getattr(session.config, "_tmp_path_factory", None)   # what the tmp_path_factory fixture gives
    if os.environ.get("PYTEST_XDIST_WORKER") or factory is None or os.environ.get("COLDRUN_VM_KEEP"):
        return
    (factory.getbasetemp() / "prepared-guest" / "root.ext4").unlink(missing_ok=True)


def pytest_sessionstart(session):
    """Said once, before the run (and again under its failures), instead of being found out from ~10 of them."""
    line = closed_checkout_line(TESTS.parent)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if line and reporter is not None and not os.environ.get("PYTEST_XDIST_WORKER"):
        reporter.write_line(f"WARNING: {line}", yellow=True, bold=True)


def pytest_terminal_summary(terminalreporter):
    line = closed_checkout_line(TESTS.parent)
    if line and terminalreporter.stats.get("failed"):
        terminalreporter.write_line(f"WARNING: {line}", yellow=True, bold=True)
