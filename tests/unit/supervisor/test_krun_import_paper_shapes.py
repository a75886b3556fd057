"""`coldrun import-krun` on the shapes of the paper's own configs, on a machine that has none of what they name.

tests/fixtures/krun/paper_shapes/ reproduces, in files written for these tests, what softdevteam/
warmup_experiment's warmup.krun, startup.krun and idle.krun and Krun's example_all_skip.krun do: values
keyed by host name, a JVMCI JDK and executables looked up on the machine, paths built from os.getcwd(),
sys.platform branches, Python 2 (tabs, print), Krun's platform patched for start-up, every key skipped.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.experiment.krun_import import import_krun
from supervisor.experiment.krun_import.python2 import as_python3
from supervisor.experiment.model import keys_in_order, parse_experiment
from supervisor.launch.runner_command import file_problems

SHAPES = Path(__file__).resolve().parents[2] / "fixtures" / "krun" / "paper_shapes"


@pytest.fixture
def experiment_dir(tmp_path: Path) -> Path:
    d = tmp_path / "warmup_experiment"
    shutil.copytree(SHAPES, d)
    return d


def entry_line(text: str, key: str, table: str = "") -> str:
    """The line of ``key`` (in ``[table]`` when given), comment included."""
    lines = text.splitlines()
    start = lines.index(f"[{table}]") + 1 if table else 0
    return next(ln for ln in lines[start:] if ln.startswith(f"{key} = "))


def test_a_host_keyed_config_names_the_fix_and_the_hosts_without_hostname(experiment_dir):
    # Before: KeyError: 'vm' and nothing else.
    with pytest.raises(ColdrunError) as e:
        import_krun(experiment_dir / "warmup.krun", experiment_dir / "warmup.toml", hostname="elsewhere")
    assert "raised KeyError: 'elsewhere' (the config looks up its host name, 'elsewhere', given by --hostname; " \
           "give --hostname NAME with the benchmark machine's name; BUSY_THRESHOLDS has benchA, benchB)" in str(e.value)


def test_warmup_imports_as_the_named_host_with_placeholders_and_host_values_marked(experiment_dir):
    tr = import_krun(experiment_dir / "warmup.krun", experiment_dir / "warmup.toml", hostname="benchA")
    doc = tomllib.loads(tr.text)
    assert doc["platform"]["amperf_nominal_hz"] == 3.6e6
    assert "host-dependent: BUSY_THRESHOLDS['benchA'] (it also has benchB)" in \
        entry_line(tr.text, "amperf_nominal_hz", "platform")
    assert "host-dependent: names the host 'benchA'" in entry_line(tr.text, "post_execution")
    assert "evaluated as 'benchA' (--hostname)" in tr.text
    # Look-ups this machine cannot answer are placeholders, listed and marked "set this".
    graal, lua = doc["vms"]["Graal"], doc["vms"]["LuaJIT"]
    assert graal["env"]["JAVA_HOME"] == "/SET-ME/jvmci-java-home"
    assert lua["executable"] == "/SET-ME/luajit-of-the-paper"
    assert tr.set_here == ["/SET-ME/luajit-of-the-paper: find_executable('luajit-of-the-paper') found nothing on "
                           "this machine",
                           "/SET-ME/jvmci-java-home: find_internal_jvmci_java_home('work/graal-jvmci-8/') found "
                           "nothing on this machine"]
    assert "SET THIS on the benchmark machine: /SET-ME/luajit-of-the-paper stands for " \
           "find_executable('luajit-of-the-paper')" in entry_line(tr.text, "executable", "vms.LuaJIT")
    for line in tr.set_here:
        assert f"# {line}" in tr.text.splitlines()
    # check refuses a VM that still names a placeholder, an env value included (a path check would not see it).
    exp = parse_experiment(tr.text.encode(), "warmup.toml")
    problems, _ = file_problems(exp, experiment_dir, "warmup.toml", keys_in_order(exp))
    assert "warmup.toml: vms.Graal.env.JAVA_HOME: /SET-ME/jvmci-java-home is a placeholder `coldrun import-krun` " \
           "left for what it could not look up on the importing machine; set it to the value on this machine (the " \
           "file's header says what it stands for)" in problems
    assert any(p.startswith("warmup.toml: vms.LuaJIT.executable: /SET-ME/luajit-of-the-paper is a placeholder")
               for p in problems)
    # Relative or os.getcwd()-based paths move with the experiment file.
    assert doc["vms"]["PyPy"]["executable"] == "work/pypy/pypy-c"
    assert doc["vms"]["HotSpot"]["executable"] == "work/openjdk/linux-image/bin/java"
    assert doc["vms"]["C"]["env"] == {"LD_LIBRARY_PATH": "${EXPERIMENT_DIR}/work/gcc-inst/lib64"}
    assert doc["vms"]["Graal"]["args"] == ["-p", "${EXPERIMENT_DIR}/work/graal", "vm", "-XX:+UseJVMCICompiler"]
    assert str(experiment_dir) not in "\n".join(ln for ln in tr.text.splitlines() if not ln.startswith("#"))
    assert "not on this machine: build it here" in entry_line(tr.text, "executable", "vms.PyPy")
    # The order differs from Krun's, and the file says how.
    assert "Krun (Python 2.7) took VMS and BENCHMARKS in its dicts' hash order" in tr.text
    assert "VMs C, PyPy, HotSpot, LuaJIT, Graal; benchmarks binarytrees, nbody" in tr.text
    assert "Krun's order" not in entry_line(tr.text, "order")
    assert "the config tests the OS (sys.platform ...); it was evaluated as 'linux'" in tr.text
    parse_experiment(tr.text.encode(), "warmup.toml")


def test_the_same_config_moved_elsewhere_gives_the_same_file(experiment_dir, tmp_path):
    # Before: absolute paths of where the import ran.
    first = import_krun(experiment_dir / "warmup.krun", experiment_dir / "warmup.toml", hostname="benchB").text
    moved = shutil.copytree(experiment_dir, tmp_path / "elsewhere" / "deeper")
    second = import_krun(moved / "warmup.krun", moved / "warmup.toml", hostname="benchB").text
    body = lambda t: [ln for ln in t.splitlines() if not ln.startswith("#")]  # noqa: E731
    assert body(first) == body(second)
    assert tomllib.loads(first)["platform"]["amperf_nominal_hz"] == 3.5e6


def test_startup_config_in_python_2_becomes_startup_mode(experiment_dir, capsys):
    # Before: "inconsistent use of tabs and spaces"; with tabs expanded, krun.platform refused.
    out = experiment_dir / "startup.toml"
    assert main(["import-krun", str(experiment_dir / "startup.krun"), "-o", str(out), "--hostname", "benchA"]) == 0
    printed = capsys.readouterr().out
    assert "patched DebianLinuxPlatform" in printed          # the config's own print statement ran
    assert "read as Python 2 (also listed at the top of the file):" in printed.splitlines()
    text = out.read_text()
    doc = tomllib.loads(text)
    assert set(doc["vms"]) == {"C", "PyPy", "HotSpot", "LuaJIT", "Graal"}
    for name, vm in doc["vms"].items():
        assert (vm["mode"], vm["iterations"]) == ("startup", 1), name
    assert "CLASSPATH" not in doc["vms"]["HotSpot"].get("env", {})     # the paper's start-up runners' dir
    assert "n_iterations = 2000, which the start-up runners ignored" in entry_line(text, "iterations", "vms.C")
    assert "the config patched Krun's platform (DebianLinuxPlatform.bench_cmdline_adjust)" in text
    assert doc["executions"] == 200 and doc["benchmarks"] == {"binarytrees": 18}
    assert doc["platform"]["amperf"] == "ignore"        # startup.krun deletes the A/MPERF settings
    python2 = [ln for ln in text.splitlines() if "Python 2" in ln and ln.startswith("# - ")]
    assert any("startup.krun: lines 31: indentation mixing tabs and spaces, read with Python 2's tab stops" in ln
               for ln in python2), python2
    assert any("startup.krun:35: Python 2 print statement read as print(...)" in ln for ln in python2), python2
    parse_experiment(text.encode(), str(out))


def test_idle_imports_with_only_the_placeholders_it_uses(experiment_dir):
    tr = import_krun(experiment_dir / "idle.krun", experiment_dir / "idle.toml", hostname="benchA")
    doc = tomllib.loads(tr.text)
    assert list(doc["vms"]) == ["C"] and doc["vms"]["C"]["iterations"] == 1 and doc["benchmarks"] == {"idle": 10}
    assert tr.set_here == [] and "SET ON THE BENCHMARK MACHINE" not in tr.text


def test_an_all_skipped_config_converts_with_a_warning(experiment_dir, capsys):
    # Before: refused ("every bench:vm:variant key is skipped").
    out = experiment_dir / "all_skip.toml"
    assert main(["import-krun", str(experiment_dir / "all_skip.krun"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("coldrun: warning: SKIP skips every key, so Krun ran nothing")
    text = out.read_text()
    assert any(ln.startswith('# skip = ["*:CPython:*", "*:Java:*"]') for ln in text.splitlines())
    assert "skip" not in tomllib.loads(text)
    parse_experiment(text.encode(), str(out))


def test_the_hostname_stand_in_does_not_outlive_the_import(experiment_dir):
    import os
    import platform
    import socket
    before = (platform.node(), socket.gethostname(), os.uname().nodename)
    import_krun(experiment_dir / "warmup.krun", experiment_dir / "warmup.toml", hostname="benchA")
    assert (platform.node(), socket.gethostname(), os.uname().nodename) == before


@pytest.mark.parametrize("source, text, note", [
    ('print "a", b\n', 'print("a", b)\n', "f:1: Python 2 print statement read as print(...)"),
    ('print "x#y", 2,  # c\n', 'print("x#y", 2, end=" ")  # c\n', "f:1: Python 2 print statement read as print(...)"),
    ("try:\n    pass\nexcept (OSError, IOError), e:\n    pass\n",
     "try:\n    pass\nexcept (OSError, IOError) as e:\n    pass\n",
     "f:3: Python 2 `except (OSError, IOError), e:` read as `except (OSError, IOError) as e:`"),
    ("os.chmod(p, 0755)\n", "os.chmod(p, 0o755)\n", "f:1: Python 2 octal literal 0NNN read as 0oNNN"),
    ('exec "x = 1" in ns\n', 'exec("x = 1", ns)\n', "f:1: Python 2 exec statement read as exec(...)"),
    ("if x:\n        a = 1\n\tb = 2\n", "if x:\n        a = 1\n        b = 2\n",
     "f: lines 3: indentation mixing tabs and spaces, read with Python 2's tab stops (every 8 columns)"),
])
def test_python_2_forms_are_read_as_python_2_did(source, text, note):
    assert as_python3(source, "f") == (text, [note])


def test_python_3_is_never_rewritten_and_other_errors_stay():
    src = 'print("x")\ns = "print x"\n'
    assert as_python3(src, "f") == (src, [])
    with pytest.raises(SyntaxError):
        as_python3("x = `1`\n", "f")
