"""Stand-ins for the Krun modules a ``.krun`` config imports: ``krun``, ``krun.vm_defs``, ``krun.util``,
``krun.env`` (and ``distutils.spawn``, which Krun's examples use and Python 3.12 no longer has).

They have Krun's names and constructor signatures (krun/vm_defs.py at a0c8e5b, plus the older keyword
``extra_env`` and class ``JRubyTruffleVMDef``), so a config runs unchanged, but they only record what
the config asked for: no benchmark runs, nothing is checked on disk except by the helpers a config calls
itself (``find_executable``, ``find_internal_jvmci_java_home``).  ``translate`` turns the recorded
objects into coldrun's experiment file.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import types
from typing import Any


class KrunConfigFatal(Exception):
    """The config called ``krun.util.fatal(msg)`` (or a stand-in hit one of Krun's own fatal checks)."""


def fatal(msg: str) -> None:
    raise KrunConfigFatal(str(msg))


# --- krun -------------------------------------------------------------------------------------------

class EntryPoint:
    """Krun's variant target: benchmarks/<bench>/<subdir>/<target>."""

    def __init__(self, target: str, subdir: str | None = None):
        self.target, self.subdir = target, subdir

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EntryPoint) and (self.target, self.subdir) == (other.target, other.subdir)

    def __hash__(self) -> int:
        return hash((self.target, self.subdir))

    def __repr__(self) -> str:
        return f"EntryPoint({self.target!r}, subdir={self.subdir!r})"


# --- krun.env ---------------------------------------------------------------------------------------

class EnvChange:
    def __init__(self, var: str, val: str):
        self.var, self.val = var, val

    @staticmethod
    def apply_all(changes: list["EnvChange"], env: dict[str, str]) -> None:
        for change in changes:
            change.apply(env)

    def apply(self, env: dict[str, str]) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.var!r}, {self.val!r})"


class EnvChangeSet(EnvChange):
    """Krun: set the variable; fatal when it is already set."""

    def apply(self, env: dict[str, str]) -> None:
        if env.get(self.var) is not None:
            fatal(f"Environment {self.var} is already defined")
        env[self.var] = self.val


class EnvChangeAppend(EnvChange):
    """Krun: append with os.pathsep when already set (coldrun's VM env does the same)."""

    def apply(self, env: dict[str, str]) -> None:
        cur = env.get(self.var)
        env[self.var] = self.val if cur is None else f"{cur}{os.pathsep}{self.val}"


# --- krun.vm_defs -----------------------------------------------------------------------------------

