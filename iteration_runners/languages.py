"""Runner commands for the non-C, non-CPython language runners, and building their compiled parts.

One table row per language: which interpreter runs which runner file, the
default benchmark file name (Krun's layout, so Krun suites run unmodified),
and which parts must be compiled first (JNI glue, the Node.js addon, the
startup-time wrapper, the Java probe benchmark).  ``language_runner_command``
follows contract A exactly: Krun argument order, extra environment, ``ValueError`` for an
unknown runner name.

Compiled parts are built by ``coldrun build-runners`` (``build_runners``), never
while an experiment runs: a command for a runner whose part is missing or older
than its sources raises ``RunnerNotBuilt`` naming that command.  They go beside
the package (``<runner dir>/build/``, gitignored) when that is writable, else
into a cache directory (``$COLDRUN_RUNNER_BUILD_DIR`` when set, else
/var/cache/coldrun for root, ~/.cache/coldrun otherwise, one subdirectory per
installed copy); both are searched in that order.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from iteration_runners.args import check_run_args

RUNNERS_DIR = Path(__file__).resolve().parent
REPO_DIR = RUNNERS_DIR.parent
PROBE_DIR = RUNNERS_DIR / "probe"

# Environment names shared by the runners in this module.
ENV_RESULTS_FD = "COLDRUN_RESULTS_FD"
ENV_LIBKRUNTIME = "COLDRUN_LIBKRUNTIME"  # absolute path of libkruntime.so
ENV_INSTRUMENT = "COLDRUN_INSTRUMENT"  # "1": collect VM events per iteration
ENV_JNI_LIBRARY = "COLDRUN_KRUN_JNI"  # Java: the JNI glue library
ENV_NODE_ADDON = "COLDRUN_KRUN_NODE_ADDON"  # Node.js: the N-API addon
ENV_RUBY_EXT = "COLDRUN_KRUN_RUBY_EXT"  # Ruby: the compiled KrunExt binding
ENV_BUILD_DIR = "COLDRUN_RUNNER_BUILD_DIR"  # the only place compiled parts are built and looked for

RESULTS_FD = 3
BUILD_COMMAND = "coldrun build-runners"


class RunnerError(Exception):
    """Something a runner needs is missing or cannot be made (iteration_runners' own error type;
    the supervisor reports it as a ColdrunError)."""


class RunnerBuildError(RunnerError):
    """A language runner's compiled part could not be built; ``output``: the tool's whole error output."""

    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


class MissingTool(RunnerBuildError):
    """Building a part needs a tool (compiler, JDK, headers) that is not installed."""


class RunnerNotBuilt(RunnerError, FileNotFoundError):
    """A compiled part (or libkruntime) is missing or older than its sources: build it first."""


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
# The Debian package of each interpreter, for the fix of a runner that cannot start.
DEBIAN_PACKAGES = {"python": "python3", "pypy": "pypy3", "lua": "luajit", "javascript": "nodejs",
                   "java": "openjdk-17-jdk-headless", "ruby": "ruby", "php": "php-cli"}

# Startup mode also times CPython (the dummy runner is plain Python) and C: there the compiled dummy
# runner is its own "VM" (built by `coldrun build-runners startup`), as Krun's startup_runner_c was.
STARTUP_ONLY_RUNNERS = {"python": ("python3", "startup/startup_runner.py")}
STARTUP_NATIVE_RUNNER = "c"


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
            raise RunnerNotBuilt(f"cannot import libkruntime: {exc}") from None
        locate = getattr(libkruntime, "shared_library_path", None)
        if locate is None:
            raise RunnerNotBuilt(
                "libkruntime.shared_library_path() is missing; build libkruntime first"
            )
        try:
            path = Path(locate())
        except FileNotFoundError as exc:
            raise RunnerNotBuilt(str(exc)) from None
    if not path.is_file():
        raise RunnerNotBuilt(
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
# Where compiled parts live


def _cache_root() -> Path:
    override = os.environ.get(ENV_BUILD_DIR)
    if override:
        return Path(override)
    if os.geteuid() == 0:
        base = Path("/var/cache/coldrun")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "coldrun"
    # One directory per installed copy: two venvs never share (possibly different) builds.
    return base / f"runners-{hashlib.sha256(str(RUNNERS_DIR).encode()).hexdigest()[:12]}"


def build_dirs(part: str) -> list[Path]:
    """Where ``part``'s compiled pieces are looked for, in order."""
    if os.environ.get(ENV_BUILD_DIR):
        return [_cache_root() / part]
    return [RUNNERS_DIR / part / "build", _cache_root() / part]


