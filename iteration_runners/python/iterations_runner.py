"""coldrun's Python iteration runner (wire protocol v1, see ../PROTOCOL.md).

    <python> iterations_runner.py <benchmark.py> <iterations> <param> <debug 0|1>

Imports the benchmark file, calls its ``run_iter(param)`` <iterations> times,
each bracketed by libkruntime's krun_measure(0) / krun_measure(1) (counters
outermost, wall clock innermost), keeps the measurements in preallocated
lists, and at the end writes one JSON document to the results channel (fd 3,
or $COLDRUN_RESULTS_FD).

Runs on any Python 3 interpreter, including one that is not coldrun's venv
and PyPy, and on Python 2.7 for Krun-era benchmarks (through ctypes):
libkruntime is found through absolute paths in the environment
($COLDRUN_KRUNTIME_EXTENSION for CPython's extension, $COLDRUN_LIBKRUNTIME for
libkruntime.so through cffi or ctypes), never through coldrun's sys.path.
Only the standard library is used here.

With COLDRUN_LOAD_ONLY=1 it stops once the benchmark is imported and its
run_iter found, and writes the load-only document instead (PROTOCOL.md).

Exit status: 0 document written; 1 the benchmark raised (traceback on
stderr, no document); 2 bad usage or setup, including a Python 2 benchmark
run by Python 3 (the last stderr line says so, names the interpreter and the
fix); 3 the results channel failed.
"""

import json
import os
import re
import sys
import traceback

PROTOCOL_VERSION = 1
EXIT_BENCHMARK_FAILED = 1
EXIT_USAGE = 2
EXIT_CHANNEL = 3
USAGE = "usage: iterations_runner.py <benchmark.py> <iterations> <param> <debug 0|1>"


LOAD_ONLY_DOCUMENT = {"protocol_version": PROTOCOL_VERSION, "load_only": True}


def load_only():
    return os.environ.get("COLDRUN_LOAD_ONLY") == "1"


def report_benchmark_error(exc):
    """The runner's last stderr line: the benchmark's exception in Python's words (the traceback is above)."""
    said = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if isinstance(exc, SyntaxError):     # Python puts the file and line on lines of their own
        said += " (%s line %s)" % (os.path.basename(exc.filename or "?"), exc.lineno)
    sys.stderr.write("iterations_runner.py: error: the benchmark raised %s\n" % said)


def fail(message, status=EXIT_USAGE):
    sys.stderr.write("iterations_runner.py: error: %s\n" % message)
    sys.exit(status)


def parse_args(argv):
    if len(argv) != 5:
        fail("expected 4 arguments, got %d\n%s" % (len(argv) - 1, USAGE))
    benchmark, iterations, param, debug = argv[1:]
    try:
        iterations = int(iterations)
    except ValueError:
        fail("iterations %r is not an integer\n%s" % (iterations, USAGE))
    if iterations < 1:
        fail("iterations must be at least 1, got %d" % iterations)
    try:
        param = int(param)
    except ValueError:
        fail("param %r is not an integer\n%s" % (param, USAGE))
    if debug not in ("0", "1"):
        fail("debug flag must be 0 or 1, got %r\n%s" % (debug, USAGE))
    if not os.path.isfile(benchmark):
        fail("benchmark file %s does not exist" % benchmark)
    return os.path.abspath(benchmark), iterations, param, debug == "1"


def take_results_channel():
    """Move the results fd out of the benchmark's way (close-on-exec, high number)."""
    name = os.environ.get("COLDRUN_RESULTS_FD", "3")
    try:
        fd = int(name)
    except ValueError:
        fail("COLDRUN_RESULTS_FD=%r is not a file descriptor number" % name)
    try:
        os.fstat(fd)
    except OSError:
        fail("results channel fd %d is not open; the supervisor passes it (see PROTOCOL.md)" % fd)
    private = os.dup(fd)  # non-inheritable (PEP 446): child processes never see it
    if sys.version_info[0] < 3:  # Python 2's dup is inheritable
        import fcntl

        fcntl.fcntl(private, fcntl.F_SETFD, fcntl.fcntl(private, fcntl.F_GETFD) | fcntl.FD_CLOEXEC)
    os.close(fd)
    return private