class BaseVMDef:
    """What a config gave one Krun VM definition.  ``call`` keeps the constructor call as written (for
    the TOML comment); ``vm_path``, ``extra_vm_args``, ``common_env_changes`` and ``instrument`` are
    Krun's attributes, which a config may also change after construction."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "BaseVMDef":
        obj = super().__new__(cls)
        obj.call = (cls.__name__, args, kwargs)
        return obj

    def __init__(self, iterations_runner: str | None, env: dict | None = None, instrument: bool = False,
                 extra_env: dict | None = None):
        self.iterations_runner = iterations_runner
        self.krun_runner = iterations_runner        # what Krun's class chose, to spot a config's swap
        self.common_env_changes: list[EnvChange] = []
        env = env if env is not None else extra_env      # extra_env: Krun's name for env before 2016
        if env is not None:
            if not isinstance(env, dict):
                fatal("'env' argument for VM defs should be a dict")
            for k, v in env.items():
                self.add_env_change(EnvChangeAppend(k, v))
        self.platform = None
        self.config = None
        self.dry_run = False
        self.instrument = instrument

    def add_env_change(self, change: EnvChange) -> None:
        self.common_env_changes.append(change)

    def __repr__(self) -> str:
        name, args, kwargs = self.call
        shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        return f"{name}({', '.join(shown)})"


class ExternalSuiteVMDef(BaseVMDef):
    def __init__(self, script_path: str, env: dict | None = None, extra_env: dict | None = None):
        BaseVMDef.__init__(self, None, env=env, extra_env=extra_env)
        self.script_path = script_path


class NativeCodeVMDef(BaseVMDef):
    def __init__(self, env: dict | None = None, extra_env: dict | None = None):
        BaseVMDef.__init__(self, "iterations_runner_c", env=env, extra_env=extra_env)


class GenericScriptingVMDef(BaseVMDef):
    def __init__(self, vm_path: str, iterations_runner: str, entry_point: Any = None, subdir: str | None = None,
                 env: dict | None = None, instrument: bool = False, extra_env: dict | None = None):
        self.vm_path = vm_path
        self.extra_vm_args: list[str] = []
        BaseVMDef.__init__(self, iterations_runner, env=env, instrument=instrument, extra_env=extra_env)


class JavaVMDef(BaseVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, instrument: bool = False,
                 extra_env: dict | None = None):
        self.vm_path = vm_path
        self.extra_vm_args: list[str] = []
        BaseVMDef.__init__(self, "IterationsRunner", env=env, instrument=instrument, extra_env=extra_env)


class GraalVMDef(JavaVMDef):
    def __init__(self, graal_dir: str, mx_path: str, java_home: str | None = None, env: dict | None = None,
                 extra_env: dict | None = None):
        JavaVMDef.__init__(self, mx_path, env=env, extra_env=extra_env)
        self.extra_vm_args += ["-p", graal_dir, "vm", "-XX:+UseJVMCICompiler"]
        if java_home is not None:
            self.add_env_change(EnvChangeSet("JAVA_HOME", java_home))


class PythonVMDef(GenericScriptingVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, instrument: bool = False,
                 extra_env: dict | None = None):
        GenericScriptingVMDef.__init__(self, vm_path, "iterations_runner.py", env=env, instrument=instrument,
                                       extra_env=extra_env)


class PyPyVMDef(PythonVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, instrument: bool = False,
                 extra_env: dict | None = None):
        env = env if env is not None else extra_env
        if instrument:
            env = dict(env or {})
            EnvChangeSet("PYPYLOG", "gc:-").apply(env)    # Krun: PyPy logs GC events to stderr
        PythonVMDef.__init__(self, vm_path, env=env, instrument=instrument)
        # Krun: the VM's directory goes on LD_LIBRARY_PATH (an OpenBSD rpath workaround, on every OS).
        self.add_env_change(EnvChangeAppend("LD_LIBRARY_PATH", os.path.dirname(vm_path)))


class LuaVMDef(GenericScriptingVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, extra_env: dict | None = None):
        GenericScriptingVMDef.__init__(self, vm_path, "iterations_runner.lua", env=env, extra_env=extra_env)


class PHPVMDef(GenericScriptingVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, extra_env: dict | None = None):
        GenericScriptingVMDef.__init__(self, vm_path, "iterations_runner.php", env=env, extra_env=extra_env)


class RubyVMDef(GenericScriptingVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, extra_env: dict | None = None):
        GenericScriptingVMDef.__init__(self, vm_path, "iterations_runner.rb", env=env, extra_env=extra_env)


class TruffleRubyVMDef(RubyVMDef):
    def __init__(self, truffleruby_dir: str | None = None, graal_home: str | None = None,
                 mx_dir: str | None = None, jvmci_home: str | None = None, env: dict | None = None,
                 extra_env: dict | None = None):
        if truffleruby_dir is None or mx_dir is None:
            fatal(f"{type(self).__name__} needs truffleruby_dir and mx_dir")
        RubyVMDef.__init__(self, os.path.join(truffleruby_dir, "tool", "jt.rb"), env=env, extra_env=extra_env)
        self.add_env_change(EnvChangeAppend("GRAAL_HOME", graal_home))
        self.add_env_change(EnvChangeAppend("PATH", mx_dir))
        self.extra_vm_args += ["run", "--graal"]
        if jvmci_home is not None:
            self.add_env_change(EnvChangeSet("JAVA_HOME", jvmci_home))


class JRubyTruffleVMDef(TruffleRubyVMDef):
    """TruffleRubyVMDef's name before TruffleRuby left JRuby (Krun's own test configs use it)."""

    def __init__(self, jruby_dir: str | None = None, graal_home: str | None = None, mx_dir: str | None = None,
                 jvmci_home: str | None = None, env: dict | None = None, extra_env: dict | None = None):
        TruffleRubyVMDef.__init__(self, jruby_dir, graal_home, mx_dir, jvmci_home, env=env, extra_env=extra_env)


class JavascriptVMDef(GenericScriptingVMDef):
    def __init__(self, vm_path: str, env: dict | None = None, extra_env: dict | None = None):
        GenericScriptingVMDef.__init__(self, vm_path, "iterations_runner.js", env=env, extra_env=extra_env)


class V8VMDef(JavascriptVMDef):
    """d8, with "--" before the runner's arguments."""


class SomVMDef(BaseVMDef):
    """SOM (yksom, ...): coldrun has no SOM runner; recorded so the translation can say so."""

    def __init__(self, vm_path: str, *args: Any, env: dict | None = None, **kwargs: Any):
        BaseVMDef.__init__(self, "iterations_runner.som", env=env)
        self.vm_path = vm_path
        self.extra_vm_args: list[str] = []


