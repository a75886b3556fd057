"""coldrun iteration runner for PyPy (and any Python with cffi), PyPy 3 and PyPy 2 alike.

usage: pypy3 iterations_runner.py <benchmark.py> <iterations> <param> <debug 0|1>

Python 2 (the paper's PyPy was PyPy 2, as Krun's runner was Python 2): the CPython runner it shares code
with is loaded with imp, and the 64-bit arrays use Python 2's 'l'/'L' (8 bytes where PyPy 2 runs, LP64).

Exit status (PROTOCOL.md): 0 document written; 1 the benchmark failed; 2 bad
usage or setup; 3 the results channel failed.
Loads the benchmark as Krun did (a module whose ``run_iter(param)`` is one
in-process iteration), measures each iteration with libkruntime through cffi
in ABI mode (no compiled extension: PyPy cannot load the CPython one), keeps
results in preallocated arrays and writes one protocol-1 JSON document to the
results fd (contract A, iteration_runners/PROTOCOL.md).

Instrumentation (COLDRUN_INSTRUMENT=1, with PYPYLOG set by the runner
command to a per-pid file): PyPy's GC and JIT debug sections are read back
after the run and split per iteration by PyPy's own debug timestamps.
"""

import array
import json
import os
import sys
import traceback

CDEF = """
    void krun_init(void);
    void krun_done(void);
    void krun_measure(int mdata_idx);
    int krun_get_num_cores(void);
    const char *krun_counters_unavailable_reason(void);
    int64_t krun_wallclock_delta_ns(void);
    uint64_t krun_core_cycles_delta(int core);
    uint64_t krun_aperf_delta(int core);
    uint64_t krun_mperf_delta(int core);
    void krun_timeline_reserve(long iterations);
    const char *krun_timeline_json(void);
"""


