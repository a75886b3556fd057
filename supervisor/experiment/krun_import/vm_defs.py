"""One Krun VM definition (a recorded stand-in) -> one coldrun ``[vms.NAME]`` table.

Each Krun class maps to the coldrun runner that runs the same language the
same way (Krun's argv order and benchmark layout are coldrun's too); what a
class did that coldrun does not is a note, never dropped silently.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.experiment.krun_import import stand_ins as k
from supervisor.experiment.model import EXPERIMENT_DIR_VAR, PLACEHOLDER_DIR

# Krun class -> coldrun runner; the first class in a VM definition's MRO found here decides.
RUNNER_OF_CLASS: dict[type, str] = {
    k.ExternalSuiteVMDef: "krun-external",
    k.NativeCodeVMDef: "c",
    k.GraalVMDef: "java",
    k.JavaVMDef: "java",
    k.PyPyVMDef: "pypy",
    k.PythonVMDef: "python",
    k.LuaVMDef: "lua",
    k.PHPVMDef: "php",
    k.JRubyTruffleVMDef: "ruby",
    k.TruffleRubyVMDef: "ruby",
    k.RubyVMDef: "ruby",
    k.V8VMDef: "javascript",
    k.JavascriptVMDef: "javascript",
}
# A bare GenericScriptingVMDef: the runner file it was given says the language.
RUNNER_OF_SCRIPT = {"iterations_runner.py": "python", "iterations_runner.lua": "lua",
                    "iterations_runner.php": "php", "iterations_runner.rb": "ruby",
                    "iterations_runner.js": "javascript"}
INSTRUMENTABLE = ("pypy", "java")
# Attributes the stand-ins set themselves; anything else a config set on a VM definition is a note.
KNOWN_ATTRIBUTES = frozenset({"call", "iterations_runner", "common_env_changes", "platform", "config", "dry_run",
                              "instrument", "vm_path", "extra_vm_args", "script_path", "krun_runner"})
# What Krun set in the environment that coldrun's runner sets its own way.
RUNNER_OWNED_ENV = {"pypy": {"PYPYLOG"}}


@dataclass
class VmTranslation:
    runner: str | None                        # None: coldrun has no equivalent
    fields: dict[str, Any] = field(default_factory=dict)   # executable, args, env, instrument
    notes: list[str] = field(default_factory=list)         # not carried over
    remarks: list[str] = field(default_factory=list)       # carried over differently (comments only)
    startup_runner: str = ""                                # the config's start-up runner: mode = "startup"


def _krun_class(vm_def: k.BaseVMDef) -> type:
    """The Krun class a (possibly user-defined) VM definition class derives from."""
    for cls in type(vm_def).__mro__:
        if cls in k.VM_DEF_CLASSES:
            return cls
    raise TypeError(type(vm_def).__name__)     # unreachable: every stand-in derives from BaseVMDef


def _overrides(vm_def: k.BaseVMDef, base: type) -> list[str]:
    names = []
    for cls in type(vm_def).__mro__:
        if cls is base:
            break
        names += [n for n, v in vars(cls).items() if callable(v) and (n == "__init__" or not n.startswith("__"))]
    return sorted(set(names))


@dataclass(frozen=True)
class Paths:
    """Where paths of the config go in the experiment file.  Krun ran VMs in the experiment dir (the
    config's), coldrun in a home of their own: a path relative to the config's directory, or an absolute
    one inside it (``os.getcwd()``-based, as the paper's configs write them), is written relative to the
    experiment file, so the two move together; other absolute paths stay as they are."""
    config_dir: Path
    out_dir: Path

    def _relative(self, p: str) -> str | None:
        """``p`` relative to the experiment file's directory, if it is the config directory's."""
        if PLACEHOLDER_DIR in p or p.startswith("-") or "=" in p or " " in p or not p:
            return None
        if os.path.isabs(p):
            if os.path.commonpath([p, str(self.config_dir)]) != str(self.config_dir):
                return None
            full = p
        elif os.sep in p:
            full = os.path.join(self.config_dir, p)
        else:
            return None
        rel = os.path.relpath(os.path.normpath(full), self.out_dir)
        return None if rel.startswith(f"..{os.sep}..") else rel      # no long climbs

    def executable(self, p: Any) -> str:
        """coldrun resolves an executable with a directory part against the experiment file's directory."""
        p = str(p)
        rel = self._relative(p)
        if rel is None:
            return os.path.normpath(p) if os.sep in p and not p.startswith(PLACEHOLDER_DIR) else p
        return rel if os.sep in rel else f".{os.sep}{rel}"

    def value(self, p: Any) -> str:
        """In args and env values coldrun replaces ${EXPERIMENT_DIR} with the experiment file's directory."""
        p = str(p)
        rel = self._relative(p)
        if rel is None:
            return p
        return EXPERIMENT_DIR_VAR if rel == "." else f"{EXPERIMENT_DIR_VAR}{os.sep}{rel}"

    def values(self, value: str) -> str:
        """Each os.pathsep-separated part of an environment value, as ``value``."""
        return os.pathsep.join(self.value(part) for part in value.split(os.pathsep))


def _environment(vm_def: k.BaseVMDef, paths: Paths, where: str, tr: VmTranslation) -> dict[str, str]:
    """Krun's env changes, in order, as coldrun's appended VM env."""
    env: dict[str, str] = {}
    for change in getattr(vm_def, "common_env_changes", []):
        if not isinstance(change, k.EnvChange) or change.val is None:
            continue          # e.g. TruffleRubyVMDef without graal_home: Krun appended nothing useful
        if not isinstance(change.var, str) or not isinstance(change.val, str):
            tr.notes.append(f"{where}: environment change {change!r} is not a name and a string")
            continue
        if change.var in RUNNER_OWNED_ENV.get(tr.runner or "", ()):
            tr.remarks.append(f"{change.var}={change.val} is not set: coldrun's {tr.runner} runner sets "
                              f"{change.var} itself when instrumenting")
            continue
        if isinstance(change, k.EnvChangeSet):
            tr.remarks.append(f"{change.var} was EnvChangeSet (fatal if already set); coldrun appends "
                              f"with ':' to a value it already has")
        val = paths.values(change.val)
        env[change.var] = f"{env[change.var]}{os.pathsep}{val}" if change.var in env else val
    return env


def translate_vm(name: str, vm_def: k.BaseVMDef, paths: Paths, problems: list[str],
                 startup_patch: str = "") -> VmTranslation:
    """``startup_patch``: the krun.platform method the config replaced ("" if none); with a runner swapped
    for a start-up runner it is warmup_experiment's way of measuring start-up."""
    where = f"VMS[{name!r}]"
    base = _krun_class(vm_def)
    runner = next((r for cls, r in RUNNER_OF_CLASS.items() if isinstance(vm_def, cls)), None)
    if base is k.GenericScriptingVMDef:
        runner = RUNNER_OF_SCRIPT.get(str(getattr(vm_def, "iterations_runner", "")))
    tr = VmTranslation(runner)
    if type(vm_def) is not base:
        tr.notes.append(f"{where}: {type(vm_def).__name__} is the config's own subclass of {base.__name__}; "
                        f"translated as {base.__name__}, without what it overrides "
                        f"({', '.join(_overrides(vm_def, base)) or 'class attributes only'})")
    if runner is None:
        tr.notes.append(f"{where}: {repr(vm_def)}: coldrun has no runner for {base.__name__}; this VM and "
                        f"its keys are left out")
        return tr
    for attr in sorted(set(vars(vm_def)) - KNOWN_ATTRIBUTES):
        tr.notes.append(f"{where}: the config set vm_def.{attr}, which has no coldrun equivalent")
    if getattr(vm_def, "dry_run", False):
        tr.notes.append(f"{where}: vm_def.dry_run = True (Krun ran nothing); coldrun runs the benchmarks")
    swapped = getattr(vm_def, "iterations_runner", None)
    if swapped != getattr(vm_def, "krun_runner", swapped) and startup_patch and "startup" in str(swapped).lower():
        tr.startup_runner = str(swapped)
        tr.remarks.append(f"the config swapped Krun's runner for {os.path.basename(str(swapped))} and patched "
                          f"{startup_patch}: start-up time, coldrun's mode = \"startup\" (its own start-up runner)")
    elif swapped != getattr(vm_def, "krun_runner", swapped):
        tr.notes.append(f"{where}: the config replaced Krun's iterations runner with {swapped!r}; coldrun runs "
                        f"its own {runner} runner")

    if runner == "krun-external":
        exe = getattr(vm_def, "script_path", None)
    elif runner == "c":
        exe = None
    else:
        exe = getattr(vm_def, "vm_path", None)
    if runner != "c":
        if not isinstance(exe, str) or not exe:
            problems.append(f"{where}: {repr(vm_def)} names no VM path ({exe!r}; did find_executable find "
                            f"nothing?); fix the path in the config")
            return tr
        tr.fields["executable"] = paths.executable(exe)
    args = getattr(vm_def, "extra_vm_args", None) or []
    if not isinstance(args, (list, tuple)) or any(not isinstance(a, str) for a in args):
        problems.append(f"{where}: extra_vm_args {args!r} must be a list of strings")
        return tr
    args = [paths.value(a) for a in args]
    if args:
        tr.fields["args"] = args
    env = _environment(vm_def, paths, where, tr)
    if env:
        tr.fields["env"] = env
    if getattr(vm_def, "instrument", False):
        if runner in INSTRUMENTABLE:
            tr.fields["instrument"] = True
        else:
            tr.notes.append(f"{where}: instrument=True: coldrun instruments pypy and java only, not {runner}")
    if base is k.V8VMDef and "node" not in os.path.basename(str(exe)):
        tr.notes.append(f"{where}: V8VMDef ran d8 ({tr.fields['executable']}); "
                        f"coldrun's javascript runner needs Node.js (it loads "
                        f"libkruntime as a Node addon): set executable to node")
    if base is k.GraalVMDef:
        tr.notes.append(f"{where}: GraalVMDef's check that the JVMCI compiler is really enabled has no coldrun "
                        f"equivalent (coldrun check runs the VM once on a trivial benchmark)")
    if base in (k.TruffleRubyVMDef, k.JRubyTruffleVMDef):
        tr.remarks.append("TruffleRuby through jt.rb as Krun ran it; its check that Graal is enabled is not "
                          "carried over")
    return tr