def find_internal_jvmci_java_home(base_dir: str) -> str:
    """Krun's helper for Graal configs: the one jdk1.8* directory under ``base_dir``."""
    try:
        matches = fnmatch.filter(os.listdir(base_dir), "jdk1.8*")
    except OSError:
        fatal("couldn't find the JVMCI internal JDK")
    if len(matches) != 1:
        fatal(f"expected one jvmci internal jdk in {base_dir}, found {len(matches)}")
    return os.path.join(base_dir, matches[0], "product")


def find_internal_jvmci_java_bin(base_dir: str) -> str:
    return os.path.join(find_internal_jvmci_java_home(base_dir), "bin", "java")


VM_DEF_CLASSES = (BaseVMDef, ExternalSuiteVMDef, NativeCodeVMDef, GenericScriptingVMDef, JavaVMDef, GraalVMDef,
                  PythonVMDef, PyPyVMDef, LuaVMDef, PHPVMDef, RubyVMDef, TruffleRubyVMDef, JRubyTruffleVMDef,
                  JavascriptVMDef, V8VMDef, SomVMDef)


# --- krun.util --------------------------------------------------------------------------------------

def run_shell_cmd(cmd: str, failure_fatal: bool = True, extra_env: dict | None = None) -> tuple[str, str, int]:
    """Krun's helper, as configs use it to ask a tool for a version or a path: (stdout, stderr, rc)."""
    env = dict(os.environ)
    if extra_env:
        for var, val in extra_env.items():
            EnvChangeSet(var, val).apply(env)
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    if failure_fatal and p.returncode != 0:
        fatal(f"Command failed: {cmd!r}: {p.stderr.strip()[-200:]}")
    return p.stdout.strip(), p.stderr.strip(), p.returncode


def run_shell_cmd_list(cmds: list[str], failure_fatal: bool = True, extra_env: dict | None = None) -> None:
    for cmd in cmds:
        run_shell_cmd(cmd, failure_fatal=failure_fatal, extra_env=extra_env)


# --- distutils.spawn --------------------------------------------------------------------------------

def find_executable(executable: str, path: str | None = None) -> str | None:
    """distutils.spawn.find_executable: a path with a directory part as is, else a search of PATH."""
    if os.path.dirname(executable):
        return executable if os.path.isfile(executable) else None
    return shutil.which(executable, mode=os.F_OK, path=path)


# --- the modules ------------------------------------------------------------------------------------

def _module(name: str, doc: str, members: dict[str, Any], package: bool = False) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__dict__.update(members)
    if package:
        m.__path__ = []     # a package: its submodules come from the stand-in finder only
    return m


def stand_in_modules() -> dict[str, types.ModuleType]:
    """Fresh module objects for one config run (a config may set attributes on them)."""
    vm_defs = {c.__name__: c for c in VM_DEF_CLASSES}
    vm_defs.update(find_internal_jvmci_java_home=find_internal_jvmci_java_home,
                   find_internal_jvmci_java_bin=find_internal_jvmci_java_bin, EntryPoint=EntryPoint,
                   BENCHMARK_USER="krun", EnvChangeAppend=EnvChangeAppend, EnvChangeSet=EnvChangeSet)
    mods = {
        "krun": _module("krun", "coldrun's stand-in for Krun's package", {
            "EntryPoint": EntryPoint, "ANSI_RED": "\033[91m", "ANSI_GREEN": "\033[92m",
            "ANSI_MAGENTA": "\033[95m", "ANSI_CYAN": "\033[36m", "ANSI_RESET": "\033[0m"}, package=True),
        "krun.vm_defs": _module("krun.vm_defs", "coldrun's stand-in for krun.vm_defs", vm_defs),
        "krun.util": _module("krun.util", "coldrun's stand-in for krun.util", {
            "fatal": fatal, "FatalKrunError": KrunConfigFatal, "run_shell_cmd": run_shell_cmd,
            "run_shell_cmd_list": run_shell_cmd_list}),
        "krun.env": _module("krun.env", "coldrun's stand-in for krun.env", {
            "EnvChange": EnvChange, "EnvChangeSet": EnvChangeSet, "EnvChangeAppend": EnvChangeAppend}),
        "distutils": _module("distutils", "coldrun's stand-in: only distutils.spawn", {}, package=True),
        "distutils.spawn": _module("distutils.spawn", "coldrun's stand-in", {"find_executable": find_executable}),
    }
    for name, mod in mods.items():       # `import krun.vm_defs` binds krun, then reads krun.vm_defs
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    return mods