# -- libkruntime bindings: same names and meaning in all three --------------

KRUN_CDEF = """
void krun_init(void);
void krun_done(void);
void krun_measure(int);
int64_t krun_wallclock_delta_ns(void);
int krun_get_num_cores(void);
const char *krun_counters_unavailable_reason(void);
uint64_t krun_core_cycles_delta(int);
uint64_t krun_aperf_delta(int);
uint64_t krun_mperf_delta(int);
void krun_timeline_reserve(long);
const char *krun_timeline_json(void);
"""


def load_extension(path):
    """CPython: the _kruntime extension, if built for this interpreter's ABI."""
    import importlib.machinery
    import importlib.util

    if not any(path.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES):
        return None
    spec = importlib.util.spec_from_file_location("_kruntime", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CffiBinding(object):
    """PyPy (and CPython with cffi): libkruntime.so in ABI mode."""

    def __init__(self, path):
        import cffi

        self.ffi = cffi.FFI()
        self.ffi.cdef(KRUN_CDEF)
        self.lib = self.ffi.dlopen(path)
        for name in ("krun_init", "krun_done", "krun_measure", "krun_wallclock_delta_ns",
                     "krun_get_num_cores", "krun_core_cycles_delta", "krun_aperf_delta",
                     "krun_mperf_delta", "krun_timeline_reserve"):
            setattr(self, name, getattr(self.lib, name))

    def krun_timeline_json(self):
        return self.ffi.string(self.lib.krun_timeline_json()).decode("ascii")

    def krun_counters_unavailable_reason(self):
        reason = self.lib.krun_counters_unavailable_reason()
        return None if reason == self.ffi.NULL else self.ffi.string(reason).decode("utf-8", "replace")


class CtypesBinding(object):
    """Last resort: libkruntime.so through ctypes (slower calls, same numbers)."""

    def __init__(self, path):
        import ctypes

        lib = ctypes.CDLL(path)
        sig = {
            "krun_init": (None, []),
            "krun_done": (None, []),
            "krun_measure": (None, [ctypes.c_int]),
            "krun_wallclock_delta_ns": (ctypes.c_int64, []),
            "krun_get_num_cores": (ctypes.c_int, []),
            "krun_counters_unavailable_reason": (ctypes.c_char_p, []),
            "krun_core_cycles_delta": (ctypes.c_uint64, [ctypes.c_int]),
            "krun_aperf_delta": (ctypes.c_uint64, [ctypes.c_int]),
            "krun_mperf_delta": (ctypes.c_uint64, [ctypes.c_int]),
            "krun_timeline_reserve": (None, [ctypes.c_long]),
            "krun_timeline_json": (ctypes.c_char_p, []),
        }
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
            wrapped = name in ("krun_counters_unavailable_reason", "krun_timeline_json")
            setattr(self, "_" + name if wrapped else name, fn)

    def krun_timeline_json(self):
        return self._krun_timeline_json().decode("ascii")

    def krun_counters_unavailable_reason(self):
        reason = self._krun_counters_unavailable_reason()
        return None if reason is None else reason.decode("utf-8", "replace")


def load_libkruntime():
    """Returns (binding, description); exits with a clear error if none loads."""
    tried = []
    ext = os.environ.get("COLDRUN_KRUNTIME_EXTENSION")
    implementation = getattr(sys, "implementation", None)  # Python 2 has none, nor a loadable extension
    if ext and implementation is not None and implementation.name == "cpython":
        try:
            module = load_extension(ext)
            if module is not None:
                return module, "extension " + ext
            tried.append("%s: not built for this interpreter's ABI" % ext)
        except ImportError as e:
            tried.append("%s: %s" % (ext, e))
    lib = os.environ.get("COLDRUN_LIBKRUNTIME")
    if lib:
        try:
            return CffiBinding(lib), "cffi %s %s" % (lib, tried)
        except ImportError:
            tried.append("cffi: not installed")
        except OSError as e:
            tried.append("cffi %s: %s" % (lib, e))
        try:
            return CtypesBinding(lib), "ctypes %s %s" % (lib, tried)
        except (ImportError, OSError) as e:
            tried.append("ctypes %s: %s" % (lib, e))
    if not tried:
        tried.append("neither COLDRUN_KRUNTIME_EXTENSION nor COLDRUN_LIBKRUNTIME is set")
    fail("cannot load libkruntime (%s)" % "; ".join(tried))


# -- a Python 2 benchmark run by Python 3 -------------------------------------

# What Python 3 says when it meets Python 2 code.
PYTHON2_SYNTAX = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'",
                  "multiple exception types must be parenthesized", "exception group must be parenthesized",
                  "leading zeros in decimal integer literals")  # "exception group": PyPy 3.9's wording
