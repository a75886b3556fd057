"""`coldrun check` loads every benchmark and lists every problem at once; `--rehearse` runs each key a few
iterations and gives an ETA (issue 25).  Real interpreters, real broken benchmarks (tests/broken_benchmarks.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from broken_benchmarks import BROKEN, LOAD, REHEARSAL, missing_tools, write_suite
from coldrun_helpers import coldrun


@pytest.fixture(scope="module")
def broken_check(tmp_path_factory):
    root = tmp_path_factory.mktemp("broken")
    exp = write_suite(root)
    return root, coldrun("check", str(exp), "--rehearse", "--rehearse-iterations", "2", timeout=600)


def test_check_exits_1_and_names_every_broken_benchmark_once(broken_check):
    root, res = broken_check
    assert res.returncode == 1, res.stdout + res.stderr
    missing = missing_tools()
    if missing:
        print("languages not tried:", missing)     # the skip's reason, visible with -s
    problems = [line for line in res.stdout.splitlines() if line.startswith("problem: ")]
    for name, b in BROKEN.items():
        if b.lang in missing:
            continue
        key = f"{name}:{b.lang}:{b.lang}"
        mine = [line for line in problems if f": {key} " in line]
        if b.caught_by == LOAD:
            assert len(mine) == 1, (name, problems)
            assert "does not load" in mine[0] and b.says in mine[0] and str(root / "benchmarks" / name) in mine[0]
            assert b.fix in mine[0], (name, mine[0])
        else:
            assert mine == [], mine           # it loads: only the rehearsal can find it
    n_load = sum(1 for b in BROKEN.values() if b.lang not in missing and b.caught_by == LOAD)
    n_rehearsal = sum(1 for b in BROKEN.values() if b.lang not in missing and b.caught_by == REHEARSAL)
    assert res.stdout.splitlines()[0].endswith(f"NOT READY, {n_load + n_rehearsal} problem(s), experiment 'broken'")


def test_the_rehearsal_finds_first_iteration_failures_in_the_language_s_words(broken_check):
    root, res = broken_check
    missing = missing_tools()
    lines = res.stdout.splitlines()
    lines = lines[lines.index(next(line for line in lines if line.startswith("rehearsal (")))
                  :lines.index(next(line for line in lines if line.startswith("ETA:"))) + 1]
    for name, b in BROKEN.items():
        if b.lang in missing:
            continue
        key = f"{name}:{b.lang}:{b.lang}"
        mine = [line for line in lines if line.startswith(f"  {key}")]
        if b.caught_by == REHEARSAL:
            assert len(mine) == 1 and "FAILED (errored)" in mine[0] and b.says in mine[0], (name, mine)
            assert b.fix in mine[0], (name, mine[0])
        else:
            assert mine == [], mine           # a key that does not load is not rehearsed
    for lang in ("python", "lua"):
        if lang not in missing:
            assert any(re.match(rf"  good:{lang}:{lang}: ok, [0-9.e-]+ s per iteration", line) for line in lines)
    # the ETA counts the keys that rehearsed ok: here the two good ones, 2 executions each
    ok = sum(1 for lang in ("python", "lua") if lang not in missing)
    planned = sum(1 for b in BROKEN.values() if b.lang not in missing) * 2 + ok * 2
    assert any(re.match(rf"ETA: [0-9.hms]+ for {2 * ok} of the {planned} process executions planned "
                        r"\(those of keys that rehearsed ok\)", line) for line in lines), lines[-1]


def _experiment(root: Path, body: str, benchmarks: dict[str, str], *, benchmark_user: bool = False) -> Path:
    for name, source in benchmarks.items():
        d = root / "benchmarks" / name / "python"
        d.mkdir(parents=True)
        (d / "bench.py").write_text(source)
    text = textwrap.dedent(f"""\
        name = "t"
        executions = 3
        {body}
        [waits]
        boot_settle = "10s"
        sync = "0s"
        baseline_pause = "0s"

        [platform]
        benchmark_user = {str(benchmark_user).lower()}

        [variants.py]
        target = "bench.py"
        subdir = "python"

        [vms.py]
        runner = "python"
        executable = "/usr/bin/python3"
        iterations = 4
        variants = ["py"]
        """)
    exp = root / "t.toml"
    exp.write_text(text)
    return exp


GOOD = "def run_iter(n):\n    return sum(range(n))\n"


def test_the_rehearsal_s_eta_is_the_planned_executions_at_its_times(tmp_path):
    exp = _experiment(tmp_path, "[benchmarks]\na = 1000\nb = 2000\n", {"a": GOOD, "b": GOOD})
    res = coldrun("check", str(exp), "--rehearse", "--rehearse-iterations", "3")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith(f"{exp}: OK")
    assert "loaded 2 of 2 benchmark(s)" in res.stdout
    eta = re.search(r"^ETA: (\d+)m(\d+)s for the 6 process executions planned", res.stdout, re.M)
    assert eta, res.stdout
    seconds = int(eta[1]) * 60 + int(eta[2])
    assert 60 <= seconds < 60 + 6 * 5        # 6 x boot settle 10 s, plus 6 short runs of a few iterations


def test_every_missing_file_is_listed_in_one_run_and_start_refuses_naming_the_count(tmp_path):
    exp = _experiment(tmp_path, "[benchmarks]\na = 1\nb = 1\nc = 1\nd = 1\n", {"d": GOOD})
    res = coldrun("check", str(exp))
    assert res.returncode == 1
    problems = [line for line in res.stdout.splitlines() if line.startswith("problem: ")]
    assert [re.search(r"benchmarks\.(\w)", line)[1] for line in problems] == ["a", "b", "c"]
    assert all("bench.py missing" in line for line in problems)
    assert "loaded 1 of 1 benchmark(s)" in res.stdout          # d, the one that is there, is loaded
    start = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(tmp_path / "st"))
    assert start.returncode == 2 and "(and 2 more; coldrun check lists them)" in start.stderr
    assert not (tmp_path / "st").exists()


def test_a_hanging_load_is_bounded_by_the_timeout(tmp_path):
    exp = _experiment(tmp_path, "[benchmarks]\nslow = 1\nok = 1\n",
                      {"slow": "import time\ntime.sleep(60)\n" + GOOD, "ok": GOOD})
    res = coldrun("check", str(exp), "--load-timeout", "2")
    assert res.returncode == 1
    (line,) = [line for line in res.stdout.splitlines() if line.startswith("problem: ")]
    assert "slow:py:py" in line and "does not load: timed out after 2s" in line
    assert "loaded 1 of 2 benchmark(s)" in res.stdout


def test_inputs_that_are_checkable_are_checked(tmp_path):
    exp = _experiment(tmp_path, '[benchmarks]\na = 1\n[mail]\nto = ["-oQ/tmp/x", "ok@example.org", "root"]\n',
                      {"a": GOOD})
    text = exp.read_text().replace("benchmark_user = false", 'benchmark_user = false\ngovernor = "turbo-please"')
    exp.write_text(text)
    res = coldrun("check", str(exp))
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert any("mail.to: '-oQ/tmp/x' is not a mail address" in line for line in lines), lines
    assert any("platform.governor: 'turbo-please' is not a cpufreq governor" in line for line in lines), lines
    assert len(lines) == 2

    exp.write_text(exp.read_text().replace('"-oQ/tmp/x", ', "").replace('governor = "turbo-please"', "")
                   .replace('name = "t"', 'name = "t"\npre_execution = [["/nonexistent/cool-down"]]\n'
                            'post_execution = [["no-such-command-anywhere"], ["sync"]]'))
    res = coldrun("check", str(exp))
    assert res.returncode == 1, res.stdout + res.stderr
    problems = [line for line in res.stdout.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 2
    assert "pre_execution[0]: '/nonexistent/cool-down' does not exist or is not executable" in problems[0]
    assert "post_execution[0]: 'no-such-command-anywhere' is not found on PATH" in problems[1]


@pytest.mark.skipif(os.geteuid() != 0, reason="the benchmark user's stand-in (nobody) needs root to switch to")
def test_as_the_benchmark_user_unreachable_files_fail_check_and_the_rest_load_as_nobody():
    root = Path(tempfile.mkdtemp(prefix="coldrun-check-"))   # pytest's tmp dirs are root's only (0700)
    try:
        root.chmod(0o755)
        exp = _experiment(root, "[benchmarks]\nopen = 1\nclosed = 1\n", {"open": GOOD, "closed": GOOD},
                          benchmark_user=True)
        for p in root.rglob("*"):
            p.chmod(p.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if p.is_dir() else 0))
        closed = root / "benchmarks" / "closed" / "python" / "bench.py"
        closed.chmod(0o600)
        res = coldrun("check", str(exp))
        assert res.returncode == 1, res.stdout + res.stderr
        (line,) = [line for line in res.stdout.splitlines() if line.startswith("problem: ")]
        assert f"the benchmark user cannot read {closed}" in line and "closed:py:py" in line
        assert "loaded 1 of 1 benchmark(s) in their runners as nobody" in res.stdout

        # an interpreter nobody can execute (coldrun's own, under /root): check fails, as start would
        if not os.path.realpath(sys.executable).startswith("/root/"):
            pytest.skip(f"{sys.executable} is not under /root: no unreachable interpreter to try")
        exp.write_text(exp.read_text().replace('executable = "/usr/bin/python3"', 'executable = "@python"'))
        res = coldrun("check", str(exp))
        assert res.returncode == 1 and "the benchmark user cannot execute" in res.stdout, res.stdout
    finally:
        shutil.rmtree(root)


def test_vms_without_a_load_step_are_named_not_loaded(tmp_path):
    from coldrun_helpers import make_experiment

    exp = make_experiment(tmp_path, {"a": "ok", "b": "ok"})          # the external fake runner
    res = coldrun("check", str(exp))
    assert res.returncode == 0, res.stdout + res.stderr
    assert ("loaded 0 of 0 benchmark(s) in their runners" in res.stdout
            and "; 2 key(s) of VMs with no load step (external runners, startup-time mode) not loaded: fake"
            in res.stdout), res.stdout
