/*
 * libkruntime._kruntime: CPython binding over libkruntime.
 *
 * Mirrors the C API name for name.  Argument errors a caller can make from
 * Python (bad index, bad core, not initialised) raise ValueError/RuntimeError
 * here instead of reaching the C library's exit(1); measurement failures
 * (counter going backwards, precision loss) still exit like Krun's library.
 * krun_measure is METH_O and does nothing but the checks and the C call: it
 * sits inside the timed region of every in-process iteration.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "libkruntime.h"

static int initialised;

static int need_init(void)
{
    if (!initialised) {
        PyErr_SetString(PyExc_RuntimeError, "libkruntime: call krun_init() first");
        return -1;
    }
    return 0;
}

static int parse_idx(PyObject *arg, int *out)
{
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v != 0 && v != 1) {
        PyErr_Format(PyExc_ValueError, "libkruntime: mdata index %ld is not 0 (before) or 1 (after)", v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int check_core(int core)
{
    int n = krun_get_num_cores();
    if (core < 0 || core >= n) {
        if (n == 0)
            PyErr_Format(PyExc_ValueError, "libkruntime: per-core counters are unavailable: %s",
                         krun_counters_unavailable_reason());
        else
            PyErr_Format(PyExc_ValueError, "libkruntime: core %d out of range 0..%d", core, n - 1);
        return -1;
    }
    return 0;
}

static PyObject *py_init(PyObject *self, PyObject *unused)
{
    if (initialised) {
        PyErr_SetString(PyExc_RuntimeError, "libkruntime: krun_init() called twice without krun_done()");
        return NULL;
    }
    krun_init();
    initialised = 1;
    Py_RETURN_NONE;
}

static PyObject *py_done(PyObject *self, PyObject *unused)
{
    krun_done();
    initialised = 0;
    Py_RETURN_NONE;
}

static PyObject *py_measure(PyObject *self, PyObject *arg)
{
    int idx;
    if (!initialised)
        return need_init(), NULL;
    if (parse_idx(arg, &idx) < 0)
        return NULL;
    krun_measure(idx);
    Py_RETURN_NONE;
}

static PyObject *py_get_wallclock(PyObject *self, PyObject *arg)
{
    int idx;
    if (need_init() < 0 || parse_idx(arg, &idx) < 0)
        return NULL;
    return PyFloat_FromDouble(krun_get_wallclock(idx));
}

static PyObject *py_get_wallclock_ns(PyObject *self, PyObject *arg)
{
    int idx;
    if (need_init() < 0 || parse_idx(arg, &idx) < 0)
        return NULL;
    return PyLong_FromLongLong(krun_get_wallclock_ns(idx));
}

static PyObject *py_wallclock_delta_ns(PyObject *self, PyObject *unused)
{
    if (need_init() < 0)
        return NULL;
    return PyLong_FromLongLong(krun_wallclock_delta_ns());
}

static PyObject *py_get_num_cores(PyObject *self, PyObject *unused)
{
    if (need_init() < 0)
        return NULL;
    return PyLong_FromLong(krun_get_num_cores());
}

static PyObject *py_unavailable_reason(PyObject *self, PyObject *unused)
{
    if (need_init() < 0)
        return NULL;
    const char *r = krun_counters_unavailable_reason();
    if (r == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(r);
}

static PyObject *py_counters_source(PyObject *self, PyObject *unused)
{
    if (need_init() < 0)
        return NULL;
    return PyUnicode_FromString(krun_counters_source());
}

typedef uint64_t (*getter_u64)(int, int);
typedef double (*getter_dbl)(int, int);
typedef uint64_t (*delta_u64)(int);

static int parse_idx_core(PyObject *const *args, Py_ssize_t nargs, int *idx, int *core)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "expected (mdata_idx, core)");
        return -1;
    }
    if (need_init() < 0 || parse_idx(args[0], idx) < 0)
        return -1;
    long c = PyLong_AsLong(args[1]);
    if (c == -1 && PyErr_Occurred())
        return -1;
    if (c < INT_MIN || c > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "libkruntime: core %ld out of range", c);
        return -1;
    }
    *core = (int)c;
    return check_core(*core);
}

#define U64_GETTER(pyname, cfn)                                                         \
    static PyObject *pyname(PyObject *self, PyObject *const *args, Py_ssize_t nargs)    \
    {                                                                                   \
        int idx, core;                                                                  \
        if (parse_idx_core(args, nargs, &idx, &core) < 0)                               \
            return NULL;                                                                \
        return PyLong_FromUnsignedLongLong(cfn(idx, core));                             \
    }
#define DBL_GETTER(pyname, cfn)                                                         \
    static PyObject *pyname(PyObject *self, PyObject *const *args, Py_ssize_t nargs)    \
    {                                                                                   \
        int idx, core;                                                                  \
        if (parse_idx_core(args, nargs, &idx, &core) < 0)                               \
            return NULL;                                                                \
        return PyFloat_FromDouble(cfn(idx, core));                                      \
    }
#define DELTA(pyname, cfn)                                                              \
    static PyObject *pyname(PyObject *self, PyObject *arg)                              \
    {                                                                                   \
        if (need_init() < 0)                                                            \
            return NULL;                                                                \
        long c = PyLong_AsLong(arg);                                                    \
        if (c == -1 && PyErr_Occurred())                                                \
            return NULL;                                                                \
        if (c < 0 || c > INT_MAX || check_core((int)c) < 0) {                            \
            if (!PyErr_Occurred())                                                      \
                PyErr_Format(PyExc_ValueError, "libkruntime: core %ld out of range", c); \
            return NULL;                                                                \
        }                                                                               \
        return PyLong_FromUnsignedLongLong(cfn((int)c));                                 \
    }

U64_GETTER(py_get_core_cycles, krun_get_core_cycles)
U64_GETTER(py_get_aperf, krun_get_aperf)
U64_GETTER(py_get_mperf, krun_get_mperf)
DBL_GETTER(py_get_core_cycles_double, krun_get_core_cycles_double)
DBL_GETTER(py_get_aperf_double, krun_get_aperf_double)
DBL_GETTER(py_get_mperf_double, krun_get_mperf_double)
DELTA(py_core_cycles_delta, krun_core_cycles_delta)
DELTA(py_aperf_delta, krun_aperf_delta)
DELTA(py_mperf_delta, krun_mperf_delta)

static PyObject *py_clock_gettime_monotonic(PyObject *self, PyObject *unused)
{
    return PyFloat_FromDouble(krun_clock_gettime_monotonic());
}

static PyObject *py_timeline_reserve(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError, "libkruntime: cannot reserve %ld iterations", n);
    if (need_init() < 0)
        return NULL;
    krun_timeline_reserve(n);
    Py_RETURN_NONE;
}

static PyObject *py_timeline_json(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(krun_timeline_json());
}

/* Supervisor side of the duet barrier: OSError with libkruntime's one-line reason. */
static PyObject *py_duet_create(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"name", "mode", NULL};
    const char *name;
    unsigned int mode = 0600;
    char err[256];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|I:krun_duet_create", keywords, &name, &mode))
        return NULL;
    if (krun_duet_create(name, mode, err, sizeof(err)) != 0)
        return PyErr_Format(PyExc_OSError, "libkruntime: %s", err);
    Py_RETURN_NONE;
}