PYTHON2_NAMES = ("xrange", "unicode", "basestring", "long", "raw_input", "unichr", "execfile", "reduce", "file",
                 "cmp", "buffer", "apply", "intern", "coerce", "reload")
PYTHON2_ATTRIBUTES = ("iteritems", "iterkeys", "itervalues", "has_key")
PYTHON2_MODULES = ("cPickle", "cStringIO", "StringIO", "Queue", "ConfigParser", "urllib2", "__builtin__",
                   "HTMLParser", "httplib", "thread", "commands", "sets")


def python2_evidence(exc):
    """The exception line that shows the benchmark is Python 2 code, or None."""
    if sys.version_info[0] < 3:
        return None
    text = str(exc)
    if isinstance(exc, SyntaxError):
        found = any(s in (exc.msg or "") for s in PYTHON2_SYNTAX)
        where = " (%s line %s)" % (os.path.basename(exc.filename or "?"), exc.lineno)
        return "SyntaxError: %s%s" % (exc.msg, where) if found else None
    if isinstance(exc, NameError):
        found = re.search(r"name '(%s)' is not defined" % "|".join(PYTHON2_NAMES), text)
    elif isinstance(exc, AttributeError):
        found = re.search(r"object has no attribute '(%s)'" % "|".join(PYTHON2_ATTRIBUTES), text)
    elif isinstance(exc, ImportError):
        found = re.search(r"No module named '(%s)'" % "|".join(PYTHON2_MODULES), text)
    else:
        found = None
    return "%s: %s" % (type(exc).__name__, text) if found else None


def report_python2(benchmark, exc):
    """If ``exc`` says the benchmark is Python 2 code: one stderr line saying so, which interpreter ran
    it and the fix, then exit 2 (setup: every execution would fail alike).  Otherwise return."""
    evidence = python2_evidence(exc)
    if evidence is None:
        return
    version = "%s %s" % (sys.implementation.name, ".".join(map(str, sys.version_info[:3])))
    if sys.implementation.name == "pypy":
        fix = ("a PyPy 2 (in its [vms.NAME] table: runner = \"pypy\", executable = \"/opt/pypy2.7/bin/pypy\"; "
               "coldrun's pypy runner runs on PyPy 2)")
    else:
        fix = ("a Python 2.7 interpreter (in its [vms.NAME] table: runner = \"python\", executable = "
               "\"/usr/local/bin/python2.7\"; coldrun's python runner runs on 2.7; Debian 12 ships none: README, "
               "\"Python 2\")")
    fail("%s looks like Python 2 (%s), but %s (%s) ran it; point the VM at %s or port the benchmark to "
         "Python 3" % (benchmark, evidence, sys.executable, version, fix))


# -- the measurement loop ----------------------------------------------------


def _import_python2(path):
    """Python 2.7 has no importlib.util: imp loads the file as module "bench" the same way."""
    import imp

    return imp.load_source("bench", path)


