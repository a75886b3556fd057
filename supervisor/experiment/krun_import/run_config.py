"""Run a ``.krun`` config (Python, as Krun's ``execfile`` did) against the Krun stand-ins.

The stand-ins are served by an import finder placed first on ``sys.meta_path``
only while the config runs: ``krun``, ``krun.*`` and ``distutils.spawn`` then
resolve to them, whether the config imports them or a module it imports does.
Afterwards the finder is removed and ``sys.modules`` is given back its previous
entries for those names, so nothing of Krun's stand-ins outlives the import.

As with Krun the config runs with the experiment directory (the config's) as
its working directory, so ``os.getcwd()`` means what it meant there; the
previous working directory is restored afterwards.  A few Python 2 builtins
Krun-era configs use (``xrange``, ``unicode``, ``basestring``, ``long``,
``execfile``) are provided, and Python 2 syntax is read as Python 2 did
(``python2``: tabs, print statements, ...), in the config and in what it
``execfile``s.

The host name the config reads (``platform.node()``, ``socket.gethostname()``,
``os.uname()``) is ``--hostname``'s when given, so a config keyed by the
paper's host names can be imported elsewhere; ``HostName`` records whether it
was read at all.

This runs the user's code with the user's rights, as Krun did at every boot.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.abc
import importlib.util
import io
import os
import platform
import re
import socket
import sys
import tokenize
import traceback
import types
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Iterator

from supervisor.errors import ColdrunError
from supervisor.experiment.krun_import.python2 import as_python3
from supervisor.experiment.krun_import.stand_ins import KrunConfigFatal, Lookups, stand_in_modules
from supervisor.experiment.model import read_input_file

STAND_IN_PACKAGES = ("krun", "distutils")

# Python 3's messages for Python 2 syntax, and what to write instead.
_PY2_SYNTAX = (
    (re.compile(r"Missing parentheses in call to 'print'"), "print is a function in Python 3: print(...)"),
    (re.compile(r"Missing parentheses in call to 'exec'"), "exec is a function in Python 3: exec(...)"),
    (re.compile(r"multiple exception types must be parenthesized"), "write `except E as e:`"),
    (re.compile(r"leading zeros in decimal integer literals"), "write octal numbers as 0o755"),
)


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, modules: dict[str, types.ModuleType]):
        self.modules = modules

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname in self.modules:
            return importlib.util.spec_from_loader(fullname, self,
                                                   is_package=hasattr(self.modules[fullname], "__path__"))
        if fullname.startswith("krun."):
            raise ImportError(f"coldrun stands in for krun, krun.vm_defs, krun.util, krun.env and krun.platform's "
                              f"classes only; "
                              f"{fullname} is Krun's own machinery, which has no coldrun equivalent", name=fullname)
        if fullname.startswith("distutils."):
            raise ImportError(f"coldrun stands in for distutils.spawn only (Python 3.12 has no distutils), "
                              f"not {fullname}", name=fullname)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.modules[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _owned(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in STAND_IN_PACKAGES)


@contextlib.contextmanager
def stand_ins_importable(modules: dict[str, types.ModuleType]) -> Iterator[None]:
    """The finder on sys.meta_path and sys.modules cleared of the names it serves, for the duration only."""
    saved = {name: mod for name, mod in sys.modules.items() if _owned(name)}
    for name in saved:
        del sys.modules[name]
    finder = _StandInFinder(modules)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _owned(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@dataclass
class HostName:
    """The host name the config sees, and whether it looked."""
    name: str
    given: bool          # from --hostname (else this machine's)
    read: bool = False


@dataclass
class ConfigRun:
    """What running a config gave: its global names, what it looked up, how its Python 2 was read."""
    namespace: dict[str, Any]
    lookups: Lookups
    host: HostName
    python2: list[str] = field(default_factory=list)    # one note per Python 2 form read as Python 3
    platform_tests: bool = False                         # the source tests sys.platform / platform.system()


@contextlib.contextmanager
def host_named(host: HostName) -> Iterator[None]:
    """platform.node(), socket.gethostname() and os.uname() answer ``host.name`` while the config runs."""
    real_uname = os.uname()
    saved = (platform.node, socket.gethostname, os.uname)

    def node() -> str:
        host.read = True
        return host.name

    def uname() -> os.uname_result:
        host.read = True
        return os.uname_result((real_uname.sysname, host.name, *real_uname[2:]))

    platform.node, socket.gethostname, os.uname = node, node, uname
    try:
        yield
    finally:
        platform.node, socket.gethostname, os.uname = saved


def _decoded(source: bytes) -> str:
    """Source text in its declared encoding (a coding: line), else UTF-8, as Python reads a file."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot decode it: {e}") from None


def _compiled(source: bytes, filename: str, notes: list[str]) -> Any:
    text, rewrites = as_python3(_decoded(source), filename)
    notes += rewrites
    return compile(text, filename, "exec", dont_inherit=True)


