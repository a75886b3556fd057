"""`coldrun import-krun`: Krun configs in Krun's own form -> coldrun experiment files.

tests/fixtures/krun/every_setting.krun sets every setting of krun.md §2 and uses every VM definition
class; its translation is compared whole.  Bad configs end in one line each, exit 2, no traceback, and
the stand-ins never outlive an import.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.experiment.krun_import import import_krun
from supervisor.experiment.model import parse_experiment

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "krun"
POST_NOTE = ("POST_EXECUTION_CMDS[1] uses $KRUN_RESULTS_FILE, $KRUN_LOG_FILE, which coldrun does not set (its "
             "post-execution commands get COLDRUN_STATE_DIR, COLDRUN_LOG_FILE, COLDRUN_JOB_KEY, COLDRUN_JOB_STATE)")


def every_setting(tmp_path: Path) -> Path:
    config = tmp_path / "every_setting.krun"
    shutil.copy(FIXTURES / "every_setting.krun", config)
    return config


def expected_notes(d: str) -> list[str]:
    return [
        POST_NOTE,
        "custom_dmesg_whitelist removes 1 of Krun's default patterns; coldrun's own kernel log allow-list cannot "
        "be shortened",
        "VMS['Graal']: GraalVMDef's check that the JVMCI compiler is really enabled has no coldrun equivalent "
        "(coldrun check runs the VM once on a trivial benchmark)",
        "VMS['V8']: V8VMDef ran d8 (work/v8/out/native/d8); coldrun's javascript runner needs Node.js (it "
        "loads libkruntime as a Node addon): set executable to node",
        "VMS['SOM']: SomVMDef('work/yksom/yksom', ['work/SOM/Smalltalk']): coldrun has no runner for SomVMDef; "
        "this VM and its keys are left out",
        "VMS['Tuned']['warmup']: not a Krun VM setting; ignored by Krun and here",
        "VMS['Tuned']: TunedPython is the config's own subclass of PythonVMDef; translated as PythonVMDef, "
        "without what it overrides (run_exec)",
        "N_EXECUTION is not a Krun setting (Krun ignored it); did you mean N_EXECUTIONS?",
    ]


def expected_document(d: str) -> dict:
    vm = lambda runner, iterations, variant, **kw: {"runner": runner, **kw, "iterations": iterations,  # noqa: E731
                                                    "variants": [variant]}
    return {
        "name": "every_setting", "executions": 10, "order": "round-robin", "benchmarks_dir": "benchmarks",
        "heap_limit": "4GiB", "stack_limit": "16MiB", "execution_timeout": 3600,
        "skip": ["richards:*:*", "*:HHVM:*", "nbody:C:default-c"],
        "pre_execution": [{"shell": "sudo service cron stop"}, {"shell": "echo 'pre' >> /tmp/krun-hooks.log"}],
        "post_execution": [{"shell": "sudo service cron start"},
                           {"shell": "tar czf - ${KRUN_RESULTS_FILE} $KRUN_LOG_FILE | ssh bench@host 'cat > r.tgz'"}],
        "waits": {"baseline_pause": 5},
        "mail": {"to": ["bench@example.org", "ops@example.org"], "quota": 7},
        "platform": {"pinning": True, "amperf": "check", "amperf_ratio_bounds": [0.995, 1.005],
                     "amperf_nominal_hz": 2_000_000.0, "amperf_busy_fraction": 1.0,
                     "kernel_log_allow": ["^.*enp[0-9]s0: Link is (Up|Down)"]},
        "benchmarks": {"nbody": 1000, "fannkuch_redux": 200, "richards": 500},
        "variants": {
            "default-python": {"target": "bench.py", "subdir": "python"},
            "default-c": {"target": "bench.so", "subdir": "c"},
            "default-java": {"target": "KrunEntry", "subdir": "java"},
            "default-lua": {"target": "bench.lua", "subdir": "lua"},
            "default-js": {"target": "bench.js", "subdir": "javascript"},
            "default-ruby": {"target": "bench.rb", "subdir": "ruby"},
            "default-php": {"target": "bench.php", "subdir": "php"},
            "default-som": {"target": "bench.som", "subdir": "som"},
            "default-ext": {},
        },
        "vms": {
            "CPython": vm("python", 2000, "default-python", executable="/usr/bin/python2.7"),
            "PyPy": vm("pypy", 2000, "default-python", executable="work/pypy/bin/pypy",
                       env={"LD_LIBRARY_PATH": f"{d}/work/pypy/bin", "PYPY_GC_MAX": "2GB"}, instrument=True),
            "LuaJIT": vm("lua", 1000, "default-lua", executable="work/luajit/src/luajit",
                         env={"LUA_PATH": f"{d}/work/lua/?.lua:/opt/lua/?.lua"}),
            "Hotspot": vm("java", 2000, "default-java", executable="/usr/lib/jvm/java-17/bin/java",
                          args=["-Xms1G"], env={"JAVA_OPTS": "-Xss8m"}),
            "Graal": vm("java", 2000, "default-java", executable="work/mx/mx",
                        args=["-p", f"{d}/work/graal", "vm", "-XX:+UseJVMCICompiler"],
                        env={"JAVA_HOME": f"{d}/work/jvmci/jdk1.8.0/product"}),
            "C": vm("c", 2000, "default-c", env={"LD_BIND_NOW": "1"}),
            "V8": vm("javascript", 2000, "default-js", executable="work/v8/out/native/d8"),
            "Node": vm("javascript", 500, "default-js", executable="node"),
            "Ruby": vm("ruby", 2000, "default-ruby", executable="ruby"),
            "TruffleRuby": vm("ruby", 2000, "default-ruby", executable="work/truffleruby/tool/jt.rb",
                              args=["run", "--graal"],
                              env={"GRAAL_HOME": f"{d}/work/graal", "PATH": f"{d}/work/mx",
                                   "JAVA_HOME": f"{d}/work/jvmci"}),
            "HHVM": vm("php", 2000, "default-php", executable="work/hhvm/hphp/hhvm/php"),
            "Ext": vm("krun-external", 50, "default-ext", executable="./ext_script.py"),
            "Tuned": vm("python", 10, "default-python", executable="python3"),
        },
    }


def test_every_setting_and_every_vm_class_is_translated(tmp_path):
    config = every_setting(tmp_path)
    tr = import_krun(config, tmp_path / "every_setting.toml")
    # Paths of the config's directory: relative to the experiment file (executables) or ${EXPERIMENT_DIR}.
    assert tomllib.loads(tr.text) == expected_document("${EXPERIMENT_DIR}")
    assert tr.notes == expected_notes("${EXPERIMENT_DIR}")
    assert (tr.vms, tr.keys) == (13, 39)
    exp = parse_experiment(tr.text.encode(), "every_setting.toml")     # a valid coldrun experiment
    assert exp.platform.amperf_nominal_hz == 2e6 and exp.heap_limit == 4 << 30 and exp.stack_limit == 16 << 20
    assert exp.variants["default-ext"].target is None


def test_each_note_is_in_the_output_and_in_a_comment(tmp_path, capsys):
    config = every_setting(tmp_path)
    out = tmp_path / "exp.toml"
    assert main(["import-krun", str(config), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    comments = [line for line in out.read_text().splitlines() if line.startswith("#")]
    notes = expected_notes("${EXPERIMENT_DIR}")
    for note in notes:
        assert f"  - {note}" in printed.splitlines()
        assert f"# - {note}" in comments
    assert printed.splitlines()[0] == f"wrote {out}: 13 VMs, 39 keys (bench:vm:variant)"
    assert printed.splitlines()[-1] == f"next: coldrun check {out}"


def test_every_value_names_its_krun_setting_in_a_comment(tmp_path):
    text = import_krun(every_setting(tmp_path), tmp_path / "e.toml").text
    lines = text.splitlines()
    for key, setting in [("executions", "N_EXECUTIONS"), ("heap_limit", "HEAP_LIMIT = 4194304"),
                         ("stack_limit", "STACK_LIMIT = 16384"), ("execution_timeout", "EXECUTION_TIMEOUT"),
                         ("skip", "SKIP"), ("pre_execution", "PRE_EXECUTION_CMDS"),
                         ("post_execution", "POST_EXECUTION_CMDS"), ("baseline_pause", "TEMP_READ_PAUSE"),
                         ("to", "MAIL_TO"), ("quota", "MAX_MAILS"), ("pinning", "ENABLE_PINNING"),
                         ("amperf_ratio_bounds", "AMPERF_RATIO_BOUNDS"), ("amperf_nominal_hz", "AMPERF_BUSY_THRESHOLD"),
                         ("kernel_log_allow", "custom_dmesg_whitelist")]:
        line = next(ln for ln in lines if ln.startswith(f"{key} = "))
        assert f"# {setting}" in line, line
    assert "# VMS['PyPy']: PyPyVMDef('work/pypy/bin/pypy', instrument=True)" in lines
    assert "# VARIANTS['default-java'] = EntryPoint('KrunEntry', subdir='java')" in lines


MINIMAL = """\
from krun.vm_defs import PythonVMDef
from krun import EntryPoint
HEAP_LIMIT = 2097152
STACK_LIMIT = 8192
VARIANTS = {"default-python": EntryPoint("bench.py", subdir="python")}
VMS = {"CPython": {"vm_def": PythonVMDef("python3"), "variants": ["default-python"], "n_iterations": 5}}
BENCHMARKS = {"nbody": 10}
"""


def test_krun_defaults_where_the_config_is_silent(tmp_path):
    (tmp_path / "m.krun").write_text(MINIMAL)
    tr = import_krun(tmp_path / "m.krun", tmp_path / "m.toml")
    doc = tomllib.loads(tr.text)
    assert doc["executions"] == 1 and "mail" not in doc and "waits" not in doc and "skip" not in doc
    # Krun checked A/MPERF only when told to; pinning was off by default.
    assert doc["platform"] == {"pinning": False, "amperf": "ignore"}
    assert tr.notes == [] and "Not carried over" not in tr.text


def bad(tmp_path, source: str, capsys, name: str = "bad.krun") -> str:
    """Import ``source``: exit 2, one line per problem on stderr, no traceback, no file written."""
    config = tmp_path / name
    config.write_text(textwrap.dedent(source))
    out = tmp_path / "out.toml"
    code = main(["import-krun", str(config), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("source, line", [
    ("import os\n\nx = `os`\n", "bad.krun:3: syntax error: invalid syntax; the config is run as Python 3"),
    ("HEAP_LIMIT = 1\nx = 1 / 0\n", "bad.krun:2: running the config raised ZeroDivisionError: division by zero"),
    ('from krun.util import fatal\nfatal("Java binary not found in path")\n',
     "bad.krun:2: the config called fatal(): Java binary not found in path"),
    ("import sys\nsys.exit(1)\n", "bad.krun: the config called sys.exit(1) while being imported"),
    ("from krun.scheduler import ExecutionScheduler\n",
     "bad.krun:1: running the config raised ImportError: coldrun stands in for krun, krun.vm_defs, krun.util, "
     "krun.env and krun.platform's classes only; krun.scheduler is Krun's own machinery, which has no coldrun "
     "equivalent"),
    ("for k, v in {}.iteritems():\n    pass\n",
     "bad.krun:1: running the config raised AttributeError: 'dict' object has no attribute 'iteritems' (Python 2 "
     "only; use .items(), .keys(), .values() or `in`)"),
    ("import no_such_module_here\n", "bad.krun:1: running the config raised ModuleNotFoundError: No module named "
                                      "'no_such_module_here' (the config imports it; install it"),
])
def test_a_config_that_cannot_run_is_one_line_with_file_and_line(tmp_path, capsys, source, line):
    err = bad(tmp_path, source, capsys)
    assert err.count("\n") == 1
    assert err.startswith(f"coldrun: {tmp_path}/{line}")


def test_missing_benchmarks_and_other_required_settings(tmp_path, capsys):
    err = bad(tmp_path, MINIMAL.replace('BENCHMARKS = {"nbody": 10}\n', ""), capsys)
    assert err == f"coldrun: {tmp_path}/bad.krun: BENCHMARKS is not defined; Krun requires it\n"
    err = bad(tmp_path, "x = 1\n", capsys)
    assert err.splitlines() == [f"coldrun: {tmp_path}/bad.krun: {n} is not defined; Krun requires it{kib}"
                                for n, kib in [("VMS", ""), ("VARIANTS", ""), ("BENCHMARKS", ""),
                                               ("HEAP_LIMIT", " (in KiB)"), ("STACK_LIMIT", " (in KiB)")]]


@pytest.mark.parametrize("change, line", [
    ("AMPERF_RATIO_BOUNDS = (0.9, 1.1)\n", "AMPERF_RATIO_BOUNDS and AMPERF_BUSY_THRESHOLD must either both be set"),
    ("MAIL_TO = 'me@example.org'\n", "MAIL_TO is 'me@example.org'; Krun requires a list of addresses"),
    ("SKIP = ['nbody:CPython']\n", "SKIP entry 'nbody:CPython' is not \"bench:vm:variant\""),
    ("BENCHMARKS = {'nbody': '10'}\n", "BENCHMARKS['nbody'] is '10'; run_iter takes an integer param"),
    ("VMS['my vm'] = VMS['CPython']\n", "VMS name 'my vm': coldrun names use only letters"),
    ("VMS['X'] = {'vm_def': 'python3', 'variants': [], 'n_iterations': 1}\n",
     "VMS['X']['vm_def'] is 'python3', not a Krun VM definition"),
    ("HEAP_LIMIT = 1024\n", "HEAP_LIMIT -> heap_limit: 1MiB is too small: at least 64MiB"),
    ("EXECUTION_TIMEOUT = 0.5\n", "EXECUTION_TIMEOUT -> execution_timeout: 0.5s is too short"),
    ("VMS['CPython']['n_iterations'] = 10 ** 6\n", "VMS -> vms.CPython.iterations: more than 100,000"),
    ("PRE_EXECUTION_CMDS = 'sync'\n", "PRE_EXECUTION_CMDS is 'sync', not a list of shell command strings"),
    ("VMS['CPython']['vm_def'] = PythonVMDef(None)\n", "VMS['CPython']: PythonVMDef(None) names no VM path"),
])
def test_a_value_coldrun_cannot_take_names_the_krun_setting(tmp_path, capsys, change, line):
    err = bad(tmp_path, MINIMAL + change, capsys)
    assert err.count("\n") == 1 and err.startswith(f"coldrun: {tmp_path}/bad.krun: {line}"), err


def test_a_config_whose_every_vm_has_no_equivalent_is_refused(tmp_path, capsys):
    source = MINIMAL.replace("PythonVMDef", "SomVMDef").replace('"python3"', '"yksom"')
    err = bad(tmp_path, source, capsys)
    assert err.endswith("no VM of VMS has a coldrun equivalent, so there is nothing to run\n")


def test_missing_config_and_existing_output(tmp_path, capsys):
    assert main(["import-krun", str(tmp_path / "none.krun")]) == 2
    assert capsys.readouterr().err == f"coldrun: {tmp_path}/none.krun: Krun config not found\n"
    (tmp_path / "m.krun").write_text(MINIMAL)
    (tmp_path / "m.toml").write_text("keep me")
    assert main(["import-krun", str(tmp_path / "m.krun")]) == 2     # default output: beside the config
    assert "already exists; give another -o or --force" in capsys.readouterr().err
    assert (tmp_path / "m.toml").read_text() == "keep me"
    assert main(["import-krun", str(tmp_path / "m.krun"), "--force"]) == 0
    assert tomllib.loads((tmp_path / "m.toml").read_text())["vms"]["CPython"]["executable"] == "python3"


def test_the_config_runs_in_its_directory_and_its_own_modules_see_the_stand_ins(tmp_path):
    (tmp_path / "shared.py").write_text("from krun.vm_defs import LuaVMDef\nLUA = LuaVMDef('luajit')\n")
    (tmp_path / "m.krun").write_text(MINIMAL.replace(
        "BENCHMARKS", "import os, sys\nsys.path.insert(0, os.getcwd())\nfrom shared import LUA\n"
        "VMS['Lua'] = {'vm_def': LUA, 'variants': ['default-python'], 'n_iterations': 3}\n"
        "assert os.getcwd() == %r\nfor i in xrange(2): pass\nBENCHMARKS" % str(tmp_path.resolve())))
    doc = tomllib.loads(import_krun(tmp_path / "m.krun", tmp_path / "m.toml").text)
    assert doc["vms"]["Lua"] == {"runner": "lua", "executable": "luajit", "iterations": 3,
                                 "variants": ["default-python"]}
    sys.modules.pop("shared", None)


@pytest.mark.parametrize("source", [MINIMAL, "import krun.vm_defs\nraise ValueError('late')\n",
                                    'print "py2"\n', "x = `1`\n"])
def test_the_stand_ins_do_not_outlive_the_import(tmp_path, source):
    import types
    real = types.ModuleType("krun")          # e.g. a real Krun somewhere on sys.path
    sys.modules["krun"] = real
    cwd, meta_path = os.getcwd(), list(sys.meta_path)
    before = {n for n in sys.modules if n.startswith(("krun", "distutils"))}
    (tmp_path / "c.krun").write_text(source)
    try:
        import_krun(tmp_path / "c.krun", tmp_path / "c.toml")
    except ColdrunError:
        pass
    try:
        assert sys.modules["krun"] is real
        assert {n for n in sys.modules if n.startswith(("krun", "distutils"))} == before
        assert sys.meta_path == meta_path and os.getcwd() == cwd
    finally:
        del sys.modules["krun"]


def test_skip_parts_other_than_a_star_stay_literal(tmp_path):
    (tmp_path / "m.krun").write_text(MINIMAL + "SKIP = ['nbody:Other:*', 'n?body:*:default-[py]thon']\n")
    doc = tomllib.loads(import_krun(tmp_path / "m.krun", tmp_path / "m.toml").text)
    assert doc["skip"] == ["nbody:Other:*", "n[?]body:*:default-[[]py]thon"]


def test_external_suite_variants_need_no_target_but_others_do(tmp_path):
    base = MINIMAL.replace('EntryPoint("bench.py", subdir="python")', "None")
    (tmp_path / "m.krun").write_text(base)
    with pytest.raises(ColdrunError) as e:
        import_krun(tmp_path / "m.krun", tmp_path / "m.toml")
    assert str(e.value) == (f"{tmp_path}/m.krun: VARIANTS -> variants.default-python.target: required: vms.CPython "
                            f"(runner 'python') runs a benchmark file; only runner 'krun-external' takes a variant "
                            f"without one")
    (tmp_path / "m.krun").write_text(base.replace('PythonVMDef("python3")', 'ExternalSuiteVMDef("ext.py")')
                                     .replace("import PythonVMDef", "import ExternalSuiteVMDef"))
    doc = tomllib.loads(import_krun(tmp_path / "m.krun", tmp_path / "m.toml").text)
    assert doc["vms"]["CPython"]["runner"] == "krun-external" and doc["variants"] == {"default-python": {}}


def test_a_subclass_that_skips_krun_s_constructor_still_translates(tmp_path):
    (tmp_path / "m.krun").write_text(MINIMAL.replace("BENCHMARKS", textwrap.dedent("""\
        class Bare(PythonVMDef):
            def __init__(self, path):
                self.vm_path = path
                self.extra_vm_args = "-O"
        VMS["Bare"] = {"vm_def": Bare("python3"), "variants": ["default-python"], "n_iterations": 2}
        BENCHMARKS""")))
    with pytest.raises(ColdrunError) as e:
        import_krun(tmp_path / "m.krun", tmp_path / "m.toml")
    assert str(e.value) == f"{tmp_path}/m.krun: VMS['Bare']: extra_vm_args '-O' must be a list of strings"
    source = (tmp_path / "m.krun").read_text().replace('"-O"', '["-O"]')
    (tmp_path / "m.krun").write_text(source)
    tr = import_krun(tmp_path / "m.krun", tmp_path / "m.toml")
    assert tomllib.loads(tr.text)["vms"]["Bare"] == {"runner": "python", "executable": "python3", "args": ["-O"],
                                                     "iterations": 2, "variants": ["default-python"]}
    assert tr.notes == ["VMS['Bare']: Bare is the config's own subclass of PythonVMDef; translated as "
                        "PythonVMDef, without what it overrides (__init__)"]