def _build_dir_for_writing(part: str) -> Path:
    """Beside the package when it is writable (editable and user installs), else the cache."""
    dirs = build_dirs(part)
    if len(dirs) > 1 and os.access(RUNNERS_DIR / part, os.W_OK):
        return dirs[0]
    return dirs[-1]


def _stale(output: Path, sources: list[Path]) -> bool:
    if not output.exists():
        return True
    built = output.stat().st_mtime
    return any(s.stat().st_mtime > built for s in sources)


@dataclass(frozen=True)
class Artefact:
    """One compiled piece: ``relpath`` inside its part's build directory, made from ``sources``.

    ``relpath`` is a directory for Java classes; its ``.built`` marker then
    stands for the whole directory.
    """
    part: str          # "java", "javascript", "startup"
    relpath: str
    sources: tuple[Path, ...]
    what: str          # for messages
    language: str      # what to pass to `coldrun build-runners`

    def _marker(self, base: Path) -> Path:
        out = base / self.relpath
        return out / ".built" if self.relpath.endswith("classes") else out

    def find(self) -> Path:
        """The up-to-date built artefact; RunnerNotBuilt (naming the fix) otherwise."""
        for base in build_dirs(self.part):
            if not _stale(self._marker(base), list(self.sources)):
                return base / self.relpath
        where = " or ".join(str(d / self.relpath) for d in build_dirs(self.part))
        raise RunnerNotBuilt(f"{self.what} is not built or older than its sources (looked for {where}); "
                             f"run `{BUILD_COMMAND} {self.language}`")

    def up_to_date(self) -> Path | None:
        try:
            return self.find()
        except RunnerNotBuilt:
            return None


JAVA_DIR, JS_DIR, STARTUP_DIR = RUNNERS_DIR / "java", RUNNERS_DIR / "javascript", RUNNERS_DIR / "startup"
RUBY_DIR = RUNNERS_DIR / "ruby"
PHP_DIR = RUNNERS_DIR / "php"
JAVA_CLASSES = Artefact("java", "classes", (JAVA_DIR / "IterationsRunner.java",), "the Java runner", "java")
JAVA_JNI = Artefact("java", "libcoldrun_krun_jni.so", (JAVA_DIR / "krun_jni.c",),
                    "the Java runner's JNI library", "java")
JAVA_PROBE = Artefact("java", "probe-classes", (PROBE_DIR / "KrunEntry.java", JAVA_DIR / "IterationsRunner.java"),
                      "the Java probe benchmark", "java")
NODE_ADDON = Artefact("javascript", "kruntime_addon.node", (JS_DIR / "kruntime_addon.c",),
                      "the Node.js libkruntime addon", "javascript")
RUBY_EXT = Artefact("ruby", "kruntime_ext.so", (RUBY_DIR / "kruntime_ext.c",),
                    "the Ruby libkruntime extension", "ruby")
PHP_EXT = Artefact("php", "kruntime_php.so", (PHP_DIR / "kruntime_php.c",),
                   "the PHP libkruntime extension", "php")
STARTUP_WRAPPER = Artefact("startup", "startup_wrapper", (STARTUP_DIR / "startup_wrapper.c",),
                           "the startup-time wrapper", "startup")