def _python_runner():
    """The CPython runner's module: argument parsing, the results channel,
    benchmark loading and the document write are the same for PyPy."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python", "iterations_runner.py")
    if sys.version_info[0] < 3:
        import imp
        return imp.load_source("coldrun_python_runner", path)
    import importlib.util
    spec = importlib.util.spec_from_file_location("coldrun_python_runner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_common = _python_runner()
# 64-bit array typecodes: Python 2's array has no 'q'/'Q'; its 'l'/'L' are 64-bit on LP64 systems.
INT64, UINT64 = ("q", "Q") if sys.version_info[0] >= 3 else ("l", "L")
EXIT_BENCHMARK_FAILED = _common.EXIT_BENCHMARK_FAILED
fail = _common.fail
parse_args = _common.parse_args
take_results_channel = _common.take_results_channel
load_benchmark = _common.load_benchmark
write_results = _common.write_document


# ---- instrumentation: PYPYLOG parsing ------------------------------------


def pypylog_path():
    """The file PyPy is logging to (the runner command puts %d = pid in it)."""
    value = os.environ.get("PYPYLOG", "")
    if ":" not in value:
        return None
    target = value.split(":", 1)[1]
    if target in ("", "-"):
        return None
    return target.replace("%d", str(os.getpid()))


def parse_pypylog(lines):
    """Event trees [name, start, stop, children] from '[hex] {name' / '[hex] name}' lines."""
    roots = []
    stack = []
    for line in lines:
        if not line.startswith("[") or "] " not in line:
            continue
        stamp, _, rest = line.partition("] ")
        try:
            ts = int(stamp[1:], 16)
        except ValueError:
            continue
        rest = rest.rstrip("\n")
        if rest.startswith("{"):
            node = [rest[1:], ts, None, []]
            (stack[-1][3] if stack else roots).append(node)
            stack.append(node)
        elif rest.endswith("}") and stack and stack[-1][0] == rest[:-1]:
            stack.pop()[2] = ts
    return roots


def split_per_iteration(roots, loop_start, boundaries):
    """Assign each top-level event to the iteration whose end boundary follows it.

    Events before the loop (VM and benchmark start-up) belong to no iteration.
    """
    per_iter = [[] for _ in boundaries]
    i = 0
    for node in roots:
        if node[1] < loop_start:
            continue
        while i < len(boundaries) and node[1] > boundaries[i]:
            i += 1
        if i == len(boundaries):
            break  # after the last iteration (krun_done, exit): not an iteration's cost
        per_iter[i].append(node)
    return per_iter


def summarise(per_iter):
    gc_ticks, jit_ticks = [], []
    for nodes in per_iter:
        gc = jit = 0
        for name, start, stop, _ in nodes:
            if stop is None:
                continue
            if name.startswith("gc-"):
                gc += stop - start
            elif name in ("jit-tracing", "jit-backend"):
                jit += stop - start
        gc_ticks.append(gc)
        jit_ticks.append(jit)
    return gc_ticks, jit_ticks


def instrumentation_document(loop_start, boundaries):
    import __pypy__

    path = pypylog_path()
    if path is None:
        fail("instrumentation needs PYPYLOG=<categories>:<file> (set by the runner command)")
    __pypy__.debug_flush()
    with open(path) as f:
        roots = parse_pypylog(f)
    os.unlink(path)
    per_iter = split_per_iteration(roots, loop_start, boundaries)
    gc_ticks, jit_ticks = summarise(per_iter)
    return {
        "vm": "pypy",
        "timestamp_unit": __pypy__.debug_get_timestamp_unit(),
        "raw_vm_events": per_iter,
        "gc_times": gc_ticks,
        "jit_times": jit_ticks,
    }


# ---- main ------------------------------------------------------------------


def main():
    benchmark, iters, param, debug = parse_args(sys.argv)
    instrument = os.environ.get("COLDRUN_INSTRUMENT") == "1"
    results_fd = take_results_channel()

    import cffi  # here, so the log parsing above can be unit-tested without cffi

    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    try:
        lib = ffi.dlopen(os.environ.get("COLDRUN_LIBKRUNTIME") or "libkruntime.so")
    except OSError as exc:
        fail("cannot load libkruntime: %s" % exc)
    krun_measure = lib.krun_measure
    wallclock_delta_ns = lib.krun_wallclock_delta_ns
    cycles_delta, aperf_delta, mperf_delta = (
        lib.krun_core_cycles_delta, lib.krun_aperf_delta, lib.krun_mperf_delta)

    run_iter = load_benchmark(benchmark)
    if _common.load_only():
        write_results(results_fd, _common.LOAD_ONLY_DOCUMENT)
        return

    lib.krun_init()
    num_cores = lib.krun_get_num_cores()
    reason = None
    if num_cores == 0:
        raw = lib.krun_counters_unavailable_reason()
        reason = ffi.string(raw).decode("utf-8", "replace") if raw != ffi.NULL else "unknown"

    # Preallocated: no allocation that grows with the iteration count in the loop.
    wallclock_ns = array.array(INT64, [0]) * iters
    cycles = [array.array(UINT64, [0]) * iters for _ in range(num_cores)]
    aperf = [array.array(UINT64, [0]) * iters for _ in range(num_cores)]
    mperf = [array.array(UINT64, [0]) * iters for _ in range(num_cores)]
    boundaries = [0] * iters if instrument else None
    lib.krun_timeline_reserve(iters)
    loop_start = 0
    if instrument:
        from __pypy__ import debug_read_timestamp
        loop_start = debug_read_timestamp()

    for i in range(iters):
        if debug:
            sys.stderr.write("[iterations_runner.py] iteration %d/%d\n" % (i + 1, iters))
        krun_measure(0)
        run_iter(param)
        krun_measure(1)
        wallclock_ns[i] = wallclock_delta_ns()
        for core in range(num_cores):
            cycles[core][i] = cycles_delta(core)
            aperf[core][i] = aperf_delta(core)
            mperf[core][i] = mperf_delta(core)
        if instrument:
            boundaries[i] = debug_read_timestamp()

    lib.krun_done()
    timeline = json.loads("{%s}" % ffi.string(lib.krun_timeline_json()).decode("ascii"))

    document = {
        "protocol_version": 1,
        "wallclock_times": [ns / 1e9 for ns in wallclock_ns],
        "core_cycle_counts": [list(a) for a in cycles],
        "aperf_counts": [list(a) for a in aperf],
        "mperf_counts": [list(a) for a in mperf],
        "counters": {"available": num_cores > 0, "reason": reason},
    }
    document.update(timeline)  # iteration start/end (and barrier waits), exact ints
    if instrument:
        document["instrumentation"] = instrumentation_document(loop_start, boundaries)
    write_results(results_fd, document)


if __name__ == "__main__":
    try:
        main()
    except SystemExit as exc:
        # Our own fail() exits with 2 or 3; a benchmark calling sys.exit(0) must
        # not look like success.
        if exc.code in (0, None):
            sys.stderr.write("iterations_runner.py: error: the benchmark called sys.exit(%r)\n" % exc.code)
            sys.exit(EXIT_BENCHMARK_FAILED)
        raise
    except BaseException as exc:
        traceback.print_exc()
        _common.report_python2(sys.argv[1], exc)   # exits 2 when the benchmark is Python 2 code
        _common.report_benchmark_error(exc)
        sys.exit(EXIT_BENCHMARK_FAILED)
