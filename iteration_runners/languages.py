"""Runner commands for the non-C, non-CPython language runners.

One table row per language: which interpreter runs which runner file, the
default benchmark file name (Krun's layout, so Krun suites run unmodified),
and which parts must be compiled first (JNI glue, the Node.js addon, the
startup-time wrapper).  ``language_runner_command`` follows contract A
exactly: Krun argument order, extra environment, ``ValueError`` for an
unknown runner name.

Compiled parts are built on demand into ``<runner dir>/build/`` (gitignored)
and rebuilt when a source is newer than the output; ``python -m
iteration_runners.languages build`` builds them all ahead of time (CI, image
preparation), so nothing is compiled while an experiment runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iteration_runners.args import check_run_args
from supervisor.errors import ColdrunError

RUNNERS_DIR = Path(__file__).resolve().parent
REPO_DIR = RUNNERS_DIR.parent

# Environment names shared by the runners in this module.
ENV_RESULTS_FD = "COLDRUN_RESULTS_FD"
ENV_LIBKRUNTIME = "COLDRUN_LIBKRUNTIME"  # absolute path of libkruntime.so
ENV_INSTRUMENT = "COLDRUN_INSTRUMENT"  # "1": collect VM events per iteration
ENV_JNI_LIBRARY = "COLDRUN_KRUN_JNI"  # Java: the JNI glue library
ENV_NODE_ADDON = "COLDRUN_KRUN_NODE_ADDON"  # Node.js: the N-API addon

RESULTS_FD = 3


class RunnerBuildError(ColdrunError):
    """A language runner's compiled part could not be found or built."""


@dataclass(frozen=True)
class LanguageRunner:
    name: str
    default_executable: str
    runner_file: str  # relative to RUNNERS_DIR; for Java the main class
    benchmark_filename: str
    startup_runner: str  # relative to RUNNERS_DIR; for Java the main class
    instrumentable: bool = False


LANGUAGE_RUNNERS: dict[str, LanguageRunner] = {
    r.name: r
    for r in (
        LanguageRunner("pypy", "pypy3", "pypy/iterations_runner.py", "bench.py",
                       "startup/startup_runner.py", instrumentable=True),
        LanguageRunner("lua", "luajit", "lua/iterations_runner.lua", "bench.lua",
                       "startup/startup_runner.lua"),
        LanguageRunner("javascript", "node", "javascript/iterations_runner.js", "bench.js",
                       "startup/startup_runner.js"),
        LanguageRunner("java", "java", "IterationsRunner", "KrunEntry.class",
                       "StartupRunner", instrumentable=True),
        LanguageRunner("ruby", "ruby", "ruby/iterations_runner.rb", "bench.rb",
                       "startup/startup_runner.rb"),
        LanguageRunner("php", "php", "php/iterations_runner.php", "bench.php",
                       "startup/startup_runner.php"),
    )
}
KNOWN_LANGUAGE_RUNNERS: tuple[str, ...] = tuple(LANGUAGE_RUNNERS)

# Startup mode also times CPython (the dummy runner is plain Python).
STARTUP_ONLY_RUNNERS = {"python": ("python3", "startup/startup_runner.py")}


def _runner(runner: str) -> LanguageRunner:
    try:
        return LANGUAGE_RUNNERS[runner]
    except KeyError:
        raise ValueError(
            f"unknown runner {runner!r}; known language runners: {', '.join(KNOWN_LANGUAGE_RUNNERS)}"
        ) from None


def benchmark_filename(runner: str) -> str:
    """Krun's default benchmark file name for ``runner`` (e.g. "bench.lua")."""
    return _runner(runner).benchmark_filename


# --------------------------------------------------------------------------
# libkruntime location


def libkruntime_path() -> Path:
    """The shared libkruntime every runner loads through its FFI."""
    override = os.environ.get(ENV_LIBKRUNTIME)
    if override:
        path = Path(override)
    else:
        try:
            import libkruntime
        except ImportError as exc:  # pragma: no cover - broken install
            raise RunnerBuildError(f"cannot import libkruntime: {exc}") from None
        locate = getattr(libkruntime, "shared_library_path", None)
        if locate is None:
            raise RunnerBuildError(
                "libkruntime.shared_library_path() is missing; build libkruntime first"
            )
        try:
            path = Path(locate())
        except FileNotFoundError as exc:
            raise RunnerBuildError(str(exc)) from None
    if not path.is_file():
        raise RunnerBuildError(
            f"libkruntime shared library {path} does not exist; build libkruntime "
            f"(or set {ENV_LIBKRUNTIME} to its path)"
        )
    return path.resolve()


def libkruntime_include_dir() -> Path:
    lib = libkruntime_path()
    for candidate in (lib.parent, REPO_DIR / "libkruntime"):
        if (candidate / "libkruntime.h").is_file():
            return candidate
    raise RunnerBuildError(f"libkruntime.h not found beside {lib} or in {REPO_DIR / 'libkruntime'}")