STARTUP_CLASSES = Artefact("startup", "classes",
                           (STARTUP_DIR / "StartupRunner.java", JAVA_DIR / "IterationsRunner.java"),
                           "the Java startup runner", "startup")
STARTUP_C = Artefact("startup", "startup_runner_c", (STARTUP_DIR / "startup_runner.c",),
                     "the C startup runner", "startup")


# --------------------------------------------------------------------------
# Building the compiled parts


def run_build(argv: list[str], what: str) -> None:
    tool = shutil.which(argv[0])
    if tool is None:
        raise MissingTool(f"building {what} needs {argv[0]!r}, which is not on PATH")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        first = detail[0] if detail else f"exit status {proc.returncode}"
        raise RunnerBuildError(f"building {what} failed: {first}", (proc.stderr + proc.stdout).strip())


def _cc() -> str:
    return os.environ.get("CC") or (sysconfig.get_config_var("CC") or "cc").split()[0] or "cc"


def _output(art: Artefact) -> tuple[Path, bool]:
    """(where ``art`` goes, whether it must be (re)built there)."""
    found = art.up_to_date()
    if found is not None:
        return found, False
    out = _build_dir_for_writing(art.part) / art.relpath
    out.parent.mkdir(parents=True, exist_ok=True)
    # Readable by the benchmark user, whatever the umask of whoever builds.
    out.parent.chmod(out.parent.stat().st_mode | 0o055)
    return out, True


def _compile_c(art: Artefact, argv_tail: list[str], *, shared: bool) -> Path:
    out, needed = _output(art)
    if needed:
        # Build beside the target then rename: a concurrent build never sees half a file.
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        flags = ["-shared", "-fPIC"] if shared else []
        run_build([_cc(), "-O2", "-Wall", *flags, "-o", str(tmp), *argv_tail], art.what)
        tmp.chmod(0o755)
        os.replace(tmp, out)
    return out


def _build_shared_object(art: Artefact, include_dirs: list[Path]) -> Path:
    """Compile C sources to a shared object linked (with rpath) to libkruntime."""
    lib = libkruntime_path()
    tail = [f"-I{d}" for d in include_dirs] + [str(s) for s in art.sources]
    return _compile_c(art, tail + [str(lib), f"-Wl,-rpath,{lib.parent}"], shared=True)


def _java_home_include() -> Path:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        home = Path(java_home)
    else:
        javac = shutil.which("javac")
        if javac is None:
            raise MissingTool("building the Java runner needs javac (apt-get install openjdk-17-jdk-headless)")
        home = Path(javac).resolve().parent.parent
    include = home / "include"
    if not (include / "jni.h").is_file():
        raise MissingTool(f"jni.h not found under {include}; set JAVA_HOME to a JDK")
    return include


def _javac(art: Artefact, sources: list[Path], classpath: Path | None = None) -> Path:
    out, needed = _output(art)
    if needed:
        if shutil.which("javac") is None:
            raise MissingTool(f"building {art.what} needs javac (apt-get install openjdk-17-jdk-headless)")
        out.mkdir(parents=True, exist_ok=True)
        cp = ["-cp", str(classpath)] if classpath else []
        # --release 8 keeps the classes loadable by any JVM a user may name.
        run_build(["javac", "-nowarn", "--release", "8", *cp, "-d", str(out), *map(str, sources)], art.what)
        for f in [out, *out.rglob("*")]:
            f.chmod(f.stat().st_mode | (0o055 if f.is_dir() else 0o044))
        (out / ".built").touch()
    return out


def build_java_classes() -> Path:
    """The Java runner's class directory (BaseKrunEntry, IterationsRunner), built if needed."""
    return _javac(JAVA_CLASSES, list(JAVA_CLASSES.sources))


