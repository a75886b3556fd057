"""libkruntime: in-process iteration timing (Krun-compatible API).

Three artefacts are built from the C sources in this directory:

- ``libkruntime._kruntime``: the CPython extension (``krun_init``,
  ``krun_measure``, ``krun_get_wallclock`` ... re-exported here);
- ``libkruntime.so``: a plain shared library for other languages' FFIs
  (ctypes, cffi, LuaJIT, JNI ...), see ``shared_library_path()``;
- the C iteration runner binary (``iteration_runners.c_runner_path()``).

Importing this package never fails because the extension is missing, so the
supervisor can always import it; using a ``krun_*`` function then raises an
ImportError that says how to build it.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_BUILD_HINT = "build it with `python setup.py build_ext --inplace` (or reinstall coldrun)"

try:
    from ._kruntime import *  # noqa: F401,F403  (the krun_* functions)
    from ._kruntime import PROTOCOL_VERSION  # noqa: F401
    _import_error: ImportError | None = None
except ImportError as e:  # not built yet: fail on use, not on import
    _import_error = e

    def __getattr__(name: str):
        if name.startswith("krun_"):
            raise ImportError(f"libkruntime._kruntime is not importable ({_import_error}); {_BUILD_HINT}")
        raise AttributeError(name)


def shared_library_path() -> Path:
    """Absolute path of libkruntime.so; FileNotFoundError (with the fix) if not built."""
    path = PACKAGE_DIR / "libkruntime.so"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; {_BUILD_HINT}")
    return path


def extension_path() -> Path:
    """Absolute path of the built ``_kruntime`` extension module file."""
    from importlib.machinery import EXTENSION_SUFFIXES

    for suffix in EXTENSION_SUFFIXES:
        path = PACKAGE_DIR / f"_kruntime{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no _kruntime extension in {PACKAGE_DIR}; {_BUILD_HINT}")