static PyObject *py_duet_remove(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    char err[256];
    if (name == NULL)
        return NULL;
    if (krun_duet_remove(name, err, sizeof(err)) != 0)
        return PyErr_Format(PyExc_OSError, "libkruntime: %s", err);
    Py_RETURN_NONE;
}

static PyObject *py_duet_in_use(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(krun_duet_in_use());
}

#define NOARGS(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_NOARGS, doc}
#define ONEARG(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_O, doc}
#define FAST(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, doc}

static PyMethodDef methods[] = {
    NOARGS("krun_init", py_init, "Open the clock and counter sources."),
    NOARGS("krun_done", py_done, "Close the counter sources."),
    ONEARG("krun_measure", py_measure, "Take sample 0 (before an iteration) or 1 (after)."),
    ONEARG("krun_get_wallclock", py_get_wallclock, "Wall clock of sample idx, seconds."),
    ONEARG("krun_get_wallclock_ns", py_get_wallclock_ns, "Wall clock of sample idx, integer ns."),
    NOARGS("krun_wallclock_delta_ns", py_wallclock_delta_ns, "Sample 1 minus sample 0, ns."),
    NOARGS("krun_get_num_cores", py_get_num_cores, "Cores with per-core counters (0 = none)."),
    NOARGS("krun_counters_unavailable_reason", py_unavailable_reason, "Why counters are missing, or None."),
    NOARGS("krun_counters_source", py_counters_source, "Counter backend name."),
    FAST("krun_get_core_cycles", py_get_core_cycles, "(idx, core) -> int"),
    FAST("krun_get_aperf", py_get_aperf, "(idx, core) -> int"),
    FAST("krun_get_mperf", py_get_mperf, "(idx, core) -> int"),
    FAST("krun_get_core_cycles_double", py_get_core_cycles_double, "(idx, core) -> float"),
    FAST("krun_get_aperf_double", py_get_aperf_double, "(idx, core) -> float"),
    FAST("krun_get_mperf_double", py_get_mperf_double, "(idx, core) -> float"),
    ONEARG("krun_core_cycles_delta", py_core_cycles_delta, "core -> cycles during the iteration"),
    ONEARG("krun_aperf_delta", py_aperf_delta, "core -> APERF delta"),
    ONEARG("krun_mperf_delta", py_mperf_delta, "core -> MPERF delta"),
    ONEARG("krun_timeline_reserve", py_timeline_reserve, "Record start/end (and barrier wait) of n iterations."),
    NOARGS("krun_timeline_json", py_timeline_json, "The recorded timeline as JSON members (\"\" if none)."),
    {"krun_duet_create", (PyCFunction)(void (*)(void))py_duet_create, METH_VARARGS | METH_KEYWORDS,
     "krun_duet_create(name, mode=0o600): a fresh duet barrier in POSIX shared memory (replaces one of that name)."},
    ONEARG("krun_duet_remove", py_duet_remove, "Remove a duet barrier (no error if there is none)."),
    NOARGS("krun_duet_in_use", py_duet_in_use, "True when this process is attached to a duet barrier."),
    NOARGS("krun_clock_gettime_monotonic", py_clock_gettime_monotonic, "Current wall clock, seconds."),
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "libkruntime._kruntime",
    "CPython binding over libkruntime (in-process iteration timing).", -1, methods,
};

PyMODINIT_FUNC PyInit__kruntime(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "PROTOCOL_VERSION", KRUN_PROTOCOL_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