def build_java() -> tuple[Path, Path]:
    """(class directory, JNI library) for the Java runner."""
    classes = build_java_classes()
    include = _java_home_include()
    # jni_md.h sits in the OS's own subdirectory: include/linux, include/openbsd (OpenBSD's jdk package).
    machine_dirs = sorted(d for d in include.iterdir() if (d / "jni_md.h").is_file())
    jni = _build_shared_object(JAVA_JNI, [libkruntime_include_dir(), include, *machine_dirs])
    _javac(JAVA_PROBE, [PROBE_DIR / "KrunEntry.java"], classpath=classes)
    return classes, jni


def build_node_addon() -> Path:
    # Debian's libnode-dev, else OpenBSD's node package (under /usr/local).
    default = next((d for d in ("/usr/include/node", "/usr/local/include/node") if Path(d, "node_api.h").is_file()),
                   "/usr/include/node")
    node_include = Path(os.environ.get("COLDRUN_NODE_INCLUDE", default))
    if not (node_include / "node_api.h").is_file():
        raise MissingTool(
            f"node_api.h not found in {node_include}; install the nodejs headers "
            "(Debian: libnode-dev) or set COLDRUN_NODE_INCLUDE"
        )
    return _build_shared_object(NODE_ADDON, [libkruntime_include_dir(), node_include])


def _ruby_header_dirs() -> list[Path]:
    """ruby.h's directories, asked of the ruby on PATH (the one the runner uses by default)."""
    if shutil.which("ruby") is None:
        raise MissingTool("building the Ruby extension needs ruby (apt-get install ruby ruby-dev)")
    script = 'require "rbconfig"; puts RbConfig::CONFIG["rubyhdrdir"], RbConfig::CONFIG["rubyarchhdrdir"]'
    out = subprocess.run(["ruby", "-e", script], capture_output=True, text=True, check=False)
    dirs = [Path(line) for line in out.stdout.split()]
    if out.returncode != 0 or not dirs or not (dirs[0] / "ruby.h").is_file():
        raise MissingTool("building the Ruby extension needs ruby.h (apt-get install ruby-dev)")
    return dirs


def build_ruby_ext() -> Path:
    # libruby's symbols resolve when ruby loads the extension, so it is not linked here.
    return _build_shared_object(RUBY_EXT, [libkruntime_include_dir(), *_ruby_header_dirs()])


def _php_header_dirs() -> list[Path]:
    """php.h's directories, asked of the php-config beside the php on PATH (the runner's default php)."""
    if shutil.which("php-config") is None:
        raise MissingTool("building the PHP extension needs php-config and PHP's headers (apt-get install php-dev)")
    out = subprocess.run(["php-config", "--includes"], capture_output=True, text=True, check=False)
    dirs = [Path(flag[2:]) for flag in out.stdout.split() if flag.startswith("-I")]
    if out.returncode != 0 or not dirs or not (dirs[0] / "main" / "php.h").is_file():
        raise MissingTool("building the PHP extension needs php.h (apt-get install php-dev)")
    return dirs


def build_php_ext() -> Path:
    # The php binary's own symbols resolve when it loads the extension, so no libphp is linked.
    return _build_shared_object(PHP_EXT, [libkruntime_include_dir(), *_php_header_dirs()])


def build_startup_wrapper() -> Path:
    return _compile_c(STARTUP_WRAPPER, [str(s) for s in STARTUP_WRAPPER.sources], shared=False)


def build_java_startup() -> Path:
    # Compiled against the iterations runner's classes: it writes its document through their JNI glue.
    return _javac(STARTUP_CLASSES, [STARTUP_DIR / "StartupRunner.java"], classpath=build_java_classes())


def build_startup_c() -> Path:
    """The C start-up runner, linked to libkruntime as the C iterations runner is, so the dynamic loader
    does for it what it does for the runner whose start-up it stands for."""
    lib = libkruntime_path()
    # --no-as-needed: it calls nothing in libkruntime, and the linker would drop an unused library.
    return _compile_c(STARTUP_C,
                      [str(STARTUP_C.sources[0]), "-Wl,--no-as-needed", str(lib), f"-Wl,-rpath,{lib.parent}"],
                      shared=False)