# --------------------------------------------------------------------------
# Building the compiled parts


def _stale(output: Path, sources: list[Path]) -> bool:
    if not output.exists():
        return True
    built = output.stat().st_mtime
    return any(s.stat().st_mtime > built for s in sources)


def _run_build(argv: list[str], what: str) -> None:
    tool = shutil.which(argv[0])
    if tool is None:
        raise RunnerBuildError(f"building {what} needs {argv[0]!r}, which is not on PATH")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        first = detail[0] if detail else f"exit status {proc.returncode}"
        raise RunnerBuildError(f"building {what} failed: {first}")


def _cc() -> str:
    return os.environ.get("CC") or sysconfig.get_config_var("CC").split()[0] or "cc"


def _build_shared_object(output: Path, sources: list[Path], include_dirs: list[Path], what: str) -> Path:
    """Compile C sources to a shared object linked (with rpath) to libkruntime."""
    lib = libkruntime_path()
    headers = [d / "libkruntime.h" for d in include_dirs if (d / "libkruntime.h").exists()]
    if not _stale(output, sources + headers):
        return output
    output.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target then rename: a concurrent build never sees half a file.
    tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    argv = [_cc(), "-O2", "-Wall", "-shared", "-fPIC", "-o", str(tmp)]
    argv += [f"-I{d}" for d in include_dirs]
    argv += [str(s) for s in sources]
    argv += [str(lib), f"-Wl,-rpath,{lib.parent}"]
    _run_build(argv, what)
    os.replace(tmp, output)
    return output


def _java_home_include() -> Path:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        home = Path(java_home)
    else:
        javac = shutil.which("javac")
        if javac is None:
            raise RunnerBuildError("building the Java runner needs javac (apt-get install openjdk-17-jdk-headless)")
        home = Path(javac).resolve().parent.parent
    include = home / "include"
    if not (include / "jni.h").is_file():
        raise RunnerBuildError(f"jni.h not found under {include}; set JAVA_HOME to a JDK")
    return include


def _javac(sources: list[Path], out_dir: Path, marker: Path, what: str) -> None:
    if not _stale(marker, sources):
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    # --release 8 keeps the classes loadable by any JVM a user may name.
    _run_build(["javac", "-nowarn", "--release", "8", "-d", str(out_dir)] + [str(s) for s in sources], what)
    marker.touch()


def build_java() -> tuple[Path, Path]:
    """(class directory, JNI library) for the Java runner."""
    java_dir = RUNNERS_DIR / "java"
    classes = java_dir / "build" / "classes"
    _javac([java_dir / "IterationsRunner.java"], classes, classes / ".built", "the Java runner")
    include = _java_home_include()
    jni = _build_shared_object(
        java_dir / "build" / "libcoldrun_krun_jni.so",
        [java_dir / "krun_jni.c"],
        [libkruntime_include_dir(), include, include / "linux"],
        "the Java runner's JNI library",
    )
    return classes, jni


def build_node_addon() -> Path:
    js_dir = RUNNERS_DIR / "javascript"
    node_include = Path(os.environ.get("COLDRUN_NODE_INCLUDE", "/usr/include/node"))
    if not (node_include / "node_api.h").is_file():
        raise RunnerBuildError(
            f"node_api.h not found in {node_include}; install the nodejs headers "
            "(Debian: libnode-dev) or set COLDRUN_NODE_INCLUDE"
        )
    return _build_shared_object(
        js_dir / "build" / "kruntime_addon.node",
        [js_dir / "kruntime_addon.c"],
        [libkruntime_include_dir(), node_include],
        "the Node.js libkruntime addon",
    )


def build_startup_wrapper() -> Path:
    st_dir = RUNNERS_DIR / "startup"
    output = st_dir / "build" / "startup_wrapper"
    source = st_dir / "startup_wrapper.c"
    if _stale(output, [source]):
        output.parent.mkdir(parents=True, exist_ok=True)
        tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
        _run_build([_cc(), "-O2", "-Wall", "-o", str(tmp), str(source)], "the startup-time wrapper")
        os.replace(tmp, output)
    return output


def build_java_startup() -> Path:
    st_dir = RUNNERS_DIR / "startup"
    classes = st_dir / "build" / "classes"
    _javac([st_dir / "StartupRunner.java"], classes, classes / ".built", "the Java startup runner")
    return classes


def build(runner: str) -> None:
    """Build whatever ``runner`` needs compiled (no-op for interpreted runners)."""
    _runner(runner)
    if runner == "java":
        build_java()
    elif runner == "javascript":
        build_node_addon()


# --------------------------------------------------------------------------
# Commands


