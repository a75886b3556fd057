"""Stand-ins for the Krun modules a ``.krun`` config imports: ``krun``, ``krun.vm_defs``, ``krun.util``,
``krun.env``, ``krun.platform`` (and ``distutils.spawn``, which Krun's examples use and Python 3.12 no
longer has).

They have Krun's names and constructor signatures (krun/vm_defs.py at a0c8e5b, plus the older keyword
``extra_env`` and class ``JRubyTruffleVMDef``), so a config runs unchanged, but they only record what
the config asked for: no benchmark runs.  The helpers that look the machine up (``find_executable``,
``find_internal_jvmci_java_home``) answer from this machine when it has what they look for, else with a
*placeholder* path (``/SET-ME/...``) rather than Krun's None or fatal(): the import runs where the
benchmark machine's interpreters and JDKs may not be, and ``Lookups`` keeps every answer so the
experiment file can say which values to set or check there.  ``krun.platform`` has the platform classes
a config may patch (warmup_experiment's startup.krun replaces ``bench_cmdline_adjust`` to measure
start-up); ``Lookups.patched`` says what was replaced.  ``translate`` turns the recorded objects into
coldrun's experiment file.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from supervisor.experiment.model import PLACEHOLDER_DIR



class KrunConfigFatal(Exception):
    """The config called ``krun.util.fatal(msg)`` (or a stand-in hit one of Krun's own fatal checks)."""


def fatal(msg: str) -> NoReturn:
    raise KrunConfigFatal(str(msg))


@dataclass
class Lookup:
    call: str          # the helper call as the config made it, e.g. "find_executable('pypy')"
    answer: str        # this machine's answer, or a placeholder
    placeholder: bool  # True: this machine has no answer; set the value on the benchmark machine


@dataclass
class Lookups:
    """What one config run asked of the machine, and what the config patched of Krun's platform."""
    answers: list[Lookup] = field(default_factory=list)
    # krun.platform's methods the config replaced ("LinuxPlatform.bench_cmdline_adjust", ...), read after the run
    patches: Callable[[], list[str]] = lambda: []

    @property
    def placeholders(self) -> list[Lookup]:
        return [a for a in self.answers if a.placeholder]

    def found(self, call: str, answer: str) -> str:
        self.answers.append(Lookup(call, answer, False))
        return answer

    def placeholder(self, call: str, name: str) -> str:
        used = {a.answer for a in self.answers}
        path, n = f"{PLACEHOLDER_DIR}/{name}", 2
        while path in used:
            path, n = f"{PLACEHOLDER_DIR}/{name}-{n}", n + 1
        self.answers.append(Lookup(call, path, True))
        return path


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
    # val: what the config gave, unchecked as Krun does (TruffleRubyVMDef passes its graal_home, None or not)
    def __init__(self, var: str, val: Any):
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

    call: tuple[str, tuple[Any, ...], dict[str, Any]]

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


def jvmci_helpers(lookups: Lookups) -> tuple[Any, Any]:
    """Krun's helpers for Graal configs: the one jdk1.8* directory under ``base_dir`` (its product/), or a
    placeholder when this machine has none."""
    def find_internal_jvmci_java_home(base_dir: str) -> str:
        call = f"find_internal_jvmci_java_home({base_dir!r})"
        try:
            matches = fnmatch.filter(os.listdir(base_dir), "jdk1.8*")
        except OSError:
            matches = []
        if len(matches) != 1:
            return lookups.placeholder(call, "jvmci-java-home")
        return lookups.found(call, os.path.join(base_dir, matches[0], "product"))

    def find_internal_jvmci_java_bin(base_dir: str) -> str:
        return os.path.join(find_internal_jvmci_java_home(base_dir), "bin", "java")
    return find_internal_jvmci_java_home, find_internal_jvmci_java_bin


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

def executable_finder(lookups: Lookups) -> Any:
    def find_executable(executable: str, path: str | None = None) -> str | None:
        """distutils.spawn.find_executable: a path with a directory part as is, else a search of PATH; a
        placeholder where this machine has no such program."""
        call = f"find_executable({executable!r})"
        if os.path.dirname(executable):
            found = executable if os.path.isfile(executable) else None
        else:
            found = shutil.which(executable, mode=os.F_OK, path=path)
        if found is None:
            return lookups.placeholder(call, os.path.basename(executable) or "executable")
        return lookups.found(call, found)
    return find_executable


# --- krun.platform ----------------------------------------------------------------------------------

PLATFORM_METHODS = ("bench_cmdline_adjust",)


def platform_module(lookups: Lookups) -> dict[str, Any]:
    """Krun's platform classes, fresh for each run (a config patches them), and detect_platform."""
    class BasePlatform:
        def __init__(self, mailer: Any = None, config: Any = None):
            self.mailer, self.config = mailer, config

        def bench_cmdline_adjust(self, args: list[str], env_dct: dict) -> list[str]:
            """Krun prepended pinning and libkruntime's path here; coldrun's launch does its own."""
            return list(args)

    class UnixLikePlatform(BasePlatform):
        pass

    class LinuxPlatform(UnixLikePlatform):
        pass

    class DebianLinuxPlatform(LinuxPlatform):
        pass

    class OpenBSDPlatform(UnixLikePlatform):
        pass

    classes = (BasePlatform, UnixLikePlatform, LinuxPlatform, DebianLinuxPlatform, OpenBSDPlatform)
    originals = {(cls, m): cls.__dict__.get(m) for cls in classes for m in PLATFORM_METHODS}

    def detect_platform(mailer: Any = None, config: Any = None) -> BasePlatform:
        return (OpenBSDPlatform if sys.platform.startswith("openbsd") else DebianLinuxPlatform)(mailer, config)

    def patched() -> list[str]:
        return [f"{cls.__name__}.{m}" for (cls, m), orig in originals.items() if cls.__dict__.get(m) is not orig]

    lookups.patches = patched
    return {c.__name__: c for c in classes} | {"detect_platform": detect_platform}


# --- the modules ------------------------------------------------------------------------------------

def _module(name: str, doc: str, members: dict[str, Any], package: bool = False) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__dict__.update(members)
    if package:
        m.__path__ = []     # a package: its submodules come from the stand-in finder only
    return m


def stand_in_modules(lookups: Lookups) -> dict[str, types.ModuleType]:
    """Fresh module objects for one config run (a config may set attributes on them); what its look-ups
    answered goes to ``lookups``."""
    jvmci_home, jvmci_bin = jvmci_helpers(lookups)
    vm_defs: dict[str, Any] = {c.__name__: c for c in VM_DEF_CLASSES}
    vm_defs.update(find_internal_jvmci_java_home=jvmci_home, find_internal_jvmci_java_bin=jvmci_bin,
                   EntryPoint=EntryPoint, BENCHMARK_USER="krun", EnvChangeAppend=EnvChangeAppend,
                   EnvChangeSet=EnvChangeSet)
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
        "krun.platform": _module("krun.platform", "coldrun's stand-in for krun.platform's classes",
                                 platform_module(lookups)),
        "distutils": _module("distutils", "coldrun's stand-in: only distutils.spawn", {}, package=True),
        "distutils.spawn": _module("distutils.spawn", "coldrun's stand-in",
                                   {"find_executable": executable_finder(lookups)}),
    }
    for name, mod in mods.items():       # `import krun.vm_defs` binds krun, then reads krun.vm_defs
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    return mods