def build(runner: str) -> None:
    """Build whatever ``runner`` needs compiled (no-op for interpreted runners)."""
    _runner(runner)
    if runner == "java":
        build_java()
    elif runner == "javascript":
        build_node_addon()
    elif runner == "ruby":
        build_ruby_ext()
    elif runner == "php":
        build_php_ext()


# What each name given to `coldrun build-runners` compiles (c and python: nothing; setup.py builds
# the C runner and its probe benchmark with the package).
BUILDABLE = ("c", "python", *KNOWN_LANGUAGE_RUNNERS, "startup")
_ARTEFACTS = {"java": (JAVA_CLASSES, JAVA_JNI, JAVA_PROBE), "javascript": (NODE_ADDON,), "ruby": (RUBY_EXT,),
              "php": (PHP_EXT,),
              "startup": (STARTUP_WRAPPER, STARTUP_C, STARTUP_CLASSES)}


def _build_startup() -> None:
    build_startup_wrapper()
    build_startup_c()
    if shutil.which("javac"):     # the Java startup runner is optional: only Java startup runs need it
        build_java_startup()


_BUILDERS = {"java": build_java, "javascript": build_node_addon, "ruby": build_ruby_ext, "php": build_php_ext,
             "startup": _build_startup}


@dataclass(frozen=True)
class BuildOutcome:
    name: str
    status: str        # "built", "up to date", "nothing to compile", "missing tool", "failed"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status not in ("missing tool", "failed")

    def line(self) -> str:
        return f"{self.name}: {self.status}" + (f": {self.detail}" if self.detail else "")


def _interpreter_note(name: str) -> str:
    """Says when the usual interpreter is missing (an experiment may still name another one)."""
    exe = LANGUAGE_RUNNERS[name].default_executable if name in LANGUAGE_RUNNERS else None
    if exe is None or shutil.which(exe):
        return ""
    return f"{exe} is not on PATH (Debian: apt-get install {DEBIAN_PACKAGES[name]})"