def _execfile(namespace: dict[str, Any], notes: list[str], sources: list[str]) -> Any:
    """Python 2's execfile, relative to the config's directory like everything else in it."""
    def execfile(filename: str, globals_: dict | None = None, locals_: dict | None = None) -> None:
        with open(filename, "rb") as f:
            source = f.read()
        sources.append(source.decode("utf-8", "replace"))
        exec(_compiled(source, filename, notes), namespace if globals_ is None else globals_, locals_)
    return execfile


def _config_builtins(namespace: dict[str, Any], notes: list[str], sources: list[str]) -> dict[str, Any]:
    b = dict(vars(builtins))
    b.update(xrange=range, unicode=str, basestring=str, long=int, execfile=_execfile(namespace, notes, sources))
    return b


_PLATFORM_TEST = re.compile(r"\bsys\.platform\b|\bplatform\.system\(|\bos\.uname\(")


def _syntax_problem(path: Path, e: SyntaxError) -> str:
    where = f"{e.filename or path}:{e.lineno}"
    for pattern, fix in _PY2_SYNTAX:
        if pattern.search(e.msg or ""):
            return (f"{where}: Python 2 syntax ({e.msg.split('.')[0]}); the config is run as Python 3 "
                    f"(coldrun has no Python 2): {fix}")
    return f"{where}: syntax error: {e.msg}; the config is run as Python 3"


def _host_tables(namespace: dict[str, Any]) -> str:
    """The config's top-level tables keyed by names (as BUSY_THRESHOLDS by host): where --hostname's
    candidates are."""
    tables = [f"{var} has {', '.join(sorted(t))}" for var, t in namespace.items()
              if var.isupper() and var not in ("VMS", "VARIANTS", "BENCHMARKS") and isinstance(t, dict) and t
              and all(isinstance(k, str) and not re.fullmatch(r"[A-Z_][A-Z0-9_]*", k) for k in t)]
    return f"; {'; '.join(tables)}" if tables else ""


def _error_line(path: Path, e: BaseException, host: HostName | None = None,
                namespace: dict[str, Any] | None = None) -> str:
    """Where in the config the exception came from (its last frame in the config file), and what it was."""
    frames = traceback.extract_tb(e.__traceback__)
    here = [f for f in frames if f.filename == str(path)]
    where = f"{path}:{here[-1].lineno}" if here else str(path)
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if isinstance(e, KrunConfigFatal):
        return f"{where}: the config called fatal(): {text}"
    name = type(e).__name__
    hint = ""
    if isinstance(e, AttributeError) and re.search(r"'dict' object has no attribute '(iter\w+|has_key)'", text):
        hint = " (Python 2 only; use .items(), .keys(), .values() or `in`)"
    elif isinstance(e, KeyError) and host is not None and host.read and e.args and \
            e.args[0] in (host.name, host.name.split(".")[0]):
        hint = (f" (the config looks up its host name, {host.name!r}, "
                + ("given by --hostname" if host.given else "this machine's")
                + "; give --hostname NAME with the benchmark machine's name" + _host_tables(namespace or {}) + ")")
    elif isinstance(e, ModuleNotFoundError):
        hint = " (the config imports it; install it for the Python running coldrun, or remove the import)"
    return f"{where}: running the config raised {name}: {text}{hint}"


def run_config(path: Path, hostname: str | None = None) -> ConfigRun:
    """Run the config as host ``hostname`` (default: this machine); ColdrunError with one line (file:line)
    on any failure."""
    source = read_input_file(path, "Krun config", "a .krun config")
    notes: list[str] = []
    try:
        code = _compiled(source, str(path), notes)
    except SyntaxError as e:
        raise ColdrunError(_syntax_problem(path, e)) from None
    except ValueError as e:      # e.g. NUL bytes in the source
        raise ColdrunError(f"{path}: not Python source ({e})") from None
    host = HostName(hostname or socket.gethostname(), hostname is not None)
    lookups = Lookups()
    namespace: dict[str, Any] = {"__name__": "__krun_config__", "__file__": str(path.resolve())}
    sources = [source.decode("utf-8", "replace")]
    namespace["__builtins__"] = _config_builtins(namespace, notes, sources)
    try:
        with stand_ins_importable(stand_in_modules(lookups)), working_directory(path.parent), host_named(host):
            exec(code, namespace)
    except SyntaxError as e:     # in a file the config exec'd or imported
        raise ColdrunError(_syntax_problem(path, e)) from None
    except SystemExit as e:
        raise ColdrunError(f"{path}: the config called sys.exit({e.code!r}) while being imported") from None
    except KrunConfigFatal as e:
        raise ColdrunError(_error_line(path, e)) from None
    except RecursionError:
        raise ColdrunError(f"{path}: running the config raised RecursionError") from None
    except Exception as e:       # the config is arbitrary code: any failure is one line, not a traceback
        raise ColdrunError(_error_line(path, e, host, namespace)) from None
    namespace.pop("__builtins__", None)
    return ConfigRun(namespace, lookups, host, notes, bool(_PLATFORM_TEST.search("\n".join(sources))))