def load_benchmark(path):
    """Import the benchmark file as module "bench"; its directory goes first on sys.path."""
    runner_dir = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == runner_dir:
        sys.path[0] = os.path.dirname(path)  # the runner's own dir is no business of the benchmark
    else:  # e.g. under -I or -P, where the script's dir is not on sys.path
        sys.path.insert(0, os.path.dirname(path))
    if sys.version_info[0] < 3:
        module = _import_python2(path)
    else:
        import importlib.util

        spec = importlib.util.spec_from_file_location("bench", path)
        if spec is None:
            fail("cannot import benchmark %s (not a Python file?)" % path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench"] = module
        spec.loader.exec_module(module)
    run_iter = getattr(module, "run_iter", None)
    if not callable(run_iter):
        fail("benchmark %s has no run_iter(param) function" % path)
    return run_iter


def run_iterations(krun, run_iter, iterations, param, debug):
    num_cores = krun.krun_get_num_cores()
    wallclock_ns = [0] * iterations
    cycles = [[0] * iterations for _ in range(num_cores)]
    aperf = [[0] * iterations for _ in range(num_cores)]
    mperf = [[0] * iterations for _ in range(num_cores)]
    measure = krun.krun_measure
    wallclock_delta_ns = krun.krun_wallclock_delta_ns
    cores = range(num_cores)
    write = sys.stderr.write
    krun.krun_timeline_reserve(iterations)

    for i in range(iterations):
        if debug:
            write("[iterations_runner.py] iteration %d/%d\n" % (i + 1, iterations))
        # Listing 1: nothing but the benchmark between the two measurements.
        measure(0)
        run_iter(param)
        measure(1)
        wallclock_ns[i] = wallclock_delta_ns()
        for c in cores:
            cycles[c][i] = krun.krun_core_cycles_delta(c)
            aperf[c][i] = krun.krun_aperf_delta(c)
            mperf[c][i] = krun.krun_mperf_delta(c)
        if debug:
            write("[iterations_runner.py] iteration %d/%d took %.6f s\n"
                  % (i + 1, iterations, wallclock_ns[i] / 1e9))

    document = {
        "protocol_version": PROTOCOL_VERSION,
        "wallclock_times": [ns / 1e9 for ns in wallclock_ns],
        "core_cycle_counts": cycles,
        "aperf_counts": aperf,
        "mperf_counts": mperf,
        "counters": {
            "available": num_cores > 0,
            "reason": None if num_cores > 0 else krun.krun_counters_unavailable_reason(),
        },
    }
    # Iteration start/end (and barrier waits) as libkruntime recorded them, exact ints.
    document.update(json.loads("{%s}" % krun.krun_timeline_json()))
    return document


def write_document(fd, document):
    # Serialise first: a failure must leave no partial document behind.
    text = json.dumps(document, allow_nan=False)
    try:
        with os.fdopen(fd, "w") as channel:
            channel.write(text)
    except (OSError, ValueError) as e:
        fail("writing the results document failed: %s" % e, EXIT_CHANNEL)


def main(argv):
    benchmark, iterations, param, debug = parse_args(argv)
    channel = take_results_channel()
    krun, binding = load_libkruntime()
    if debug:
        sys.stderr.write("[iterations_runner.py] libkruntime via %s\n" % binding)
    try:
        run_iter = load_benchmark(benchmark)
        if load_only():
            write_document(channel, LOAD_ONLY_DOCUMENT)
            return 0
        krun.krun_init()
        document = run_iterations(krun, run_iter, iterations, param, debug)
    except SystemExit as e:
        if e.code in (None, 0):  # a benchmark must not end the run "successfully" early
            sys.stderr.write("iterations_runner.py: error: the benchmark called sys.exit(%r)\n" % (e.code,))
            sys.exit(EXIT_BENCHMARK_FAILED)
        raise
    except BaseException as e:
        traceback.print_exc()
        report_python2(benchmark, e)
        report_benchmark_error(e)
        sys.exit(EXIT_BENCHMARK_FAILED)
    krun.krun_done()
    write_document(channel, document)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