def _java_class_and_dir(benchmark_path: str) -> tuple[str, str]:
    """Krun's Java benchmarks are a class name plus a class path directory."""
    path = Path(benchmark_path)
    name = path.name
    if name.endswith(".class"):
        name = name[: -len(".class")]
    elif name.endswith(".java"):
        raise ValueError(
            f"Java benchmark {benchmark_path} must be compiled: give the .class file "
            "(javac it against iteration_runners/java/build/classes)"
        )
    # Absolute: the benchmark user's working directory is not the supervisor's.
    return name, os.path.abspath(path.parent)


def _base_env() -> dict[str, str]:
    return {
        ENV_RESULTS_FD: str(RESULTS_FD),
        ENV_LIBKRUNTIME: str(libkruntime_path()),
    }


def language_runner_command(
    runner: str,
    executable: str,
    vm_args: list[str],
    benchmark_path: str,
    iterations: int,
    param: int,
    debug: bool,
    *,
    instrument: bool = False,
    startup: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """argv and extra environment for one process execution (contract A).

    ``instrument`` asks for per-iteration VM events (PyPy, Java only; never
    for production runs).  ``startup`` wraps the VM in the startup-time
    wrapper and runs the language's dummy runner instead of the benchmark.
    """
    if startup:
        return startup_command(runner, executable, vm_args, benchmark_path, iterations, param, debug)
    spec = _runner(runner)
    check_run_args(iterations, param)
    if instrument and not spec.instrumentable:
        raise ValueError(
            f"instrumentation is available for pypy and java only, not {runner!r}"
        )
    exe = executable or spec.default_executable
    env = _base_env()
    tail = [str(iterations), str(param), "1" if debug else "0"]

    if runner == "java":
        classes, jni = build_java()
        bench_class, bench_dir = _java_class_and_dir(benchmark_path)
        env["CLASSPATH"] = f"{classes}{os.pathsep}{bench_dir}"
        env[ENV_JNI_LIBRARY] = str(jni)
        argv = [exe, *vm_args, spec.runner_file, bench_class, *tail]
    else:
        if runner == "javascript":
            env[ENV_NODE_ADDON] = str(build_node_addon())
        argv = [exe, *vm_args, str(RUNNERS_DIR / spec.runner_file), benchmark_path, *tail]

    if instrument:
        env[ENV_INSTRUMENT] = "1"
        if runner == "pypy":
            # PyPy writes its debug log to a per-process file (%d = pid) which the
            # runner reads back and splits per iteration; stderr stays the benchmark's.
            log_template = Path(tempfile.gettempdir()) / "coldrun-pypylog-%d"
            env["PYPYLOG"] = f"gc,jit-tracing,jit-backend:{log_template}"
    return argv, env


def startup_command(
    runner: str,
    executable: str,
    vm_args: list[str],
    benchmark_path: str,
    iterations: int,
    param: int,
    debug: bool,
) -> tuple[list[str], dict[str, str]]:
    """Startup-time mode: ``startup_wrapper <vm> [vm_args] <dummy runner> ...``.

    The wrapper reads the clock and execs the VM; the dummy runner reads the
    same clock at its first line and reports both (the "startup" key).
    """
    if iterations != 1:
        raise ValueError(
            f"startup-time mode measures one process start, so iterations must be 1, not {iterations!r}"
        )
    if runner in STARTUP_ONLY_RUNNERS:
        default_exe, dummy = STARTUP_ONLY_RUNNERS[runner]
        spec_runner_file = dummy
    else:
        spec = _runner(runner)
        default_exe, spec_runner_file = spec.default_executable, spec.startup_runner
    exe = executable or default_exe
    wrapper = build_startup_wrapper()
    env = {ENV_RESULTS_FD: str(RESULTS_FD)}
    tail = [benchmark_path, str(iterations), str(param), "1" if debug else "0"]
    if runner == "java":
        env["CLASSPATH"] = str(build_java_startup())
        argv = [str(wrapper), exe, *vm_args, spec_runner_file, *tail]
    else:
        argv = [str(wrapper), exe, *vm_args, str(RUNNERS_DIR / spec_runner_file), *tail]
    return argv, env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iteration_runners.languages")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the JNI glue, Node.js addon and startup wrapper")
    b.add_argument("runners", nargs="*", help=f"default: all of {', '.join(KNOWN_LANGUAGE_RUNNERS)} and startup")
    args = parser.parse_args(argv)
    names = args.runners or [*KNOWN_LANGUAGE_RUNNERS, "startup"]
    try:
        for name in names:
            if name == "startup":
                print(f"built {build_startup_wrapper()}")
                if shutil.which("javac"):
                    print(f"built {build_java_startup()}")
            else:
                build(name)
                print(f"built {name}")
    except (RunnerBuildError, ValueError) as exc:
        print(f"coldrun: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