def build_runners(names: list[str] | None = None) -> list[BuildOutcome]:
    """Build the compiled parts of ``names`` (default: all of BUILDABLE); idempotent."""
    outcomes = []
    for name in names or BUILDABLE:
        if name not in BUILDABLE:
            raise ValueError(f"unknown runner {name!r}; build-runners knows {', '.join(BUILDABLE)}")
        artefacts = _ARTEFACTS.get(name, ())
        if not artefacts:
            outcomes.append(BuildOutcome(name, "nothing to compile", _interpreter_note(name)))
            continue
        before = [a.up_to_date() for a in artefacts]
        try:
            _BUILDERS[name]()
        except MissingTool as e:
            outcomes.append(BuildOutcome(name, "missing tool", str(e)))
            continue
        except RunnerError as e:
            outcomes.append(BuildOutcome(name, "failed", str(e)))
            continue
        after = [a.up_to_date() for a in artefacts]
        where = ", ".join(str(p) for p in after if p is not None)
        outcomes.append(BuildOutcome(name, "up to date" if before == after else "built", where))
    return outcomes


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
            f"Java benchmark {benchmark_path} must be compiled: run `coldrun build-java {path.parent}` "
            "and give the class name (as Krun) or its .class file"
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
    log_dir: str | None = None,
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
        classes, jni = JAVA_CLASSES.find(), JAVA_JNI.find()
        bench_class, bench_dir = _java_class_and_dir(benchmark_path)
        env["CLASSPATH"] = f"{classes}{os.pathsep}{bench_dir}"
        env[ENV_JNI_LIBRARY] = str(jni)
        argv = [exe, *vm_args, spec.runner_file, bench_class, *tail]
    else:
        if runner == "javascript":
            env[ENV_NODE_ADDON] = str(NODE_ADDON.find())
        elif runner == "ruby":
            env[ENV_RUBY_EXT] = str(RUBY_EXT.find())
        ext = PHP_EXT.up_to_date() if runner == "php" else None
        # PHP: the compiled binding when `coldrun build-runners php` could build it (php-dev), else FFI.
        load = ["-d", f"extension={ext}"] if ext else []
        argv = [exe, *load, *vm_args, str(RUNNERS_DIR / spec.runner_file), benchmark_path, *tail]

    if instrument:
        env[ENV_INSTRUMENT] = "1"
        if runner == "pypy":
            # PyPy writes its debug log to a per-process file (%d = pid) which the
            # runner reads back and splits per iteration; stderr stays the benchmark's.
            # Never in a shared directory such as /tmp: another user could plant a
            # symlink at the predictable name and have the runner's user write through it.
            if not log_dir or not os.path.isabs(log_dir):
                raise ValueError("PyPy's instrumentation log needs the runner's own directory (an absolute "
                                 "log_dir, e.g. its HOME), not a shared one")
            log_template = Path(log_dir) / "coldrun-pypylog-%d"
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
    if runner == STARTUP_NATIVE_RUNNER:
        default_exe, spec_runner_file = "", ""
    elif runner in STARTUP_ONLY_RUNNERS:
        default_exe, spec_runner_file = STARTUP_ONLY_RUNNERS[runner]
    else:
        spec = _runner(runner)
        default_exe, spec_runner_file = spec.default_executable, spec.startup_runner
    exe = executable or default_exe
    wrapper = STARTUP_WRAPPER.find()
    env = {ENV_RESULTS_FD: str(RESULTS_FD)}
    tail = [benchmark_path, str(iterations), str(param), "1" if debug else "0"]
    if runner == STARTUP_NATIVE_RUNNER:
        argv = [str(wrapper), str(STARTUP_C.find()), *tail]
    elif runner == "java":
        env["CLASSPATH"] = f"{STARTUP_CLASSES.find()}{os.pathsep}{JAVA_CLASSES.find()}"
        env[ENV_JNI_LIBRARY] = str(JAVA_JNI.find())
        argv = [str(wrapper), exe, *vm_args, spec_runner_file, *tail]
    else:
        argv = [str(wrapper), exe, *vm_args, str(RUNNERS_DIR / spec_runner_file), *tail]
    return argv, env


def probe_benchmark(runner: str) -> Path:
    """The trivial benchmark that proves ``runner`` can run (supervisor/launch/runner_probe.py)."""
    if runner == "c":
        built = PROBE_DIR / "bench.so"
        if not built.is_file():
            raise RunnerNotBuilt(f"{built} does not exist; reinstall coldrun (in a checkout: "
                                 "`python setup.py build_ext --inplace`)")
        return built
    if runner == "java":
        return JAVA_PROBE.find() / "KrunEntry.class"
    name = "bench.py" if runner == "python" else benchmark_filename(runner)
    return PROBE_DIR / name


def main(argv: list[str] | None = None) -> int:
    """`coldrun build-runners` (also `python -m iteration_runners.languages build`)."""
    parser = argparse.ArgumentParser(prog="python -m iteration_runners.languages")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the JNI glue, Node.js addon, startup wrapper and probe benchmarks")
    b.add_argument("runners", nargs="*", help=f"default: all of {', ' .join(BUILDABLE)}")
    args = parser.parse_args(argv)
    return report_build(args.runners)


def report_build(names: list[str]) -> int:
    """Build, print one line per name; non-zero when a name asked for explicitly cannot be built,
    or when any build (not a missing tool) fails."""
    try:
        outcomes = build_runners(names)
    except ValueError as exc:
        print(f"coldrun: {exc}", file=sys.stderr)
        return 2
    for o in outcomes:
        if o.ok:
            print(o.line())
        else:
            print(f"coldrun: {o.line()}", file=sys.stderr)
    bad = [o for o in outcomes if o.status == "failed" or (names and not o.ok)]
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
